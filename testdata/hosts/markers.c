// A benchmark harness's program: the host module "bench" gives markers
// around the measured work and helpers that return values. pathprof runs
// it with those imports stubbed (--stub, --stub-missing) and measures the
// region between the markers (--region bench.start,bench.stop) or the
// function measured (--region-func measured).
#include <stdio.h>
#include <stdint.h>

#define IMPORT(name) __attribute__((import_module("bench"), import_name(name)))

IMPORT("start") void bench_start(void);
IMPORT("stop") void bench_stop(void);
// The number of rounds to measure; 0 when the host gives none.
IMPORT("rounds") int bench_rounds(void);
// A seed from the host, mixed into the data.
IMPORT("seed") int64_t bench_seed(void);
// A scale factor from the host.
IMPORT("scale") double bench_scale(double x);
// Reports a result to the host; called only when the program has
// arguments, so that a region it opens never opens in the tests.
IMPORT("report") void bench_report(unsigned x);

static unsigned data[64];

__attribute__((noinline)) static unsigned mix(unsigned x) {
	for (int i = 0; i < 3; i++) {
		if (x & 1)
			x = 3 * x + 1;
		else
			x /= 2;
	}
	return x;
}

__attribute__((noinline)) static void setup(int64_t seed) {
	for (int i = 0; i < 64; i++)
		data[i] = mix((unsigned)(i * 2654435761u) ^ (unsigned)seed);
}

// measured calls the markers itself around its middle part, and is the
// function of --region-func: the two regions differ by the paths of
// measured around its markers.
__attribute__((noinline)) unsigned measured(int rounds) {
	unsigned sum = 0;
	for (int i = 0; i < 8; i++)
		sum += data[i] & 1 ? mix(data[i]) : data[i];
	bench_start();
	for (int r = 0; r < rounds; r++) {
		for (int i = 0; i < 64; i++) {
			if (data[i] % 3 == 0)
				sum += mix(data[i] + r);
			else if (data[i] % 3 == 1)
				sum ^= data[i] >> 1;
			else
				sum -= r;
		}
	}
	bench_stop();
	return sum;
}

// deep recurses n frames before opening and closing a region of its
// own: deeper than the runtime's call stack shows at a boundary.
__attribute__((noinline)) static unsigned deep(int n) {
	if (n == 0) {
		bench_start();
		unsigned x = mix(7);
		bench_stop();
		return x;
	}
	unsigned r = deep(n - 1);
	return r ^ (r >> 3) ^ (unsigned)n;
}

__attribute__((noinline)) static unsigned teardown(void) {
	unsigned h = 0;
	for (int i = 0; i < 64; i++)
		h = h * 31 + mix(data[i]);
	return h;
}

int main(int argc, char **argv) {
	(void)argv;
	int rounds = bench_rounds();
	if (rounds <= 0)
		rounds = 5;
	setup(bench_seed());
	unsigned a = measured(rounds);
	// A second region opened and closed in main itself.
	bench_start();
	unsigned b = mix(a) + (unsigned)bench_scale(2.5);
	bench_stop();
	b ^= deep(40);
	if (argc > 1)
		bench_report(b);
	printf("rounds %d sum %u mixed %u teardown %u\n", rounds, a, b, teardown());
	return 0;
}
