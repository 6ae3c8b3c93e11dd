/* An n-body simulation: all-pairs gravity with softening, leapfrog
 * steps, energy at the end. */
#include "common.h"
#include <math.h>

#define B 64

static double x[B], y[B], z[B], vx[B], vy[B], vz[B], m[B];

int main(int argc, char **argv) {
	int steps = size(argc, argv, 1500);
	for (int i = 0; i < B; i++) {
		x[i] = rnd_unit() * 10;
		y[i] = rnd_unit() * 10;
		z[i] = rnd_unit() * 10;
		vx[i] = rnd_unit() * 0.1;
		vy[i] = rnd_unit() * 0.1;
		vz[i] = rnd_unit() * 0.1;
		m[i] = 1 + (rnd() % 100) / 10.0;
	}
	const double dt = 0.001, eps = 0.01;
	for (int s = 0; s < steps; s++) {
		for (int i = 0; i < B; i++)
			for (int j = i + 1; j < B; j++) {
				double dx = x[i] - x[j], dy = y[i] - y[j], dz = z[i] - z[j];
				double d2 = dx * dx + dy * dy + dz * dz + eps;
				double mag = dt / (d2 * sqrt(d2));
				vx[i] -= dx * m[j] * mag;
				vy[i] -= dy * m[j] * mag;
				vz[i] -= dz * m[j] * mag;
				vx[j] += dx * m[i] * mag;
				vy[j] += dy * m[i] * mag;
				vz[j] += dz * m[i] * mag;
			}
		for (int i = 0; i < B; i++) {
			x[i] += dt * vx[i];
			y[i] += dt * vy[i];
			z[i] += dt * vz[i];
		}
	}
	double e = 0;
	for (int i = 0; i < B; i++) {
		e += 0.5 * m[i] * (vx[i] * vx[i] + vy[i] * vy[i] + vz[i] * vz[i]);
		for (int j = i + 1; j < B; j++) {
			double dx = x[i] - x[j], dy = y[i] - y[j], dz = z[i] - z[j];
			e -= m[i] * m[j] / sqrt(dx * dx + dy * dy + dz * dz + eps);
		}
	}
	printf("nbody: %d steps, energy %.6f\n", steps, e);
	return 0;
}
