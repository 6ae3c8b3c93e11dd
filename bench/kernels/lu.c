/* LU decomposition with partial pivoting, then solving for several right
 * sides and measuring the residual: dense linear algebra. */
#include "common.h"
#include <math.h>

int main(int argc, char **argv) {
	int n = size(argc, argv, 480);
	double *a = malloc(sizeof(double) * n * n), *lu = malloc(sizeof(double) * n * n);
	double *b = malloc(sizeof(double) * n), *xv = malloc(sizeof(double) * n);
	int *piv = malloc(sizeof(int) * n);
	for (int i = 0; i < n * n; i++)
		a[i] = rnd_unit();
	for (int i = 0; i < n * n; i++)
		lu[i] = a[i];
	int swaps = 0;
	for (int k = 0; k < n; k++) {
		int p = k;
		double best = fabs(lu[k * n + k]);
		for (int i = k + 1; i < n; i++)
			if (fabs(lu[i * n + k]) > best) {
				best = fabs(lu[i * n + k]);
				p = i;
			}
		piv[k] = p;
		if (p != k) {
			swaps++;
			for (int j = 0; j < n; j++) {
				double t = lu[k * n + j];
				lu[k * n + j] = lu[p * n + j];
				lu[p * n + j] = t;
			}
		}
		for (int i = k + 1; i < n; i++) {
			double f = lu[i * n + k] /= lu[k * n + k];
			if (f == 0)
				continue;
			for (int j = k + 1; j < n; j++)
				lu[i * n + j] -= f * lu[k * n + j];
		}
	}
	double worst = 0;
	for (int r = 0; r < 8; r++) {
		for (int i = 0; i < n; i++)
			b[i] = xv[i] = rnd_unit();
		for (int k = 0; k < n; k++) {
			double t = xv[k];
			xv[k] = xv[piv[k]];
			xv[piv[k]] = t;
		}
		for (int i = 0; i < n; i++)
			for (int j = 0; j < i; j++)
				xv[i] -= lu[i * n + j] * xv[j];
		for (int i = n - 1; i >= 0; i--) {
			for (int j = i + 1; j < n; j++)
				xv[i] -= lu[i * n + j] * xv[j];
			xv[i] /= lu[i * n + i];
		}
		for (int i = 0; i < n; i++) {
			double s = -b[i];
			for (int j = 0; j < n; j++)
				s += a[i * n + j] * xv[j];
			if (fabs(s) > worst)
				worst = fabs(s);
		}
	}
	printf("lu: n=%d, %d swaps, residual %s\n", n, swaps, worst < 1e-6 ? "small" : "LARGE");
	return 0;
}
