/* An iterative radix-2 FFT and its inverse on a fixed signal. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define LOGN 12
#define PI 3.14159265358979323846
#define N (1 << LOGN)

static double re[N], im[N];

static void fft(double *xr, double *xi, int inverse) {
	for (int i = 1, j = 0; i < N; i++) {
		int bit = N >> 1;
		for (; j & bit; bit >>= 1) j ^= bit;
		j ^= bit;
		if (i < j) {
			double t = xr[i]; xr[i] = xr[j]; xr[j] = t;
			t = xi[i]; xi[i] = xi[j]; xi[j] = t;
		}
	}
	for (int len = 2; len <= N; len <<= 1) {
		double ang = 2 * PI / len * (inverse ? -1 : 1);
		double wr = cos(ang), wi = sin(ang);
		for (int i = 0; i < N; i += len) {
			double ur = 1, ui = 0;
			for (int k = 0; k < len / 2; k++) {
				int a = i + k, b = i + k + len / 2;
				double vr = xr[b] * ur - xi[b] * ui;
				double vi = xr[b] * ui + xi[b] * ur;
				xr[b] = xr[a] - vr; xi[b] = xi[a] - vi;
				xr[a] += vr; xi[a] += vi;
				double t = ur * wr - ui * wi;
				ui = ur * wi + ui * wr;
				ur = t;
			}
		}
	}
	if (inverse)
		for (int i = 0; i < N; i++) { xr[i] /= N; xi[i] /= N; }
}

int main(int argc, char **argv) {
	int rounds = argc > 1 ? atoi(argv[1]) : 400;
	for (int i = 0; i < N; i++) { re[i] = (i * 7919 % 1000) / 1000.0 - 0.5; im[i] = 0; }
	double peak = 0;
	for (int r = 0; r < rounds; r++) {
		fft(re, im, 0);
		double m = fabs(re[r % N]) + fabs(im[r % N]);
		if (m > peak) peak = m;
		fft(re, im, 1);
	}
	long long check = 0;
	for (int i = 0; i < N; i++) check = check * 31 + (long long)llround(re[i] * 1e6);
	printf("peak %.3f check %lld\n", peak, check);
	return 0;
}
