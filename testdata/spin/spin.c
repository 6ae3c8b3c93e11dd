/* spin: a loop-bound program for the interrupt tests. "spin M" runs
 * M·1200000 rounds of a little arithmetic without calling out (no WASI
 * call until the end), then prints a checksum. Each round calls step,
 * which is not inlined, so that every round completes paths of step and
 * of main's loop (a loop with a call keeps its counts in memory, not in
 * locals); every path's count before the print is a·M + b with a, b >= 0, which the
 * tests rely on (strtoull's paths depend on M's digits, not its value,
 * below 2^32). */
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) static unsigned step(unsigned i, unsigned acc) {
	if (i % 3 == 0)
		acc = acc * 31 + i;
	else if (i % 3 == 1)
		acc ^= i << 7;
	else
		acc += acc >> 3;
	if (i & 4)
		acc = (acc << 1) | (acc >> 31);
	return acc;
}

int main(int argc, char **argv) {
	unsigned long long n = (argc > 1 ? strtoull(argv[1], 0, 10) : 1) * 1200000ull;
	unsigned acc = 1;
	for (unsigned long long i = 0; i < n; i++)
		acc = step((unsigned)i, acc);
	printf("%u\n", acc);
	return 0;
}
