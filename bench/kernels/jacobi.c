/* A 2-D five-point stencil: Jacobi iterations of the heat equation with
 * fixed boundaries, and a convergence check every few sweeps. */
#include "common.h"
#include <math.h>

int main(int argc, char **argv) {
	int sweeps = size(argc, argv, 300);
	enum { N = 256 };
	static double u[N][N], v[N][N];
	for (int i = 0; i < N; i++)
		for (int j = 0; j < N; j++)
			u[i][j] = v[i][j] = (i == 0 || j == 0) ? 100 : (i == N - 1 || j == N - 1) ? -50 : rnd_unit();
	double delta = 0;
	int s;
	for (s = 0; s < sweeps; s++) {
		for (int i = 1; i < N - 1; i++)
			for (int j = 1; j < N - 1; j++)
				v[i][j] = 0.25 * (u[i - 1][j] + u[i + 1][j] + u[i][j - 1] + u[i][j + 1]);
		if (s % 10 == 9) {
			delta = 0;
			for (int i = 1; i < N - 1; i++)
				for (int j = 1; j < N - 1; j++) {
					double d = fabs(v[i][j] - u[i][j]);
					if (d > delta)
						delta = d;
				}
			if (delta < 1e-9)
				break;
		}
		for (int i = 1; i < N - 1; i++)
			for (int j = 1; j < N - 1; j++)
				u[i][j] = v[i][j];
	}
	printf("jacobi: %d sweeps, centre %.6f, delta %.6g\n", s, u[N / 2][N / 2], delta);
	return 0;
}
