/* Substring search in a generated text: Knuth-Morris-Pratt and
 * Boyer-Moore-Horspool for many patterns, counting every occurrence. */
#include "common.h"
#include <string.h>

static int kmp(const char *t, int n, const char *p, int m, int *fail) {
	fail[0] = -1;
	for (int i = 1, k = -1; i < m; i++) {
		while (k >= 0 && p[k + 1] != p[i])
			k = fail[k];
		if (p[k + 1] == p[i])
			k++;
		fail[i] = k;
	}
	int count = 0;
	for (int i = 0, k = -1; i < n; i++) {
		while (k >= 0 && p[k + 1] != t[i])
			k = fail[k];
		if (p[k + 1] == t[i])
			k++;
		if (k == m - 1) {
			count++;
			k = fail[k];
		}
	}
	return count;
}

static int horspool(const char *t, int n, const char *p, int m) {
	int shift[256];
	for (int i = 0; i < 256; i++)
		shift[i] = m;
	for (int i = 0; i < m - 1; i++)
		shift[(unsigned char)p[i]] = m - 1 - i;
	int count = 0;
	for (int i = 0; i + m <= n; i += shift[(unsigned char)t[i + m - 1]]) {
		int j = m - 1;
		while (j >= 0 && t[i + j] == p[j])
			j--;
		if (j < 0)
			count++;
	}
	return count;
}

int main(int argc, char **argv) {
	int patterns = size(argc, argv, 40);
	enum { N = 1 << 20 };
	static char text[N];
	static const char words[][8] = {"the", "path", "loop", "count", "edge", "probe", "wasm", "copy"};
	int n = 0;
	while (n < N - 16) {
		const char *w = words[rnd() % 8];
		int l = (int)strlen(w);
		memcpy(text + n, w, l);
		n += l;
		text[n++] = rnd() % 5 ? ' ' : 'a' + rnd() % 26;
	}
	int fail[64];
	uint32_t h = 0;
	for (int q = 0; q < patterns; q++) {
		char p[24];
		int m = 3 + q % 12, at = (int)(rnd() % (n - m));
		memcpy(p, text + at, m);
		int a = kmp(text, n, p, m, fail), b = horspool(text, n, p, m);
		if (a != b)
			printf("mismatch on pattern %d\n", q);
		h = mix(h, (uint32_t)a);
	}
	printf("strsearch: %d patterns %08x\n", patterns, h);
	return 0;
}
