/*
 * sort: several sorting algorithms and binary searches over the same data.
 *
 * qsort is driven through a table of comparators so that calls go through
 * function pointers (call_indirect in wasm); the hand-written sorts give
 * loops with data-dependent branches. Every comparator is a total order, so
 * the result does not depend on which qsort algorithm the C library uses.
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct rec {
	uint32_t key;
	uint32_t id;
};

static uint32_t rng_state = 12345;

static uint32_t rng(void)
{
	/* Numerical Recipes LCG; the high bits are the useful ones. */
	rng_state = rng_state * 1664525u + 1013904223u;
	return rng_state >> 8;
}

static int cmp_key(const void *a, const void *b)
{
	const struct rec *x = a, *y = b;
	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

static int cmp_key_desc(const void *a, const void *b)
{
	return cmp_key(b, a);
}

static int cmp_id(const void *a, const void *b)
{
	const struct rec *x = a, *y = b;
	return x->id < y->id ? -1 : x->id > y->id;
}

/* cmp_bucket orders by the last decimal digit of the key, then by key. */
static int cmp_bucket(const void *a, const void *b)
{
	const struct rec *x = a, *y = b;
	uint32_t dx = x->key % 10, dy = y->key % 10;
	if (dx != dy)
		return dx < dy ? -1 : 1;
	return cmp_key(a, b);
}

typedef int (*cmp_fn)(const void *, const void *);

static const struct {
	const char *name;
	cmp_fn cmp;
} orders[] = {
	{ "key", cmp_key },
	{ "key-desc", cmp_key_desc },
	{ "id", cmp_id },
	{ "bucket", cmp_bucket },
};

static void swap(struct rec *a, struct rec *b)
{
	struct rec t = *a;
	*a = *b;
	*b = t;
}

static void insertion_sort(struct rec *v, int n, cmp_fn cmp)
{
	for (int i = 1; i < n; i++) {
		struct rec x = v[i];
		int j = i;
		while (j > 0 && cmp(&v[j - 1], &x) > 0) {
			v[j] = v[j - 1];
			j--;
		}
		v[j] = x;
	}
}

static void quick_sort(struct rec *v, int n, cmp_fn cmp)
{
	while (n > 16) {
		/* Median of three keeps sorted input from going quadratic. */
		int mid = n / 2;
		if (cmp(&v[mid], &v[0]) < 0)
			swap(&v[mid], &v[0]);
		if (cmp(&v[n - 1], &v[0]) < 0)
			swap(&v[n - 1], &v[0]);
		if (cmp(&v[n - 1], &v[mid]) < 0)
			swap(&v[n - 1], &v[mid]);
		struct rec pivot = v[mid];

		int i = 0, j = n - 1;
		for (;;) {
			while (cmp(&v[i], &pivot) < 0)
				i++;
			while (cmp(&pivot, &v[j]) < 0)
				j--;
			if (i >= j)
				break;
			swap(&v[i], &v[j]);
			i++;
			j--;
		}
		/* Recurse into the smaller half to bound the stack depth. */
		if (j + 1 < n - j - 1) {
			quick_sort(v, j + 1, cmp);
			v += j + 1;
			n -= j + 1;
		} else {
			quick_sort(v + j + 1, n - j - 1, cmp);
			n = j + 1;
		}
	}
	insertion_sort(v, n, cmp);
}

static void sift_down(struct rec *v, int root, int n, cmp_fn cmp)
{
	for (;;) {
		int child = 2 * root + 1;
		if (child >= n)
			return;
		if (child + 1 < n && cmp(&v[child], &v[child + 1]) < 0)
			child++;
		if (cmp(&v[root], &v[child]) >= 0)
			return;
		swap(&v[root], &v[child]);
		root = child;
	}
}

static void heap_sort(struct rec *v, int n, cmp_fn cmp)
{
	for (int i = n / 2 - 1; i >= 0; i--)
		sift_down(v, i, n, cmp);
	for (int end = n - 1; end > 0; end--) {
		swap(&v[0], &v[end]);
		sift_down(v, 0, end, cmp);
	}
}

static void merge_sort(struct rec *v, int n, cmp_fn cmp, struct rec *tmp)
{
	/* Bottom-up, so there is no recursion and the loops nest three deep. */
	for (int width = 1; width < n; width *= 2) {
		for (int lo = 0; lo < n; lo += 2 * width) {
			int mid = lo + width < n ? lo + width : n;
			int hi = lo + 2 * width < n ? lo + 2 * width : n;
			int i = lo, j = mid, k = lo;
			while (i < mid && j < hi)
				tmp[k++] = cmp(&v[j], &v[i]) < 0 ? v[j++] : v[i++];
			while (i < mid)
				tmp[k++] = v[i++];
			while (j < hi)
				tmp[k++] = v[j++];
		}
		memcpy(v, tmp, (size_t)n * sizeof *v);
	}
}

static void shell_sort(struct rec *v, int n, cmp_fn cmp)
{
	static const int gaps[] = { 701, 301, 132, 57, 23, 10, 4, 1 };
	for (size_t g = 0; g < sizeof gaps / sizeof gaps[0]; g++) {
		int gap = gaps[g];
		for (int i = gap; i < n; i++) {
			struct rec x = v[i];
			int j = i;
			for (; j >= gap && cmp(&v[j - gap], &x) > 0; j -= gap)
				v[j] = v[j - gap];
			v[j] = x;
		}
	}
}

static int is_sorted(const struct rec *v, int n, cmp_fn cmp)
{
	for (int i = 1; i < n; i++)
		if (cmp(&v[i - 1], &v[i]) > 0)
			return 0;
	return 1;
}

static uint32_t checksum(const struct rec *v, int n)
{
	uint32_t h = 2166136261u;
	for (int i = 0; i < n; i++) {
		h = (h ^ v[i].key) * 16777619u;
		h = (h ^ v[i].id) * 16777619u;
	}
	return h;
}

/* lower_bound returns the first index whose key is >= key. */
static int lower_bound(const struct rec *v, int n, uint32_t key)
{
	int lo = 0, hi = n;
	while (lo < hi) {
		int mid = lo + (hi - lo) / 2;
		if (v[mid].key < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* upper_bound returns the first index whose key is > key. */
static int upper_bound(const struct rec *v, int n, uint32_t key)
{
	int lo = 0, hi = n;
	while (lo < hi) {
		int mid = lo + (hi - lo) / 2;
		if (v[mid].key <= key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

#define N 20000
#define KEY_RANGE 5000

int main(void)
{
	static struct rec data[N], work[N], tmp[N];
	static const struct {
		const char *name;
		int which;
	} algos[] = {
		{ "qsort", 0 }, { "quick", 1 }, { "heap", 2 }, { "merge", 3 }, { "shell", 4 },
	};

	for (int i = 0; i < N; i++) {
		data[i].key = rng() % KEY_RANGE;
		data[i].id = (uint32_t)i;
	}

	for (size_t o = 0; o < sizeof orders / sizeof orders[0]; o++) {
		uint32_t want = 0;
		for (size_t a = 0; a < sizeof algos / sizeof algos[0]; a++) {
			memcpy(work, data, sizeof work);
			cmp_fn cmp = orders[o].cmp;
			switch (algos[a].which) {
			case 0: qsort(work, N, sizeof work[0], cmp); break;
			case 1: quick_sort(work, N, cmp); break;
			case 2: heap_sort(work, N, cmp); break;
			case 3: merge_sort(work, N, cmp, tmp); break;
			default: shell_sort(work, N, cmp); break;
			}
			uint32_t sum = checksum(work, N);
			if (a == 0)
				want = sum;
			printf("%-8s %-5s sorted=%d checksum=%08" PRIx32 "%s\n", orders[o].name,
			       algos[a].name, is_sorted(work, N, cmp), sum,
			       sum == want ? "" : " MISMATCH");
		}
	}

	/* Searches run over the key-sorted array, which work no longer holds. */
	memcpy(work, data, sizeof work);
	quick_sort(work, N, cmp_key);
	uint32_t found = 0, total = 0, absent = 0;
	for (uint32_t q = 0; q < KEY_RANGE + 100; q += 7) {
		int lo = lower_bound(work, N, q), hi = upper_bound(work, N, q);
		if (lo == hi)
			absent++;
		else
			found++;
		total += (uint32_t)(hi - lo);
	}
	printf("search: found=%" PRIu32 " absent=%" PRIu32 " matches=%" PRIu32 "\n", found,
	       absent, total);

	/* bsearch through a comparator pointer, over distinct sorted keys. */
	static uint32_t keys[N];
	int nk = 0;
	for (int i = 0; i < N; i++)
		if (nk == 0 || keys[nk - 1] != work[i].key)
			keys[nk++] = work[i].key;
	uint32_t hits = 0;
	for (uint32_t q = 0; q < KEY_RANGE; q++)
		if (bsearch(&q, keys, (size_t)nk, sizeof keys[0], cmp_u32) != NULL)
			hits++;
	printf("distinct keys: %d, bsearch hits: %" PRIu32 "\n", nk, hits);
	return 0;
}
