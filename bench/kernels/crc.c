/* CRC-32 two ways, bit by bit and table-driven, and Adler-32, over a
 * buffer refilled many times: the checksums of embedded code. */
#include "common.h"

static uint32_t table[256];

static uint32_t crc_bitwise(const uint8_t *p, int n, uint32_t crc) {
	crc = ~crc;
	for (int i = 0; i < n; i++) {
		crc ^= p[i];
		for (int k = 0; k < 8; k++)
			crc = crc & 1 ? (crc >> 1) ^ 0xEDB88320u : crc >> 1;
	}
	return ~crc;
}

static uint32_t crc_table(const uint8_t *p, int n, uint32_t crc) {
	crc = ~crc;
	for (int i = 0; i < n; i++)
		crc = table[(crc ^ p[i]) & 0xff] ^ (crc >> 8);
	return ~crc;
}

static uint32_t adler(const uint8_t *p, int n) {
	uint32_t a = 1, b = 0;
	for (int i = 0; i < n; i++) {
		a += p[i];
		if (a >= 65521)
			a -= 65521;
		b += a;
		if (b >= 65521)
			b -= 65521;
	}
	return b << 16 | a;
}

int main(int argc, char **argv) {
	int rounds = size(argc, argv, 400);
	for (uint32_t i = 0; i < 256; i++)
		table[i] = crc_bitwise((uint8_t[]){(uint8_t)i}, 1, 0xffffffffu) ^ 0xff000000u;
	for (uint32_t i = 0; i < 256; i++) { /* the table from its definition */
		uint32_t c = i;
		for (int k = 0; k < 8; k++)
			c = c & 1 ? (c >> 1) ^ 0xEDB88320u : c >> 1;
		table[i] = c;
	}
	enum { N = 16384 };
	static uint8_t buf[N];
	uint32_t c1 = 0, c2 = 0, h = 0;
	for (int r = 0; r < rounds; r++) {
		for (int i = 0; i < N; i++)
			buf[i] = (uint8_t)(rnd() >> (r % 24));
		if (r % 8 == 0)
			c1 = crc_bitwise(buf, N, c1);
		c2 = crc_table(buf, N, c2);
		h = mix(h, adler(buf, N));
	}
	printf("crc: %d rounds %08x %08x %08x\n", rounds, c1, c2, h);
	return 0;
}
