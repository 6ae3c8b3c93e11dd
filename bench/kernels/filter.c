/* A signal-processing chain in one function: a biquad low-pass, a DC
 * blocker, an envelope follower, a noise gate, a compressor, a soft
 * clipper (a call) and a limiter per sample, each with its own branches,
 * so the loop body alone has thousands of acyclic paths and the function
 * billions. */
#include "common.h"

#define N 4096

static double in[N], out[N];

/* soft_clip is out of line, as a shaping function of a real chain is: the
 * loop calls out. */
__attribute__((noinline)) static double soft_clip(double d) {
	if (d > 0)
		return 0.6 + (d - 0.6) / (1 + (d - 0.6) * 4);
	return -0.6 + (d + 0.6) / (1 - (d + 0.6) * 4);
}

static double process(double *x, double *y, int n, double gate_th, double comp_th) {
	double z1 = 0, z2 = 0, dc_x = 0, dc_y = 0, env = 0, gain = 1, peak = 0;
	const double b0 = 0.0675, b1 = 0.135, b2 = 0.0675, a1 = -1.143, a2 = 0.4128;
	int gated = 0, clipped = 0, limited = 0;
	for (int i = 0; i < n; i++) {
		double s = x[i];
		if (s != s)
			s = 0; /* NaN */
		double v = b0 * s + z1;
		z1 = b1 * s - a1 * v + z2;
		z2 = b2 * s - a2 * v;
		if (z1 > -1e-18 && z1 < 1e-18)
			z1 = 0; /* flush denormals */
		if (z2 > -1e-18 && z2 < 1e-18)
			z2 = 0;
		double d = v - dc_x + 0.995 * dc_y;
		dc_x = v;
		dc_y = d;
		double a = d < 0 ? -d : d;
		if (a > env)
			env += 0.3 * (a - env);
		else
			env += 0.01 * (a - env);
		if (env < gate_th) {
			d *= env / gate_th;
			gated++;
		}
		if (env > comp_th) {
			double target = comp_th + (env - comp_th) / 4;
			double g = target / env;
			if (g < gain)
				gain += 0.5 * (g - gain);
			else
				gain += 0.05 * (g - gain);
		} else if (gain < 1) {
			gain += 0.02 * (1 - gain);
			if (gain > 1)
				gain = 1;
		}
		d *= gain;
		if (d > 0.6 || d < -0.6) {
			d = soft_clip(d);
			clipped++;
		}
		if (d > 0.95) {
			d = 0.95;
			limited++;
		}
		if (d < -0.95) {
			d = -0.95;
			limited++;
		}
		double ad = d < 0 ? -d : d;
		if (ad > peak)
			peak = ad;
		if ((i & 255) == 255)
			peak *= 0.5;
		y[i] = d;
	}
	return peak + gated * 1e-6 + clipped * 1e-3 + limited;
}

int main(int argc, char **argv) {
	int blocks = size(argc, argv, 1200);
	double acc = 0;
	uint32_t h = 0;
	for (int b = 0; b < blocks; b++) {
		double amp = 0.05 + (double)(b % 17) / 8;
		for (int i = 0; i < N; i++)
			in[i] = amp * rnd_unit() + ((i / 64) % 2 ? 0.3 * amp : -0.3 * amp);
		acc += process(in, out, N, 0.02, 0.4);
		for (int i = 0; i < N; i += 97)
			h = mix(h, (uint32_t)(int32_t)(out[i] * 1e6));
	}
	printf("filter: %d blocks, %.6f, %08x\n", blocks, acc, h);
	return 0;
}
