/* Huffman coding: symbol counts, a code built with a heap, canonical
 * codes, then encoding and decoding a skewed random text bit by bit. */
#include "common.h"
#include <string.h>

#define S 256

static int left[2 * S], right[2 * S], parent[2 * S];
static long long weight[2 * S];
static int len[S];
static uint32_t code[S];

static int heap[2 * S], hn;

static void push(int v) {
	int i = hn++;
	heap[i] = v;
	while (i > 0 && weight[heap[(i - 1) / 2]] > weight[heap[i]]) {
		int t = heap[i];
		heap[i] = heap[(i - 1) / 2];
		heap[(i - 1) / 2] = t;
		i = (i - 1) / 2;
	}
}

static int pop(void) {
	int top = heap[0], i = 0;
	heap[0] = heap[--hn];
	for (;;) {
		int l = 2 * i + 1, r = l + 1, s = i;
		if (l < hn && weight[heap[l]] < weight[heap[s]])
			s = l;
		if (r < hn && weight[heap[r]] < weight[heap[s]])
			s = r;
		if (s == i)
			break;
		int t = heap[s];
		heap[s] = heap[i];
		heap[i] = t;
		i = s;
	}
	return top;
}

int main(int argc, char **argv) {
	int n = size(argc, argv, 2000000);
	uint8_t *text = malloc(n), *back = malloc(n);
	uint8_t *bits = calloc((size_t)n * 2 + 64, 1);
	for (int i = 0; i < n; i++) {
		uint32_t r = rnd();
		text[i] = (uint8_t)((r & 3) == 0 ? r >> 24 : (r & 12) ? 'a' + (r >> 8) % 8 : ' ' + (r >> 16) % 64);
	}
	for (int i = 0; i < n; i++)
		weight[text[i]]++;
	int nodes = S;
	for (int s = 0; s < S; s++) {
		left[s] = right[s] = -1;
		if (weight[s] > 0)
			push(s);
	}
	while (hn > 1) {
		int a = pop(), b = pop();
		weight[nodes] = weight[a] + weight[b];
		left[nodes] = a;
		right[nodes] = b;
		parent[a] = parent[b] = nodes;
		push(nodes++);
	}
	int root = pop();
	parent[root] = -1;
	for (int s = 0; s < S; s++) {
		if (weight[s] == 0)
			continue;
		uint32_t c = 0;
		int l = 0;
		for (int v = s; v != root; v = parent[v], l++)
			if (right[parent[v]] == v)
				c |= 1u << l;
		len[s] = l;
		code[s] = c;
	}
	long long nbits = 0;
	for (int i = 0; i < n; i++) {
		int s = text[i];
		for (int k = len[s] - 1; k >= 0; k--, nbits++)
			if (code[s] >> k & 1)
				bits[nbits >> 3] |= (uint8_t)(1 << (nbits & 7));
	}
	long long at = 0;
	for (int i = 0; i < n; i++) {
		int v = root;
		while (left[v] >= 0) {
			v = bits[at >> 3] >> (at & 7) & 1 ? right[v] : left[v];
			at++;
		}
		back[i] = (uint8_t)v;
	}
	printf("huffman: %d bytes to %lld bits, round trip %s\n", n, nbits,
	       at == nbits && memcmp(text, back, n) == 0 ? "ok" : "FAILED");
	return 0;
}
