/*
 * gentext SIZE: writes SIZE bytes of English-looking text to standard
 * output, the same bytes on every machine (a fixed-seed xorshift, no
 * floating point), as the input the compressors of the suite work on.
 * Word frequencies are skewed like a natural language's, so the text
 * compresses about as well as prose does, neither trivially nor not at all.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t state = 0x9E3779B97F4A7C15u;

static uint32_t next(void) {
	state ^= state << 13;
	state ^= state >> 7;
	state ^= state << 17;
	return (uint32_t)(state >> 32);
}

static uint32_t below(uint32_t n) { return next() % n; }

#define NWORDS 4096

static const char *syllables[] = {
	"a", "an", "ar", "ba", "be", "bo", "ca", "co", "de", "di", "do", "e",
	"el", "en", "er", "fa", "fi", "ga", "ge", "ha", "he", "i", "in", "is",
	"ka", "la", "le", "li", "lo", "ma", "me", "mi", "mo", "na", "ne", "no",
	"o", "on", "or", "pa", "pe", "ra", "re", "ri", "ro", "sa", "se", "si",
	"so", "ta", "te", "ti", "to", "u", "un", "ur", "va", "ve", "wa", "ya",
};
#define NSYL (sizeof syllables / sizeof syllables[0])

static char words[NWORDS][24];

/* zipf picks word i with a probability falling roughly like 1/(i+1). */
static const char *zipf(void) {
	uint32_t r = below(1u << 20);
	uint32_t i = (uint32_t)(((uint64_t)r * r >> 20) * r >> 20); /* r^3 */
	return words[(uint64_t)i * NWORDS >> 20];
}

int main(int argc, char **argv) {
	if (argc != 2) {
		fprintf(stderr, "usage: gentext SIZE\n");
		return 2;
	}
	long size = atol(argv[1]);
	for (int i = 0; i < NWORDS; i++) {
		int n = 1 + (int)below(4);
		words[i][0] = 0;
		for (int j = 0; j < n; j++)
			strcat(words[i], syllables[below(NSYL)]);
	}
	char line[128];
	int len = 0, sentence = 1;
	long written = 0;
	while (written < size) {
		char word[40];
		const char *w = zipf();
		if (below(40) == 0)
			snprintf(word, sizeof word, "%u", below(100000));
		else
			snprintf(word, sizeof word, "%s", w);
		if (sentence && word[0] >= 'a' && word[0] <= 'z')
			word[0] -= 'a' - 'A';
		sentence = 0;
		size_t wl = strlen(word);
		uint32_t p = below(100);
		if (p < 8) {
			word[wl++] = '.';
			sentence = 1;
		} else if (p < 14) {
			word[wl++] = ',';
		}
		word[wl] = 0;
		if (len > 0 && len + 1 + (int)wl > 72) {
			line[len++] = '\n';
			fwrite(line, 1, (size_t)len, stdout);
			written += len;
			len = 0;
			if (sentence && below(6) == 0) {
				fputc('\n', stdout);
				written++;
			}
		}
		if (len > 0)
			line[len++] = ' ';
		memcpy(line + len, word, wl);
		len += (int)wl;
	}
	return 0;
}
