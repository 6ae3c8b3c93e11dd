/* Shared by the kernels: a fixed pseudo-random source (the same numbers on
 * every platform), the size argument, and a checksum printer, so that a
 * native build's output is the WebAssembly build's expected output. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static uint32_t rng_state = 0x12345678u;

static inline uint32_t rnd(void) {
	/* xorshift32 */
	uint32_t x = rng_state;
	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	return rng_state = x;
}

/* rnd_unit returns a double in [-1, 1) built from 24 random bits. */
static inline double rnd_unit(void) { return (double)(rnd() >> 8) / 8388608.0 - 1.0; }

/* size is argv[1] if given (the tests run the kernels small), else def. */
static inline int size(int argc, char **argv, int def) {
	if (argc > 1) {
		int n = atoi(argv[1]);
		if (n > 0)
			return n;
	}
	return def;
}

static inline uint32_t mix(uint32_t h, uint32_t v) { return (h ^ v) * 0x01000193u; }
