/*
 * calc: a line-oriented calculator with variables and built-in functions.
 *
 * Each input line is a statement, either `name = expr` or `expr`. The
 * parser is recursive descent with one function per precedence level, and
 * errors travel back up as a sticky status in the parser state rather than
 * through setjmp/longjmp, so every level has an early-return path.
 *
 * Arithmetic is on int64_t with checked division, so the output is the same
 * on every target.
 */
#include <ctype.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

enum status {
	OK,
	ERR_SYNTAX,
	ERR_UNDEFINED,
	ERR_DIVZERO,
	ERR_ARITY,
	ERR_RANGE,
	ERR_DEPTH,
};

static const char *const status_text[] = {
	[OK] = "ok",
	[ERR_SYNTAX] = "syntax error",
	[ERR_UNDEFINED] = "undefined name",
	[ERR_DIVZERO] = "division by zero",
	[ERR_ARITY] = "wrong number of arguments",
	[ERR_RANGE] = "argument out of range",
	[ERR_DEPTH] = "expression too deep",
};

#define MAX_VARS 64
#define MAX_NAME 32
#define MAX_ARGS 4
#define MAX_DEPTH 64

struct var {
	char name[MAX_NAME];
	int64_t value;
};

static struct var vars[MAX_VARS];
static int nvars;

struct parser {
	const char *s;
	size_t pos;
	enum status st;
	size_t err_pos;
	int depth;
};

static int64_t parse_expr(struct parser *p);

/*
 * Overflow wraps instead of being undefined, so that optimisation levels and
 * targets cannot disagree about the result.
 */
static int64_t wrap_add(int64_t a, int64_t b) { return (int64_t)((uint64_t)a + (uint64_t)b); }
static int64_t wrap_sub(int64_t a, int64_t b) { return (int64_t)((uint64_t)a - (uint64_t)b); }
static int64_t wrap_mul(int64_t a, int64_t b) { return (int64_t)((uint64_t)a * (uint64_t)b); }

static void fail(struct parser *p, enum status st)
{
	/* Keep the first error: later ones are usually consequences of it. */
	if (p->st == OK) {
		p->st = st;
		p->err_pos = p->pos;
	}
}

static void skip_space(struct parser *p)
{
	while (p->s[p->pos] == ' ' || p->s[p->pos] == '\t')
		p->pos++;
}

static int peek(struct parser *p)
{
	skip_space(p);
	return (unsigned char)p->s[p->pos];
}

/* accept consumes tok if the input continues with it. */
static int accept(struct parser *p, const char *tok)
{
	size_t n = strlen(tok);
	skip_space(p);
	if (strncmp(p->s + p->pos, tok, n) != 0)
		return 0;
	/* "<" must not swallow the first half of "<=", nor "=" of "==". */
	if (n == 1 && strchr("<>=!", tok[0]) && p->s[p->pos + 1] == '=')
		return 0;
	if (n == 1 && (tok[0] == '&' || tok[0] == '|') && p->s[p->pos + 1] == tok[0])
		return 0;
	p->pos += n;
	return 1;
}

static void expect(struct parser *p, const char *tok)
{
	if (!accept(p, tok))
		fail(p, ERR_SYNTAX);
}

static int parse_name(struct parser *p, char *out)
{
	size_t n = 0;
	skip_space(p);
	if (!isalpha((unsigned char)p->s[p->pos]) && p->s[p->pos] != '_')
		return 0;
	while (isalnum((unsigned char)p->s[p->pos]) || p->s[p->pos] == '_') {
		if (n + 1 < MAX_NAME)
			out[n++] = p->s[p->pos];
		p->pos++;
	}
	out[n] = 0;
	return 1;
}

static struct var *lookup(const char *name, int create)
{
	for (int i = 0; i < nvars; i++)
		if (strcmp(vars[i].name, name) == 0)
			return &vars[i];
	if (!create || nvars == MAX_VARS)
		return NULL;
	strcpy(vars[nvars].name, name);
	vars[nvars].value = 0;
	return &vars[nvars++];
}

/* Built-in functions share one signature so they can live in a table. */
typedef enum status (*builtin_fn)(const int64_t *args, int n, int64_t *out);

static enum status fn_min(const int64_t *a, int n, int64_t *out)
{
	if (n < 1)
		return ERR_ARITY;
	*out = a[0];
	for (int i = 1; i < n; i++)
		if (a[i] < *out)
			*out = a[i];
	return OK;
}

static enum status fn_max(const int64_t *a, int n, int64_t *out)
{
	if (n < 1)
		return ERR_ARITY;
	*out = a[0];
	for (int i = 1; i < n; i++)
		if (a[i] > *out)
			*out = a[i];
	return OK;
}

