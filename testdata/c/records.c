/*
 * records: validates and applies batches of inventory records, then exits
 * with status 3 because some batches are rejected.
 *
 * Errors are plain return codes carried up through four layers, each with
 * early returns, and resources are released with the `goto cleanup` idiom
 * instead of setjmp/longjmp. The exit status goes through exit() from a
 * nested call with an atexit handler registered, so that stdio flushing on
 * exit is exercised too.
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum err {
	E_OK,
	E_EMPTY,
	E_TOO_LONG,
	E_NOT_NUMBER,
	E_RANGE,
	E_FIELDS,
	E_DUPLICATE,
	E_UNKNOWN_OP,
	E_STOCK,
	E_NOMEM,
	NUM_ERRS
};

static const char *const err_text[NUM_ERRS] = {
	"ok", "empty field", "field too long", "not a number", "out of range",
	"wrong field count", "duplicate sku", "unknown operation", "insufficient stock",
	"out of memory",
};

struct err_ctx {
	enum err code;
	int line;
	int field;
};

#define MAX_FIELD 16

struct item {
	char sku[MAX_FIELD];
	int32_t qty;
	int32_t price_cents;
	struct item *next;
};

struct inventory {
	struct item *head;
	int count;
	int64_t value_cents;
};

static enum err set_err(struct err_ctx *ec, enum err code, int field)
{
	ec->code = code;
	ec->field = field;
	return code;
}

/* next_field copies up to the next ',' (or end of record) into out. */
static enum err next_field(const char **s, char *out)
{
	size_t n = strcspn(*s, ",");
	if (n == 0)
		return E_EMPTY;
	if (n >= MAX_FIELD)
		return E_TOO_LONG;
	memcpy(out, *s, n);
	out[n] = 0;
	*s += n;
	if (**s == ',')
		(*s)++;
	return E_OK;
}

static enum err parse_int(const char *f, int32_t lo, int32_t hi, int32_t *out)
{
	int64_t v = 0;
	int neg = 0;
	if (*f == '-') {
		neg = 1;
		f++;
	}
	if (*f == 0)
		return E_NOT_NUMBER;
	for (; *f; f++) {
		if (*f < '0' || *f > '9')
			return E_NOT_NUMBER;
		v = v * 10 + (*f - '0');
		if (v > 1000000000)
			return E_RANGE;
	}
	if (neg)
		v = -v;
	if (v < lo || v > hi)
		return E_RANGE;
	*out = (int32_t)v;
	return E_OK;
}

struct record {
	char op[MAX_FIELD];
	char sku[MAX_FIELD];
	int32_t qty;
	int32_t price_cents;
};

/* parse_record accepts "op,sku,qty,price" where op is add, sell or drop. */
static enum err parse_record(const char *line, struct record *r, struct err_ctx *ec)
{
	char f[MAX_FIELD];
	const char *s = line;
	enum err e;

	if ((e = next_field(&s, r->op)) != E_OK)
		return set_err(ec, e, 1);
	if ((e = next_field(&s, r->sku)) != E_OK)
		return set_err(ec, e, 2);
	if (strcmp(r->op, "drop") == 0) {
		if (*s != 0)
			return set_err(ec, E_FIELDS, 3);
		r->qty = r->price_cents = 0;
		return E_OK;
	}
	if ((e = next_field(&s, f)) != E_OK)
		return set_err(ec, e, 3);
	if ((e = parse_int(f, 1, 100000, &r->qty)) != E_OK)
		return set_err(ec, e, 3);
	if ((e = next_field(&s, f)) != E_OK)
		return set_err(ec, e, 4);
	if ((e = parse_int(f, 0, 10000000, &r->price_cents)) != E_OK)
		return set_err(ec, e, 4);
	if (*s != 0)
		return set_err(ec, E_FIELDS, 5);
	return E_OK;
}

static struct item *find(struct inventory *inv, const char *sku)
{
	for (struct item *it = inv->head; it; it = it->next)
		if (strcmp(it->sku, sku) == 0)
			return it;
	return NULL;
}

static enum err apply(struct inventory *inv, const struct record *r, struct err_ctx *ec)
{
	struct item *it = find(inv, r->sku);

	if (strcmp(r->op, "add") == 0) {
		if (it != NULL) {
			if (it->price_cents != r->price_cents)
				return set_err(ec, E_DUPLICATE, 2);
			it->qty += r->qty;
		} else {
			it = malloc(sizeof *it);
			if (it == NULL)
				return set_err(ec, E_NOMEM, 0);
			strcpy(it->sku, r->sku);
			it->qty = r->qty;
			it->price_cents = r->price_cents;
			it->next = inv->head;
			inv->head = it;
			inv->count++;
		}
		inv->value_cents += (int64_t)r->qty * r->price_cents;
		return E_OK;
	}
	if (strcmp(r->op, "sell") == 0) {
		if (it == NULL || it->qty < r->qty)
			return set_err(ec, E_STOCK, 3);
		it->qty -= r->qty;
		inv->value_cents -= (int64_t)r->qty * it->price_cents;
		return E_OK;
	}
	if (strcmp(r->op, "drop") == 0) {
		for (struct item **pp = &inv->head; *pp; pp = &(*pp)->next) {
			if (*pp != it)
				continue;
			*pp = it->next;
			inv->value_cents -= (int64_t)it->qty * it->price_cents;
			inv->count--;
			free(it);
			return E_OK;
		}
		return set_err(ec, E_STOCK, 2);
	}
	return set_err(ec, E_UNKNOWN_OP, 1);
}

