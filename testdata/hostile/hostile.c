/*
 * A module whose DWARF names source files outside any directory a user
 * would allow: reports made from it must not read them. The #line
 * directives make clang record one function's lines under an absolute path
 * and another's under a relative path that climbs out of wherever the
 * module is; the tests write a marker into both files before reporting.
 */
#include <stdio.h>

#line 1 "/tmp/pathprof-secret/secret.c"
static int absolute_named(int n) {
	int s = 0;
	for (int i = 0; i < n; i++)
		s += i % 3 == 0 ? i : 1;
	return s;
}

#line 1 "../../../../../../../../../../../../../../../../tmp/pathprof-secret/climb.c"
static int relative_named(int n) {
	int s = 0;
	for (int i = 0; i < n; i++)
		s ^= i % 5 == 0 ? i : 2;
	return s;
}

#line 30 "hostile.c"
int main(void) {
	int a = 0, b = 0;
	for (int i = 0; i < 20; i++) {
		a += absolute_named(i);
		b += relative_named(i);
	}
	printf("%d %d\n", a, b);
	return 0;
}
