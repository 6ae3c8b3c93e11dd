/* spew: a program that writes much output, for the tests of the copies'
 * output streams. "spew M" writes M MiB to stdout, in 64 KiB blocks: byte
 * j of block b is (b·131 + j·7) mod 256. */
#include <stdio.h>
#include <stdlib.h>

static unsigned char block[65536];

int main(int argc, char **argv) {
	unsigned long m = argc > 1 ? strtoul(argv[1], 0, 10) : 1;
	for (unsigned long b = 0; b < m * 16; b++) {
		for (unsigned j = 0; j < sizeof block; j++)
			block[j] = (unsigned char)(b * 131 + j * 7);
		if (fwrite(block, 1, sizeof block, stdout) != sizeof block)
			return 1;
	}
	return 0;
}
