/* A signal-processing filter in the shape of embedded benchmarks: a main
 * whose set-up takes many independent decisions (so that its function has
 * billions of acyclic paths) around one hot loop whose body has few. */
#include <stdio.h>
#include <stdlib.h>

#define N 4096

static short in[N];
static short out[N];

int main(int argc, char **argv) {
	int passes = argc > 1 ? atoi(argv[1]) : 10000;
	unsigned seed = 12345;
	int gain = 3, shift = 2, lo = -30000, hi = 30000, b0 = 5, b1 = 9, b2 = 5;
	int a1 = -7, a2 = 3, bias = 0, mode = 0, taps = 3, dither = 0;
	/* Set-up decisions, each a branch of its own. */
	if (argc > 2) gain = atoi(argv[2]);
	if (gain > 8) gain = 8;
	if (gain < 1) gain = 1;
	if (argc > 3) shift = atoi(argv[3]);
	if (shift > 6) shift = 6;
	if (shift < 0) shift = 0;
	if (argc > 4) lo = atoi(argv[4]);
	if (argc > 5) hi = atoi(argv[5]);
	if (lo > hi) { int t = lo; lo = hi; hi = t; }
	if (argc > 6) b0 = atoi(argv[6]);
	if (argc > 7) b1 = atoi(argv[7]);
	if (argc > 8) b2 = atoi(argv[8]);
	if (argc > 9) a1 = atoi(argv[9]);
	if (argc > 10) a2 = atoi(argv[10]);
	if (argc > 11) bias = atoi(argv[11]);
	if (argc > 12) mode = atoi(argv[12]);
	if (argc > 13) taps = atoi(argv[13]);
	if (argc > 14) dither = atoi(argv[14]);
	if (mode & 1) b0 = -b0;
	if (mode & 2) b1 = -b1;
	if (mode & 4) b2 = -b2;
	if (mode & 8) a1 = -a1;
	if (mode & 16) a2 = -a2;
	if (taps < 1) taps = 1;
	if (taps > 3) taps = 3;
	if (bias > 100) bias = 100;
	if (bias < -100) bias = -100;
	if (dither) seed ^= (unsigned)dither;
	for (int i = 0; i < N; i++) {
		seed = seed * 1103515245u + 12345u;
		in[i] = (short)((seed >> 16) & 0x7fff) - 16384;
	}
	long long sum = 0;
	int x1 = 0, x2 = 0, y1 = 0, y2 = 0;
	for (int p = 0; p < passes; p++) {
		/* The hot loop: a biquad with saturation. */
		for (int i = 0; i < N; i++) {
			int x = in[i];
			int y = (b0 * x + b1 * x1 + b2 * x2 - a1 * y1 - a2 * y2) >> 4;
			y = (y * gain) >> shift;
			y += bias;
			if (y > hi) y = hi;
			else if (y < lo) y = lo;
			x2 = x1; x1 = x;
			y2 = y1; y1 = y;
			out[i] = (short)y;
		}
		sum += out[p % N];
		if (taps > 1) sum += out[(p * 7) % N];
		if (taps > 2) sum -= out[(p * 13) % N];
	}
	long long check = 0;
	for (int i = 0; i < N; i++) check = check * 31 + out[i];
	printf("sum %lld check %lld\n", sum, check);
	return 0;
}
