// A library built as a WASI reactor (clang -mexec-model=reactor): no
// _start, _initialize and exported functions, which pathprof profiles
// with --invoke.
#include <stdio.h>
#include <stdint.h>

#define EXPORT(name) __attribute__((export_name(name)))

static int table[16];

// Run by _initialize, as constructors are in a reactor.
__attribute__((constructor)) static void init(void) {
	for (int i = 0; i < 16; i++)
		table[i] = i * i % 7;
}

EXPORT("fib") int fib(int n) {
	return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

EXPORT("lookup_sum") int64_t lookup_sum(int64_t n, int32_t step) {
	int64_t s = 0;
	for (int64_t i = 0; i < n; i++)
		s += table[(i * step) & 15] & 1 ? table[i & 15] : -1;
	return s;
}

EXPORT("poly") double poly(double x, float c) {
	double r = 0;
	for (int i = 0; i < 5; i++)
		r = r * x + (i % 2 ? c : -c);
	return r;
}

EXPORT("hello") void hello(void) {
	printf("hello from the reactor, table[3] = %d\n", table[3]);
}