static void free_inventory(struct inventory *inv)
{
	while (inv->head) {
		struct item *next = inv->head->next;
		free(inv->head);
		inv->head = next;
	}
	inv->count = 0;
	inv->value_cents = 0;
}

static enum err copy_inventory(const struct inventory *src, struct inventory *dst)
{
	struct item **tail = &dst->head;
	*dst = (struct inventory){ 0 };
	for (const struct item *it = src->head; it; it = it->next) {
		struct item *c = malloc(sizeof *c);
		if (c == NULL) {
			free_inventory(dst);
			return E_NOMEM;
		}
		*c = *it;
		c->next = NULL;
		*tail = c;
		tail = &c->next;
	}
	dst->count = src->count;
	dst->value_cents = src->value_cents;
	return E_OK;
}

/*
 * run_batch applies a batch of records transactionally: it works on a copy
 * and only replaces the live inventory if every record succeeded.
 */
static enum err run_batch(struct inventory *live, const char *batch, struct err_ctx *ec)
{
	struct inventory work;
	char *text = NULL;
	enum err e;

	ec->code = E_OK;
	ec->line = 0;
	if ((e = copy_inventory(live, &work)) != E_OK)
		return set_err(ec, e, 0);

	text = malloc(strlen(batch) + 1);
	if (text == NULL) {
		e = set_err(ec, E_NOMEM, 0);
		goto cleanup_work;
	}
	strcpy(text, batch);

	for (char *line = text, *end; *line; line = end) {
		end = line + strcspn(line, ";");
		if (*end)
			*end++ = 0;
		ec->line++;
		struct record r;
		if ((e = parse_record(line, &r, ec)) != E_OK)
			goto cleanup_text;
		if ((e = apply(&work, &r, ec)) != E_OK)
			goto cleanup_text;
	}

	free_inventory(live);
	*live = work;
	work = (struct inventory){ 0 };
	e = E_OK;

cleanup_text:
	free(text);
cleanup_work:
	free_inventory(&work);
	return e;
}

static const char *const batches[] = {
	"add,apple,10,50;add,pear,5,80;add,plum,20,30",
	"sell,apple,3,0;add,apple,2,50;drop,plum",
	"add,kiwi,4,120;sell,kiwi,5,0",                /* oversell */
	"add,fig,1,200;add,fig,1,250",                 /* price conflict */
	"add,lime,x1,10",                              /* not a number */
	"add,lime,1,10,extra",                         /* too many fields */
	"add,,1,10",                                   /* empty sku */
	"add,averyveryverylongname,1,10",              /* too long */
	"swap,apple,1,1",                              /* unknown op */
	"add,lime,0,10",                               /* qty out of range */
	"add,lime,7,15;sell,lime,7,0;add,lime,3,15",
	"drop,nothing",                                /* drop a missing sku */
};

static int rejected;

static void at_exit(void)
{
	printf("exit handler: %d batches rejected\n", rejected);
}

_Noreturn static void finish(const struct inventory *inv)
{
	printf("final: %d items, value %" PRId64 ".%02" PRId64 "\n", inv->count,
	       inv->value_cents / 100, inv->value_cents % 100);
	for (const struct item *it = inv->head; it; it = it->next)
		printf("  %-8s qty=%-4" PRId32 " price=%" PRId32 "\n", it->sku, it->qty,
		       it->price_cents);
	/* Exit from inside a call, not from main, with output still buffered. */
	exit(rejected ? 3 : 0);
}

int main(void)
{
	struct inventory inv = { 0 };
	int counts[NUM_ERRS] = { 0 };

	atexit(at_exit);
	for (size_t i = 0; i < sizeof batches / sizeof batches[0]; i++) {
		struct err_ctx ec;
		enum err e = run_batch(&inv, batches[i], &ec);
		counts[e]++;
		if (e != E_OK) {
			rejected++;
			printf("batch %zu: rejected at record %d field %d: %s\n", i + 1, ec.line,
			       ec.field, err_text[e]);
			continue;
		}
		printf("batch %zu: ok, %d items, value %" PRId64 "\n", i + 1, inv.count,
		       inv.value_cents);
	}
	for (int i = 0; i < NUM_ERRS; i++)
		if (counts[i])
			printf("%-20s %d\n", err_text[i], counts[i]);
	finish(&inv);
}
