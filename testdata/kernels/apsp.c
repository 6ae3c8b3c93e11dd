/* All-pairs shortest paths (Floyd-Warshall): a triple loop with a
 * conditional minimum, the shape of graph benchmark kernels. */
#include <stdio.h>
#include <stdlib.h>

#define MAXN 400

static int d[MAXN][MAXN];

int main(int argc, char **argv) {
	int n = argc > 1 ? atoi(argv[1]) : 400;
	if (n < 2 || n > MAXN) n = 400;
	unsigned seed = 42;
	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++) {
			seed = seed * 1664525u + 1013904223u;
			d[i][j] = i == j ? 0 : ((seed >> 8) % 16 == 0 ? (int)((seed >> 12) % 1000) + 1 : 1000000);
		}
	for (int k = 0; k < n; k++)
		for (int i = 0; i < n; i++) {
			int dik = d[i][k];
			for (int j = 0; j < n; j++) {
				int t = dik + d[k][j];
				if (t < d[i][j]) d[i][j] = t;
			}
		}
	long long sum = 0;
	int unreachable = 0;
	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++) {
			if (d[i][j] >= 1000000) unreachable++;
			else sum += d[i][j];
		}
	printf("n %d sum %lld unreachable %d\n", n, sum, unreachable);
	return 0;
}
