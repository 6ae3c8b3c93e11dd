/* Dynamic programming: 0/1 knapsack over a one-row table, and the edit
 * distance of generated strings. */
#include "common.h"

static int edit(const char *a, int n, const char *b, int m, int *row) {
	for (int j = 0; j <= m; j++)
		row[j] = j;
	for (int i = 1; i <= n; i++) {
		int diag = row[0];
		row[0] = i;
		for (int j = 1; j <= m; j++) {
			int best = diag + (a[i - 1] != b[j - 1]);
			if (row[j] + 1 < best)
				best = row[j] + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			diag = row[j];
			row[j] = best;
		}
	}
	return row[m];
}

int main(int argc, char **argv) {
	int items = size(argc, argv, 1200);
	int cap = 20000;
	int *best = calloc(cap + 1, sizeof(int));
	for (int i = 0; i < items; i++) {
		int w = 1 + rnd() % 400, v = 1 + rnd() % 1000;
		for (int c = cap; c >= w; c--)
			if (best[c - w] + v > best[c])
				best[c] = best[c - w] + v;
	}
	enum { L = 2000 };
	static char a[L], b[L];
	static int row[L + 1];
	for (int i = 0; i < L; i++) {
		a[i] = 'a' + rnd() % 4;
		b[i] = rnd() % 8 ? a[i] : 'a' + rnd() % 4;
	}
	int d = edit(a, L, b, L, row);
	printf("knapsack: %d items, best %d, edit distance %d\n", items, best[cap], d);
	return 0;
}
