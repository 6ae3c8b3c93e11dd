/* A lexer as compilers and parsers have: a state machine over character
 * classes that splits generated source text into identifiers, numbers,
 * strings, comments and operators, and counts each kind. */
#include "common.h"

enum { IDENT, NUMBER, STRING, COMMENT, OP, SPACE, KINDS };

static const char *snippets[] = {
    "int x = 42;", "/* note */", "s = \"text\\n\";", "if (a <= b) return a;", "y += 0x1F;",
    "// line\n", "while (i < n) i++;", "f(3.25e-2, 'c');", "a->b = c >> 2;", "\t\n"};

static void lex(const char *s, int n, long counts[KINDS]) {
	int i = 0;
	while (i < n) {
		char c = s[i];
		if (c == ' ' || c == '\t' || c == '\n') {
			while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n'))
				i++;
			counts[SPACE]++;
		} else if (c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) {
			while (i < n && (s[i] == '_' || (s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
			                 (s[i] >= '0' && s[i] <= '9')))
				i++;
			counts[IDENT]++;
		} else if (c >= '0' && c <= '9') {
			if (c == '0' && i + 1 < n && (s[i + 1] == 'x' || s[i + 1] == 'X')) {
				i += 2;
				while (i < n && ((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f') || (s[i] >= 'A' && s[i] <= 'F')))
					i++;
			} else {
				while (i < n && ((s[i] >= '0' && s[i] <= '9') || s[i] == '.'))
					i++;
				if (i < n && (s[i] == 'e' || s[i] == 'E')) {
					i++;
					if (i < n && (s[i] == '+' || s[i] == '-'))
						i++;
					while (i < n && s[i] >= '0' && s[i] <= '9')
						i++;
				}
			}
			counts[NUMBER]++;
		} else if (c == '"' || c == '\'') {
			for (i++; i < n && s[i] != c; i++)
				if (s[i] == '\\')
					i++;
			i++;
			counts[STRING]++;
		} else if (c == '/' && i + 1 < n && s[i + 1] == '/') {
			while (i < n && s[i] != '\n')
				i++;
			counts[COMMENT]++;
		} else if (c == '/' && i + 1 < n && s[i + 1] == '*') {
			for (i += 2; i + 1 < n && !(s[i] == '*' && s[i + 1] == '/'); i++)
				;
			i += 2;
			counts[COMMENT]++;
		} else {
			switch (c) {
			case '<': case '>': case '=': case '!': case '+': case '-': case '&': case '|':
				i++;
				if (i < n && (s[i] == '=' || s[i] == c || (c == '-' && s[i] == '>')))
					i++;
				break;
			default:
				i++;
			}
			counts[OP]++;
		}
	}
}

int main(int argc, char **argv) {
	int rounds = size(argc, argv, 40);
	enum { N = 1 << 18 };
	static char text[N + 64];
	int n = 0;
	while (n < N) {
		const char *s = snippets[rnd() % 10];
		while (*s)
			text[n++] = *s++;
		text[n++] = rnd() % 3 ? ' ' : '\n';
	}
	long counts[KINDS] = {0};
	for (int r = 0; r < rounds; r++)
		lex(text + r % 7, n - r % 7, counts);
	printf("lexer: %d rounds:", rounds);
	for (int k = 0; k < KINDS; k++)
		printf(" %ld", counts[k]);
	printf("\n");
	return 0;
}
