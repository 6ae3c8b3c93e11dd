/* Single-source shortest paths by Dijkstra's algorithm with a binary heap
 * on a random graph in adjacency arrays, from many sources. */
#include "common.h"

static int n, m;
static int *head, *next, *to, *w, *dist, *heap, *pos;
static int hn;

static void sift_up(int i) {
	while (i > 0) {
		int p = (i - 1) / 2;
		if (dist[heap[p]] <= dist[heap[i]])
			break;
		int t = heap[p];
		heap[p] = heap[i];
		heap[i] = t;
		pos[heap[p]] = p;
		pos[heap[i]] = i;
		i = p;
	}
}

static void sift_down(int i) {
	for (;;) {
		int l = 2 * i + 1, r = l + 1, s = i;
		if (l < hn && dist[heap[l]] < dist[heap[s]])
			s = l;
		if (r < hn && dist[heap[r]] < dist[heap[s]])
			s = r;
		if (s == i)
			return;
		int t = heap[s];
		heap[s] = heap[i];
		heap[i] = t;
		pos[heap[s]] = s;
		pos[heap[i]] = i;
		i = s;
	}
}

static long long run(int src) {
	for (int i = 0; i < n; i++) {
		dist[i] = 0x7fffffff;
		pos[i] = -1;
	}
	hn = 0;
	dist[src] = 0;
	heap[hn] = src;
	pos[src] = hn++;
	long long sum = 0;
	while (hn > 0) {
		int u = heap[0];
		heap[0] = heap[--hn];
		pos[heap[0]] = 0;
		pos[u] = -2;
		sift_down(0);
		sum += dist[u];
		for (int e = head[u]; e >= 0; e = next[e]) {
			int v = to[e], d = dist[u] + w[e];
			if (pos[v] == -2 || d >= dist[v])
				continue;
			dist[v] = d;
			if (pos[v] < 0) {
				heap[hn] = v;
				pos[v] = hn++;
			}
			sift_up(pos[v]);
		}
	}
	return sum;
}

int main(int argc, char **argv) {
	int sources = size(argc, argv, 60);
	n = 20000;
	m = 8 * n;
	head = malloc(sizeof(int) * n);
	next = malloc(sizeof(int) * m);
	to = malloc(sizeof(int) * m);
	w = malloc(sizeof(int) * m);
	dist = malloc(sizeof(int) * n);
	heap = malloc(sizeof(int) * n);
	pos = malloc(sizeof(int) * n);
	for (int i = 0; i < n; i++)
		head[i] = -1;
	for (int e = 0; e < m; e++) {
		int u = e < n ? e : (int)(rnd() % n);
		to[e] = e < n ? (e + 1) % n : (int)(rnd() % n);
		w[e] = 1 + rnd() % 100;
		next[e] = head[u];
		head[u] = e;
	}
	uint32_t h = 0;
	for (int s = 0; s < sources; s++)
		h = mix(h, (uint32_t)run((s * 7919) % n));
	printf("dijkstra: %d sources %08x\n", sources, h);
	return 0;
}
