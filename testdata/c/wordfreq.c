/*
 * wordfreq: a tokenizer state machine and a word-frequency count.
 *
 * The scanner is a single loop over the characters with an explicit state
 * variable and a switch on it, which compiles to a loop whose body is a
 * branch table of small blocks. Words go into an open-addressing hash
 * table; the report sorts them with qsort.
 */
#include <ctype.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char sample[] =
	"/* A small text that looks a little like code and a little like prose. */\n"
	"The quick brown fox jumps over the lazy dog; the dog does not jump.\n"
	"x = 0x1F + 42 * 3.25 - 7; // trailing comment with the word fox\n"
	"\"a string with \\\"escaped\\\" quotes, and the word dog\" is one token.\n"
	"Numbers: 1, 22, 333, 4444, 0xff, 0XABC, 12.5e3 and 007.\n"
	"# a shell-style comment line\n"
	"The end of the text is near; the end is here. THE END.\n"
	"'single quoted' strings are strings too, unlike don't and it's.\n"
	"an_identifier_with_underscores and CamelCaseWords and x86_64.\n"
	"\"an unterminated string runs to the end of the line\n"
	"/* a block comment\n   over two lines */ after the comment.\n";

enum state { S_START, S_WORD, S_NUMBER, S_HEX, S_FRACTION, S_EXPONENT,
	     S_STRING, S_ESCAPE, S_SLASH, S_LINE_COMMENT, S_BLOCK_COMMENT,
	     S_BLOCK_STAR };

enum token { T_WORD, T_NUMBER, T_STRING, T_COMMENT, T_PUNCT, T_ERROR, NUM_TOKENS };

static const char *const token_names[NUM_TOKENS] = {
	"words", "numbers", "strings", "comments", "punctuation", "errors",
};

#define TABLE_SIZE 4096 /* power of two: probing masks instead of dividing */
#define MAX_WORD 40

struct entry {
	char word[MAX_WORD];
	uint32_t count;
	uint32_t first_line;
};

struct stats {
	uint32_t tokens[NUM_TOKENS];
	uint32_t lines;
	struct entry table[TABLE_SIZE];
	uint32_t distinct;
	uint32_t dropped;
	char longest[MAX_WORD];
	uint32_t longest_line, longest_col;
};

static uint32_t hash(const char *s)
{
	uint32_t h = 2166136261u;
	while (*s)
		h = (h ^ (uint8_t)*s++) * 16777619u;
	return h;
}

static void add_word(struct stats *st, const char *w, uint32_t line, uint32_t col)
{
	size_t len = strlen(w);
	if (len > strlen(st->longest)) {
		strcpy(st->longest, w);
		st->longest_line = line;
		st->longest_col = col;
	}
	for (uint32_t h = hash(w), i = 0; i < TABLE_SIZE; i++) {
		struct entry *e = &st->table[(h + i) & (TABLE_SIZE - 1)];
		if (e->count == 0) {
			strcpy(e->word, w);
			e->count = 1;
			e->first_line = line;
			st->distinct++;
			return;
		}
		if (strcmp(e->word, w) == 0) {
			e->count++;
			return;
		}
	}
	st->dropped++; /* table full */
}

/*
 * scan tokenizes text. Words are folded to lower case; apostrophes inside
 * words (don't) are kept, but a leading one starts a string.
 */
