/* Bit manipulation as embedded code does it without intrinsics: counting
 * bits three ways, reversing, parity, and a software division. */
#include "common.h"

static int pop_loop(uint32_t x) {
	int n = 0;
	for (; x; x >>= 1)
		n += x & 1;
	return n;
}

static int pop_kernighan(uint32_t x) {
	int n = 0;
	for (; x; x &= x - 1)
		n++;
	return n;
}

static int pop_swar(uint32_t x) {
	x = x - ((x >> 1) & 0x55555555u);
	x = (x & 0x33333333u) + ((x >> 2) & 0x33333333u);
	return (int)((((x + (x >> 4)) & 0x0F0F0F0Fu) * 0x01010101u) >> 24);
}

static uint32_t reverse(uint32_t x) {
	uint32_t r = 0;
	for (int i = 0; i < 32; i++, x >>= 1)
		r = r << 1 | (x & 1);
	return r;
}

static uint32_t divide(uint32_t n, uint32_t d, uint32_t *rem) {
	uint32_t q = 0, r = 0;
	for (int i = 31; i >= 0; i--) {
		r = r << 1 | (n >> i & 1);
		if (r >= d) {
			r -= d;
			q |= 1u << i;
		}
	}
	*rem = r;
	return q;
}

int main(int argc, char **argv) {
	int n = size(argc, argv, 600000);
	uint32_t h = 0;
	int bad = 0;
	for (int i = 0; i < n; i++) {
		uint32_t x = rnd(), r;
		int a = pop_loop(x), b = pop_kernighan(x & rnd()), c = pop_swar(x);
		if (a != c)
			bad++;
		uint32_t q = divide(x, 1 + (rnd() & 0xffff), &r);
		h = mix(h, (uint32_t)(a + b) ^ reverse(x) ^ q ^ r ^ (uint32_t)(pop_swar(x) & 1));
	}
	printf("bitops: %d values %08x%s\n", n, h, bad ? " MISMATCH" : "");
	return 0;
}