static enum status fn_abs(const int64_t *a, int n, int64_t *out)
{
	if (n != 1)
		return ERR_ARITY;
	*out = a[0] < 0 ? wrap_sub(0, a[0]) : a[0];
	return OK;
}

static enum status fn_gcd(const int64_t *a, int n, int64_t *out)
{
	if (n != 2)
		return ERR_ARITY;
	uint64_t x = a[0] < 0 ? 0 - (uint64_t)a[0] : (uint64_t)a[0];
	uint64_t y = a[1] < 0 ? 0 - (uint64_t)a[1] : (uint64_t)a[1];
	while (y != 0) {
		uint64_t t = x % y;
		x = y;
		y = t;
	}
	*out = (int64_t)x;
	return OK;
}

static enum status fn_fib(const int64_t *a, int n, int64_t *out)
{
	if (n != 1)
		return ERR_ARITY;
	if (a[0] < 0 || a[0] > 90)
		return ERR_RANGE;
	int64_t x = 0, y = 1;
	for (int64_t i = 0; i < a[0]; i++) {
		int64_t t = x + y;
		x = y;
		y = t;
	}
	*out = x;
	return OK;
}

/* collatz returns the number of steps to reach 1. */
static enum status fn_collatz(const int64_t *a, int n, int64_t *out)
{
	if (n != 1)
		return ERR_ARITY;
	if (a[0] < 1 || a[0] > 1000000000)
		return ERR_RANGE;
	int64_t x = a[0], steps = 0;
	while (x != 1) {
		x = (x & 1) ? 3 * x + 1 : x / 2;
		steps++;
	}
	*out = steps;
	return OK;
}

/* maxcollatz scans 1..n for the longest Collatz chain: a deliberate hot loop. */
static enum status fn_maxcollatz(const int64_t *a, int n, int64_t *out)
{
	if (n != 1)
		return ERR_ARITY;
	if (a[0] < 1 || a[0] > 200000)
		return ERR_RANGE;
	int64_t best = 1, best_steps = 0;
	for (int64_t i = 1; i <= a[0]; i++) {
		int64_t s;
		fn_collatz(&i, 1, &s);
		if (s > best_steps) {
			best_steps = s;
			best = i;
		}
	}
	*out = best;
	return OK;
}

static const struct {
	const char *name;
	builtin_fn fn;
} builtins[] = {
	{ "min", fn_min },
	{ "max", fn_max },
	{ "abs", fn_abs },
	{ "gcd", fn_gcd },
	{ "fib", fn_fib },
	{ "collatz", fn_collatz },
	{ "maxcollatz", fn_maxcollatz },
};

static int64_t call_builtin(struct parser *p, const char *name)
{
	int64_t args[MAX_ARGS];
	int n = 0;

	if (!accept(p, ")")) {
		do {
			int64_t v = parse_expr(p);
			if (p->st != OK)
				return 0;
			if (n == MAX_ARGS) {
				fail(p, ERR_ARITY);
				return 0;
			}
			args[n++] = v;
		} while (accept(p, ","));
		expect(p, ")");
		if (p->st != OK)
			return 0;
	}
	for (size_t i = 0; i < sizeof builtins / sizeof builtins[0]; i++) {
		if (strcmp(builtins[i].name, name) != 0)
			continue;
		int64_t out = 0;
		enum status st = builtins[i].fn(args, n, &out);
		if (st != OK)
			fail(p, st);
		return out;
	}
	fail(p, ERR_UNDEFINED);
	return 0;
}

static int64_t parse_primary(struct parser *p)
{
	char name[MAX_NAME];
	int c = peek(p);

	if (isdigit(c)) {
		int64_t v = 0;
		while (isdigit((unsigned char)p->s[p->pos])) {
			v = v * 10 + (p->s[p->pos] - '0');
			p->pos++;
		}
		return v;
	}
	if (accept(p, "(")) {
		int64_t v = parse_expr(p);
		expect(p, ")");
		return v;
	}
	if (parse_name(p, name)) {
		if (accept(p, "("))
			return call_builtin(p, name);
		struct var *v = lookup(name, 0);
		if (v == NULL) {
			fail(p, ERR_UNDEFINED);
			return 0;
		}
		return v->value;
	}
	fail(p, ERR_SYNTAX);
	return 0;
}

static int64_t parse_unary(struct parser *p);

static int64_t ipow(int64_t base, int64_t exp)
{
	int64_t r = 1;
	while (exp > 0) {
		if (exp & 1)
			r = wrap_mul(r, base);
		base = wrap_mul(base, base);
		exp >>= 1;
	}
	return r;
}

static int64_t parse_power(struct parser *p)
{
	int64_t base = parse_primary(p);
	if (p->st != OK)
		return 0;
	if (!accept(p, "^"))
		return base;
	/* Right associative: the exponent is itself a unary expression. */
	int64_t exp = parse_unary(p);
	if (p->st != OK)
		return 0;
	if (exp < 0 || exp > 62) {
		fail(p, ERR_RANGE);
		return 0;
	}
	return ipow(base, exp);
}

