/* Binary searches over a sorted table: a short loop whose one branch
 * goes either way at random. */
#include <stdio.h>
#include <stdlib.h>

#define N (1 << 16)

static int table[N];

static int find(const int *a, int n, int key) {
	int lo = 0, hi = n;
	while (lo < hi) {
		int mid = lo + (hi - lo) / 2;
		if (a[mid] < key) lo = mid + 1;
		else hi = mid;
	}
	return lo;
}

int main(int argc, char **argv) {
	int queries = argc > 1 ? atoi(argv[1]) : 400000;
	for (int i = 0; i < N; i++) table[i] = i * 3 + (i & 1);
	unsigned seed = 7;
	long long sum = 0;
	int hits = 0;
	for (int q = 0; q < queries; q++) {
		seed = seed * 1103515245u + 12345u;
		int key = (int)((seed >> 8) % (N * 3));
		int at = find(table, N, key);
		sum += at;
		if (at < N && table[at] == key) hits++;
	}
	printf("sum %lld hits %d\n", sum, hits);
	return 0;
}
