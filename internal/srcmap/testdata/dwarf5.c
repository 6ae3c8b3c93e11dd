// A tiny program built with DWARF 5 line tables (clang-14 emits DWARF 4
// unless told otherwise), for the srcmap tests:
//
//	clang-14 --target=wasm32-wasi -O1 -gdwarf-5 -fdebug-prefix-map=$PWD=. -o dwarf5.wasm dwarf5.c
//
// wasi-libc's own objects keep their DWARF 4, so the module mixes both.

static int sq(int x)
{
	return x * x;
}

__attribute__((noinline)) int sum(int n)
{
	int s = 0;
	for (int i = 0; i < n; i++)
		s += sq(i);
	return s;
}

static volatile int n = 10;

int main(void)
{
	return sum(n) & 1;
}
