/* Sparse matrix times vector in compressed sparse row form, iterated as
 * a power method with normalisation. */
#include "common.h"
#include <math.h>

int main(int argc, char **argv) {
	int iters = size(argc, argv, 150);
	int n = 50000, per = 12, nnz = n * per;
	int *rowp = malloc(sizeof(int) * (n + 1)), *col = malloc(sizeof(int) * nnz);
	double *val = malloc(sizeof(double) * nnz), *x = malloc(sizeof(double) * n), *y = malloc(sizeof(double) * n);
	for (int i = 0, k = 0; i < n; i++) {
		rowp[i] = k;
		int c = 0;
		for (int e = 0; e < per; e++) {
			c += 1 + rnd() % (2 * n / per);
			if (c >= n)
				break;
			col[k] = c;
			val[k++] = rnd_unit() + (c == i ? 4 : 0);
		}
		rowp[i + 1] = k;
	}
	for (int i = 0; i < n; i++)
		x[i] = 1;
	double norm = 0;
	for (int t = 0; t < iters; t++) {
		for (int i = 0; i < n; i++) {
			double s = 0;
			for (int k = rowp[i]; k < rowp[i + 1]; k++)
				s += val[k] * x[col[k]];
			y[i] = s;
		}
		norm = 0;
		for (int i = 0; i < n; i++)
			norm += y[i] * y[i];
		norm = sqrt(norm);
		for (int i = 0; i < n; i++)
			x[i] = norm > 0 ? y[i] / norm : 0;
	}
	printf("spmv: %d iterations, %d nonzeros, norm %.6f\n", iters, rowp[n], norm);
	return 0;
}
