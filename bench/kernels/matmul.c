/* Dense matrix multiplication, blocked, on doubles. */
#include "common.h"

int main(int argc, char **argv) {
	int n = size(argc, argv, 200), bs = 32;
	double *a = malloc(sizeof(double) * n * n), *b = malloc(sizeof(double) * n * n),
	       *c = calloc((size_t)n * n, sizeof(double));
	for (int i = 0; i < n * n; i++) {
		a[i] = rnd_unit();
		b[i] = rnd_unit();
	}
	for (int ii = 0; ii < n; ii += bs)
		for (int kk = 0; kk < n; kk += bs)
			for (int jj = 0; jj < n; jj += bs)
				for (int i = ii; i < ii + bs && i < n; i++)
					for (int k = kk; k < kk + bs && k < n; k++) {
						double aik = a[i * n + k];
						for (int j = jj; j < jj + bs && j < n; j++)
							c[i * n + j] += aik * b[k * n + j];
					}
	double tr = 0;
	for (int i = 0; i < n; i++)
		tr += c[i * n + i] + c[i * n + (n - 1 - i)];
	printf("matmul: n=%d trace %.6f\n", n, tr);
	return 0;
}
