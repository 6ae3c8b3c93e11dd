/* All-pairs shortest paths: Floyd-Warshall's triple loop with a
 * conditional minimum, on a random sparse directed graph. */
#include "common.h"

#define INF 0x3fffffff

int main(int argc, char **argv) {
	int n = size(argc, argv, 360);
	int *d = malloc(sizeof(int) * n * n);
	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++)
			d[i * n + j] = i == j ? 0 : (rnd() % 8 == 0 ? (int)(rnd() % 1000) + 1 : INF);
	for (int k = 0; k < n; k++)
		for (int i = 0; i < n; i++) {
			int dik = d[i * n + k];
			if (dik == INF)
				continue;
			for (int j = 0; j < n; j++) {
				int t = dik + d[k * n + j];
				if (t < d[i * n + j])
					d[i * n + j] = t;
			}
		}
	uint32_t h = 0;
	long long sum = 0;
	int unreachable = 0;
	for (int i = 0; i < n * n; i++) {
		if (d[i] >= INF)
			unreachable++;
		else
			sum += d[i];
		h = mix(h, (uint32_t)d[i]);
	}
	printf("apsp: n=%d sum=%lld unreachable=%d %08x\n", n, sum, unreachable, h);
	free(d);
	return 0;
}
