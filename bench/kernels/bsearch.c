/* Binary search: many lookups, hits and misses, in a large sorted array,
 * with lower-bound and exact-match variants. */
#include "common.h"

static int lower_bound(const uint32_t *a, int n, uint32_t key) {
	int lo = 0, hi = n;
	while (lo < hi) {
		int mid = lo + (hi - lo) / 2;
		if (a[mid] < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static int find(const uint32_t *a, int n, uint32_t key) {
	int lo = 0, hi = n - 1;
	while (lo <= hi) {
		int mid = lo + (hi - lo) / 2;
		if (a[mid] == key)
			return mid;
		if (a[mid] < key)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return -1;
}

int main(int argc, char **argv) {
	int queries = size(argc, argv, 3000000);
	enum { N = 1 << 18 };
	static uint32_t a[N];
	uint32_t v = 0;
	for (int i = 0; i < N; i++) {
		v += 1 + rnd() % 16;
		a[i] = v;
	}
	long long found = 0, pos = 0;
	for (int q = 0; q < queries; q++) {
		uint32_t key = rnd() % (v + 16);
		if (q & 1) {
			int i = find(a, N, key);
			if (i >= 0)
				found++;
		} else
			pos += lower_bound(a, N, key);
	}
	printf("bsearch: %d queries, %lld found, %lld\n", queries, found, pos);
	return 0;
}