static void scan(struct stats *st, const char *text)
{
	enum state s = S_START;
	char word[MAX_WORD];
	size_t wlen = 0;
	char quote = 0;
	uint32_t line = 1, col = 0, start_col = 0;

	for (const char *p = text;; p++) {
		int c = (unsigned char)*p;
		col++;
	again:
		switch (s) {
		case S_START:
			start_col = col;
			if (c == 0)
				goto done;
			if (isalpha(c) || c == '_') {
				wlen = 0;
				word[wlen++] = (char)tolower(c);
				s = S_WORD;
			} else if (c == '0' && (p[1] == 'x' || p[1] == 'X')) {
				p++;
				col++;
				s = S_HEX;
			} else if (isdigit(c)) {
				s = S_NUMBER;
			} else if (c == '"' || c == '\'') {
				quote = (char)c;
				s = S_STRING;
			} else if (c == '/') {
				s = S_SLASH;
			} else if (c == '#') {
				s = S_LINE_COMMENT;
			} else if (ispunct(c)) {
				st->tokens[T_PUNCT]++;
			}
			break;
		case S_WORD:
			if (isalnum(c) || c == '_' || (c == '\'' && isalpha((unsigned char)p[1]))) {
				if (wlen + 1 < MAX_WORD)
					word[wlen++] = (char)tolower(c);
				break;
			}
			word[wlen] = 0;
			add_word(st, word, line, start_col);
			st->tokens[T_WORD]++;
			s = S_START;
			goto again;
		case S_NUMBER:
			if (isdigit(c))
				break;
			if (c == '.' && isdigit((unsigned char)p[1])) {
				s = S_FRACTION;
				break;
			}
			if (c == 'e' || c == 'E') {
				s = S_EXPONENT;
				break;
			}
			st->tokens[T_NUMBER]++;
			s = S_START;
			goto again;
		case S_FRACTION:
			if (isdigit(c))
				break;
			if (c == 'e' || c == 'E') {
				s = S_EXPONENT;
				break;
			}
			st->tokens[T_NUMBER]++;
			s = S_START;
			goto again;
		case S_EXPONENT:
			if (isdigit(c) || c == '+' || c == '-')
				break;
			st->tokens[T_NUMBER]++;
			s = S_START;
			goto again;
		case S_HEX:
			if (isxdigit(c))
				break;
			st->tokens[T_NUMBER]++;
			s = S_START;
			goto again;
		case S_STRING:
			if (c == '\\') {
				s = S_ESCAPE;
			} else if (c == quote) {
				st->tokens[T_STRING]++;
				s = S_START;
			} else if (c == '\n' || c == 0) {
				/* Unterminated: count it and resynchronise on the newline. */
				st->tokens[T_ERROR]++;
				s = S_START;
				goto again;
			}
			break;
		case S_ESCAPE:
			if (c == 0) {
				st->tokens[T_ERROR]++;
				goto done;
			}
			s = S_STRING;
			break;
		case S_SLASH:
			if (c == '/') {
				s = S_LINE_COMMENT;
			} else if (c == '*') {
				s = S_BLOCK_COMMENT;
			} else {
				st->tokens[T_PUNCT]++;
				s = S_START;
				goto again;
			}
			break;
		case S_LINE_COMMENT:
			if (c == '\n' || c == 0) {
				st->tokens[T_COMMENT]++;
				s = S_START;
				goto again;
			}
			break;
		case S_BLOCK_COMMENT:
			if (c == '*')
				s = S_BLOCK_STAR;
			else if (c == 0)
				goto unterminated_comment;
			break;
		case S_BLOCK_STAR:
			if (c == '/') {
				st->tokens[T_COMMENT]++;
				s = S_START;
			} else if (c == 0) {
				goto unterminated_comment;
			} else if (c != '*') {
				s = S_BLOCK_COMMENT;
			}
			break;
		}
		if (c == '\n') {
			line++;
			col = 0;
		}
	}
unterminated_comment:
	st->tokens[T_ERROR]++;
done:
	st->lines += line;
}

static int by_count(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;
	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return strcmp(x->word, y->word);
}

static void report(const char *title, struct stats *st, int top)
{
	printf("[%s] lines=%" PRIu32 " distinct=%" PRIu32 " dropped=%" PRIu32 "\n", title,
	       st->lines, st->distinct, st->dropped);
	for (int i = 0; i < NUM_TOKENS; i++)
		printf("  %-12s %" PRIu32 "\n", token_names[i], st->tokens[i]);
	printf("  longest word: %s at %" PRIu32 ":%" PRIu32 "\n", st->longest,
	       st->longest_line, st->longest_col);

	/* Compact the table in place; the hash order is no longer needed. */
	int n = 0;
	for (int i = 0; i < TABLE_SIZE; i++)
		if (st->table[i].count != 0)
			st->table[n++] = st->table[i];
	qsort(st->table, (size_t)n, sizeof st->table[0], by_count);
	for (int i = 0; i < n && i < top; i++)
		printf("  %3" PRIu32 " %s (line %" PRIu32 ")\n", st->table[i].count,
		       st->table[i].word, st->table[i].first_line);
}

/* generate writes pseudo-random prose built from a fixed syllable list. */
static void generate(char *buf, size_t size, uint32_t seed)
{
	static const char *const syl[] = { "ka", "lo", "mi", "ne", "ru", "ta",
					   "shi", "vo", "en", "ar", "qu", "zy" };
	static const char *const seps[] = { " ", " ", " ", ", ", ". ", "\n", " 42 ",
					    " \"q\" ", " /* c */ ", " 0x7f " };
	size_t n = 0;
	while (n + 64 < size) {
		seed = seed * 1103515245u + 12345u;
		int syllables = 1 + (int)((seed >> 16) % 3);
		for (int i = 0; i < syllables; i++) {
			seed = seed * 1103515245u + 12345u;
			const char *s = syl[(seed >> 16) % (sizeof syl / sizeof syl[0])];
			while (*s)
				buf[n++] = *s++;
		}
		seed = seed * 1103515245u + 12345u;
		const char *s = seps[(seed >> 16) % (sizeof seps / sizeof seps[0])];
		while (*s)
			buf[n++] = *s++;
	}
	buf[n] = 0;
}

int main(void)
{
	static struct stats st;
	static char big[300000];

	scan(&st, sample);
	report("sample", &st, 12);

	memset(&st, 0, sizeof st);
	generate(big, sizeof big, 2024);
	scan(&st, big);
	report("generated", &st, 8);
	return 0;
}