static int64_t parse_unary(struct parser *p)
{
	if (++p->depth > MAX_DEPTH) {
		fail(p, ERR_DEPTH);
		return 0;
	}
	int64_t v;
	if (accept(p, "-"))
		v = wrap_sub(0, parse_unary(p));
	else if (accept(p, "!"))
		v = !parse_unary(p);
	else
		v = parse_power(p);
	p->depth--;
	return v;
}

static int64_t parse_mul(struct parser *p)
{
	int64_t v = parse_unary(p);
	for (;;) {
		if (p->st != OK)
			return 0;
		int op = peek(p);
		if (op != '*' && op != '/' && op != '%')
			return v;
		p->pos++;
		int64_t r = parse_unary(p);
		switch (op) {
		case '*':
			v = wrap_mul(v, r);
			break;
		case '/':
		case '%':
			if (r == 0) {
				fail(p, ERR_DIVZERO);
				return 0;
			}
			/* INT64_MIN / -1 traps in wasm; -1 needs no division anyway. */
			if (r == -1)
				v = op == '/' ? wrap_sub(0, v) : 0;
			else
				v = op == '/' ? v / r : v % r;
			break;
		}
	}
}

static int64_t parse_add(struct parser *p)
{
	int64_t v = parse_mul(p);
	while (p->st == OK) {
		if (accept(p, "+"))
			v = wrap_add(v, parse_mul(p));
		else if (accept(p, "-"))
			v = wrap_sub(v, parse_mul(p));
		else
			break;
	}
	return v;
}

static int64_t parse_cmp(struct parser *p)
{
	static const char *const ops[] = { "==", "!=", "<=", ">=", "<", ">" };
	int64_t v = parse_add(p);
	while (p->st == OK) {
		int which = -1;
		for (int i = 0; i < 6 && which < 0; i++)
			if (accept(p, ops[i]))
				which = i;
		if (which < 0)
			break;
		int64_t r = parse_add(p);
		switch (which) {
		case 0: v = v == r; break;
		case 1: v = v != r; break;
		case 2: v = v <= r; break;
		case 3: v = v >= r; break;
		case 4: v = v < r; break;
		default: v = v > r; break;
		}
	}
	return v;
}

static int64_t parse_and(struct parser *p)
{
	int64_t v = parse_cmp(p);
	while (p->st == OK && accept(p, "&&")) {
		/* Both sides are parsed even when short-circuiting, to advance. */
		int64_t r = parse_cmp(p);
		v = v && r;
	}
	return v;
}

static int64_t parse_or(struct parser *p)
{
	int64_t v = parse_and(p);
	while (p->st == OK && accept(p, "||")) {
		int64_t r = parse_and(p);
		v = v || r;
	}
	return v;
}

static int64_t parse_expr(struct parser *p)
{
	int64_t cond = parse_or(p);
	if (p->st != OK || !accept(p, "?"))
		return cond;
	int64_t a = parse_expr(p);
	expect(p, ":");
	int64_t b = parse_expr(p);
	return cond ? a : b;
}

/* run_line evaluates one statement and prints its result or its error. */
static enum status run_line(const char *line, int lineno)
{
	struct parser p = { .s = line };
	char name[MAX_NAME];
	const char *assign_to = NULL;

	if (peek(&p) == 0 || peek(&p) == '#')
		return OK;

	size_t start = p.pos;
	if (parse_name(&p, name) && accept(&p, "="))
		assign_to = name;
	else
		p.pos = start;

	int64_t v = parse_expr(&p);
	if (p.st == OK && peek(&p) != 0)
		fail(&p, ERR_SYNTAX);
	if (p.st != OK) {
		printf("%d: error: %s at column %zu\n", lineno, status_text[p.st], p.err_pos + 1);
		return p.st;
	}
	if (assign_to != NULL) {
		struct var *var = lookup(assign_to, 1);
		if (var == NULL) {
			printf("%d: error: too many variables\n", lineno);
			return ERR_RANGE;
		}
		var->value = v;
		printf("%d: %s = %" PRId64 "\n", lineno, assign_to, v);
	} else {
		printf("%d: %" PRId64 "\n", lineno, v);
	}
	return OK;
}

int main(void)
{
	char line[1024];
	int lineno = 0, errors = 0;

	while (fgets(line, sizeof line, stdin) != NULL) {
		lineno++;
		line[strcspn(line, "\r\n")] = 0;
		if (run_line(line, lineno) != OK)
			errors++;
	}
	printf("lines: %d, errors: %d, variables: %d\n", lineno, errors, nvars);
	return 0;
}
