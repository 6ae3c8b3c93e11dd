/* An iterative radix-2 FFT with bit-reversal permutation, forward and
 * inverse over many blocks, checking the round trip. */
#include "common.h"
#include <math.h>

static void fft(double *re, double *im, int n, int inverse) {
	for (int i = 1, j = 0; i < n; i++) {
		int bit = n >> 1;
		for (; j & bit; bit >>= 1)
			j ^= bit;
		j ^= bit;
		if (i < j) {
			double t = re[i];
			re[i] = re[j];
			re[j] = t;
			t = im[i];
			im[i] = im[j];
			im[j] = t;
		}
	}
	for (int len = 2; len <= n; len <<= 1) {
		double ang = 2 * M_PI / len * (inverse ? 1 : -1);
		double wr = cos(ang), wi = sin(ang);
		for (int i = 0; i < n; i += len) {
			double cr = 1, ci = 0;
			for (int j = 0; j < len / 2; j++) {
				int a = i + j, b = i + j + len / 2;
				double ur = re[a], ui = im[a];
				double vr = re[b] * cr - im[b] * ci, vi = re[b] * ci + im[b] * cr;
				re[a] = ur + vr;
				im[a] = ui + vi;
				re[b] = ur - vr;
				im[b] = ui - vi;
				double ncr = cr * wr - ci * wi;
				ci = cr * wi + ci * wr;
				cr = ncr;
			}
		}
	}
	if (inverse)
		for (int i = 0; i < n; i++) {
			re[i] /= n;
			im[i] /= n;
		}
}

int main(int argc, char **argv) {
	int blocks = size(argc, argv, 300);
	enum { N = 4096 };
	static double re[N], im[N], orig[N];
	double err = 0, energy = 0;
	for (int b = 0; b < blocks; b++) {
		for (int i = 0; i < N; i++) {
			orig[i] = re[i] = rnd_unit() + sin(i * 0.01 * (b % 7 + 1));
			im[i] = 0;
		}
		fft(re, im, N, 0);
		energy += re[1] * re[1] + im[1] * im[1];
		fft(re, im, N, 1);
		for (int i = 0; i < N; i++) {
			double e = fabs(re[i] - orig[i]);
			if (e > err)
				err = e;
		}
	}
	printf("fft: %d blocks, energy %.3f, round trip %s\n", blocks, energy, err < 1e-9 ? "ok" : "FAILED");
	return 0;
}
