/*
 * vm: a two-pass assembler and a stack-machine interpreter.
 *
 * The interpreter is the classic dispatch loop around one large switch,
 * which is the shape of control flow path profiling finds hardest: one hot
 * loop whose body has dozens of arms. The assembler in front of it adds
 * string scanning and a symbol table.
 *
 * Values are int32_t and overflow wraps explicitly, so the output does not
 * depend on the target.
 */
#include <ctype.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum op {
	OP_HALT, OP_PUSH, OP_POP, OP_DUP, OP_SWAP, OP_OVER, OP_ROT,
	OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_MOD, OP_NEG,
	OP_AND, OP_OR, OP_XOR, OP_SHL, OP_SHR, OP_NOT,
	OP_EQ, OP_NE, OP_LT, OP_LE, OP_GT, OP_GE,
	OP_JMP, OP_JZ, OP_JNZ, OP_CALL, OP_RET,
	OP_LOAD, OP_STORE, OP_LOADI, OP_STOREI,
	OP_INC, OP_DEC, OP_PRINT, OP_PRINTC,
	NUM_OPS
};

static const struct {
	const char *name;
	int has_arg;
} op_info[NUM_OPS] = {
	[OP_HALT] = { "halt", 0 }, [OP_PUSH] = { "push", 1 },
	[OP_POP] = { "pop", 0 }, [OP_DUP] = { "dup", 0 },
	[OP_SWAP] = { "swap", 0 }, [OP_OVER] = { "over", 0 },
	[OP_ROT] = { "rot", 0 }, [OP_ADD] = { "add", 0 },
	[OP_SUB] = { "sub", 0 }, [OP_MUL] = { "mul", 0 },
	[OP_DIV] = { "div", 0 }, [OP_MOD] = { "mod", 0 },
	[OP_NEG] = { "neg", 0 }, [OP_AND] = { "and", 0 },
	[OP_OR] = { "or", 0 }, [OP_XOR] = { "xor", 0 },
	[OP_SHL] = { "shl", 0 }, [OP_SHR] = { "shr", 0 },
	[OP_NOT] = { "not", 0 }, [OP_EQ] = { "eq", 0 },
	[OP_NE] = { "ne", 0 }, [OP_LT] = { "lt", 0 },
	[OP_LE] = { "le", 0 }, [OP_GT] = { "gt", 0 },
	[OP_GE] = { "ge", 0 }, [OP_JMP] = { "jmp", 1 },
	[OP_JZ] = { "jz", 1 }, [OP_JNZ] = { "jnz", 1 },
	[OP_CALL] = { "call", 1 }, [OP_RET] = { "ret", 0 },
	[OP_LOAD] = { "load", 1 }, [OP_STORE] = { "store", 1 },
	[OP_LOADI] = { "loadi", 0 }, [OP_STOREI] = { "storei", 0 },
	[OP_INC] = { "inc", 1 }, [OP_DEC] = { "dec", 1 },
	[OP_PRINT] = { "print", 0 }, [OP_PRINTC] = { "printc", 0 },
};

#define MAX_CODE 1024
#define MAX_LABELS 64
#define STACK_SIZE 256
#define RSTACK_SIZE 256
#define MEM_SIZE 65536

struct program {
	int32_t code[MAX_CODE];
	int len;
	struct {
		char name[24];
		int addr;
	} labels[MAX_LABELS];
	int nlabels;
};

enum vm_status {
	VM_OK,
	VM_STACK_OVERFLOW,
	VM_STACK_UNDERFLOW,
	VM_DIV_ZERO,
	VM_BAD_ADDRESS,
	VM_BAD_OPCODE,
	VM_STEP_LIMIT,
};

static const char *const vm_status_text[] = {
	"ok", "stack overflow", "stack underflow", "division by zero",
	"bad address", "bad opcode", "step limit reached",
};

struct vm {
	int32_t stack[STACK_SIZE];
	int sp;
	int32_t rstack[RSTACK_SIZE];
	int rsp;
	int32_t mem[MEM_SIZE];
	uint64_t steps;
	uint32_t out_hash;
	int quiet;
};

static int find_label(const struct program *p, const char *name)
{
	for (int i = 0; i < p->nlabels; i++)
		if (strcmp(p->labels[i].name, name) == 0)
			return p->labels[i].addr;
	return -1;
}

static int lookup_op(const char *name)
{
	for (int i = 0; i < NUM_OPS; i++)
		if (strcmp(op_info[i].name, name) == 0)
			return i;
	return -1;
}

/*
 * assemble runs twice over the source: the first pass only records label
 * addresses so that the second can resolve forward jumps.
 */
static int assemble(const char *src, struct program *p)
{
	memset(p, 0, sizeof *p);
	for (int pass = 0; pass < 2; pass++) {
		const char *s = src;
		int lineno = 0;
		p->len = 0;
		while (*s) {
			char line[128], word[24], arg[24];
			size_t n = strcspn(s, "\n");
			if (n >= sizeof line) {
				printf("asm: line %d too long\n", lineno + 1);
				return -1;
			}
			memcpy(line, s, n);
			line[n] = 0;
			s += n + (s[n] == '\n');
			lineno++;

			char *hash = strchr(line, ';');
			if (hash)
				*hash = 0;
			char *colon = strchr(line, ':');
			char *rest = line;
			if (colon) {
				*colon = 0;
				if (pass == 0) {
					if (p->nlabels == MAX_LABELS) {
						printf("asm: too many labels\n");
						return -1;
					}
					if (sscanf(line, " %23s", p->labels[p->nlabels].name) != 1) {
						printf("asm: line %d: empty label\n", lineno);
						return -1;
					}
					p->labels[p->nlabels++].addr = p->len;
				}
				rest = colon + 1;
			}
			int nw = sscanf(rest, " %23s %23s", word, arg);
			if (nw <= 0)
				continue;
			int op = lookup_op(word);
			if (op < 0) {
				printf("asm: line %d: unknown instruction %s\n", lineno, word);
				return -1;
			}
			if (p->len + 2 > MAX_CODE) {
				printf("asm: program too long\n");
				return -1;
			}
			p->code[p->len++] = op;
			if (!op_info[op].has_arg) {
				if (nw == 2) {
					printf("asm: line %d: %s takes no operand\n", lineno, word);
					return -1;
				}
				continue;
			}
			if (nw != 2) {
				printf("asm: line %d: %s needs an operand\n", lineno, word);
				return -1;
			}
			int32_t val = 0;
			if (isdigit((unsigned char)arg[0]) || arg[0] == '-') {
				/* Not strtol: long is 32 bits on wasm32 and would saturate. */
				val = (int32_t)(uint32_t)strtoll(arg, NULL, 0);
			} else if (arg[0] == '\'') {
				val = (unsigned char)arg[1];
			} else if (pass == 1) {
				val = find_label(p, arg);
				if (val < 0) {
					printf("asm: line %d: undefined label %s\n", lineno, arg);
					return -1;
				}
			}
			p->code[p->len++] = val;
		}
	}
	return 0;
}

#define WRAP(expr) ((int32_t)(uint32_t)(expr))

static void emit(struct vm *vm, const char *text)
{
	for (const char *c = text; *c; c++)
		vm->out_hash = (vm->out_hash ^ (uint8_t)*c) * 16777619u;
	if (!vm->quiet)
		fputs(text, stdout);
}

static enum vm_status run(struct vm *vm, const struct program *p, uint64_t max_steps)
{
	int pc = 0;
	vm->sp = 0;
	vm->rsp = 0;
	vm->steps = 0;

/* Checks stay in macros so that every arm of the switch has its own exits. */
#define NEED(n) do { if (vm->sp < (n)) return VM_STACK_UNDERFLOW; } while (0)
#define ROOM(n) do { if (vm->sp + (n) > STACK_SIZE) return VM_STACK_OVERFLOW; } while (0)
#define ADDR(a) do { if ((uint32_t)(a) >= MEM_SIZE) return VM_BAD_ADDRESS; } while (0)
#define TOP vm->stack[vm->sp - 1]
#define NEXT vm->stack[vm->sp - 2]
#define BINOP(expr) do { NEED(2); int32_t b = TOP, a = NEXT; vm->sp--; TOP = (expr); (void)a; (void)b; } while (0)

	for (;;) {
		if (pc < 0 || pc >= p->len)
			return VM_BAD_ADDRESS;
		if (++vm->steps > max_steps)
			return VM_STEP_LIMIT;
		int32_t op = p->code[pc++];
		int32_t arg = op_info[op < 0 || op >= NUM_OPS ? 0 : op].has_arg ? p->code[pc++] : 0;
		char buf[32];

		switch (op) {
		case OP_HALT:
			return VM_OK;
		case OP_PUSH:
			ROOM(1);
			vm->stack[vm->sp++] = arg;
			break;
		case OP_POP:
			NEED(1);
			vm->sp--;
			break;
		case OP_DUP:
			NEED(1);
			ROOM(1);
			vm->stack[vm->sp] = TOP;
			vm->sp++;
			break;
		case OP_SWAP: {
			NEED(2);
			int32_t t = TOP;
			TOP = NEXT;
			NEXT = t;
			break;
		}
		case OP_OVER:
			NEED(2);
			ROOM(1);
			vm->stack[vm->sp] = NEXT;
			vm->sp++;
			break;
		case OP_ROT: {
			NEED(3);
			int32_t a = vm->stack[vm->sp - 3];
			vm->stack[vm->sp - 3] = NEXT;
			NEXT = TOP;
			TOP = a;
			break;
		}
		case OP_ADD: BINOP(WRAP((uint32_t)a + (uint32_t)b)); break;
		case OP_SUB: BINOP(WRAP((uint32_t)a - (uint32_t)b)); break;
		case OP_MUL: BINOP(WRAP((uint32_t)a * (uint32_t)b)); break;
		case OP_DIV:
		case OP_MOD:
			NEED(2);
			if (TOP == 0)
				return VM_DIV_ZERO;
			if (TOP == -1) {
				/* INT32_MIN / -1 would trap. */
				vm->sp--;
				TOP = op == OP_DIV ? WRAP(0u - (uint32_t)TOP) : 0;
				break;
			}
			if (op == OP_DIV)
				BINOP(a / b);
			else
				BINOP(a % b);
			break;
		case OP_NEG:
			NEED(1);
			TOP = WRAP(0u - (uint32_t)TOP);
			break;
		case OP_AND: BINOP(a & b); break;
		case OP_OR: BINOP(a | b); break;
		case OP_XOR: BINOP(a ^ b); break;
		case OP_SHL: BINOP(WRAP((uint32_t)a << (b & 31))); break;
		case OP_SHR: BINOP(WRAP((uint32_t)a >> (b & 31))); break;
		case OP_NOT:
			NEED(1);
			TOP = !TOP;
			break;
		case OP_EQ: BINOP(a == b); break;
		case OP_NE: BINOP(a != b); break;
		case OP_LT: BINOP(a < b); break;
		case OP_LE: BINOP(a <= b); break;
		case OP_GT: BINOP(a > b); break;
		case OP_GE: BINOP(a >= b); break;
		case OP_JMP:
			pc = arg;
			break;
		case OP_JZ:
			NEED(1);
			if (vm->stack[--vm->sp] == 0)
				pc = arg;
			break;
		case OP_JNZ:
			NEED(1);
			if (vm->stack[--vm->sp] != 0)
				pc = arg;
			break;
		case OP_CALL:
			if (vm->rsp == RSTACK_SIZE)
				return VM_STACK_OVERFLOW;
			vm->rstack[vm->rsp++] = pc;
			pc = arg;
			break;
		case OP_RET:
			if (vm->rsp == 0)
				return VM_STACK_UNDERFLOW;
			pc = vm->rstack[--vm->rsp];
			break;
		case OP_LOAD:
			ADDR(arg);
			ROOM(1);
			vm->stack[vm->sp++] = vm->mem[arg];
			break;
		case OP_STORE:
			ADDR(arg);
			NEED(1);
			vm->mem[arg] = vm->stack[--vm->sp];
			break;
		case OP_LOADI:
			NEED(1);
			ADDR(TOP);
			TOP = vm->mem[TOP];
			break;
		case OP_STOREI: /* ( value addr -- ) */
			NEED(2);
			ADDR(TOP);
			vm->mem[TOP] = NEXT;
			vm->sp -= 2;
			break;
		case OP_INC:
			ADDR(arg);
			vm->mem[arg] = WRAP((uint32_t)vm->mem[arg] + 1);
			break;
		case OP_DEC:
			ADDR(arg);
			vm->mem[arg] = WRAP((uint32_t)vm->mem[arg] - 1);
			break;
		case OP_PRINT:
			NEED(1);
			snprintf(buf, sizeof buf, "%" PRId32, vm->stack[--vm->sp]);
			emit(vm, buf);
			break;
		case OP_PRINTC:
			NEED(1);
			buf[0] = (char)vm->stack[--vm->sp];
			buf[1] = 0;
			emit(vm, buf);
			break;
		default:
			return VM_BAD_OPCODE;
		}
	}
#undef NEED
#undef ROOM
#undef ADDR
#undef TOP
#undef NEXT
#undef BINOP
}

/* Memory map used by the programs below: 0..15 scalars, 100.. arrays. */
static const char prog_sieve[] =
	"; count primes below 20000 with the sieve of Eratosthenes\n"
	"        push 2\n"
	"        store 0          ; i = 2\n"
	"outer:  load 0\n"
	"        push 20000\n"
	"        ge\n"
	"        jnz count\n"
	"        load 0\n"
	"        push 100\n"
	"        add\n"
	"        loadi\n"
	"        jnz nexti        ; already crossed out\n"
	"        load 0\n"
	"        dup\n"
	"        mul\n"
	"        store 1          ; j = i*i\n"
	"inner:  load 1\n"
	"        push 20000\n"
	"        ge\n"
	"        jnz nexti\n"
	"        push 1\n"
	"        load 1\n"
	"        push 100\n"
	"        add\n"
	"        storei\n"
	"        load 1\n"
	"        load 0\n"
	"        add\n"
	"        store 1\n"
	"        jmp inner\n"
	"nexti:  inc 0\n"
	"        jmp outer\n"
	"count:  push 0\n"
	"        store 2          ; n = 0\n"
	"        push 2\n"
	"        store 0\n"
	"cloop:  load 0\n"
	"        push 20000\n"
	"        ge\n"
	"        jnz done\n"
	"        load 0\n"
	"        push 100\n"
	"        add\n"
	"        loadi\n"
	"        jnz cnext\n"
	"        inc 2\n"
	"cnext:  inc 0\n"
	"        jmp cloop\n"
	"done:   push 'p\n"
	"        printc\n"
	"        push 32\n"
	"        printc\n"
	"        load 2\n"
	"        print\n"
	"        push 10\n"
	"        printc\n"
	"        halt\n";

static const char prog_fib[] =
	"; naive recursive fib(22), to exercise call and ret\n"
	"        push 22\n"
	"        call fib\n"
	"        print\n"
	"        push 10\n"
	"        printc\n"
	"        halt\n"
	"fib:    dup\n"
	"        push 2\n"
	"        lt\n"
	"        jnz fibret\n"
	"        dup\n"
	"        push 1\n"
	"        sub\n"
	"        call fib\n"
	"        swap\n"
	"        push 2\n"
	"        sub\n"
	"        call fib\n"
	"        add\n"
	"fibret: ret\n";

static const char prog_gcd_table[] =
	"; print gcd(a, b) for a, b in 1..12, as rows of digits mod 10\n"
	"        push 1\n"
	"        store 0\n"
	"rowl:   load 0\n"
	"        push 12\n"
	"        gt\n"
	"        jnz end\n"
	"        push 1\n"
	"        store 1\n"
	"coll:   load 1\n"
	"        push 12\n"
	"        gt\n"
	"        jnz rowend\n"
	"        load 0\n"
	"        load 1\n"
	"gcd:    dup\n"
	"        jz gcddone\n"
	"        swap\n"
	"        over\n"
	"        mod\n"
	"        jmp gcd\n"
	"gcddone: pop\n"
	"        push 10\n"
	"        mod\n"
	"        push '0\n"
	"        add\n"
	"        printc\n"
	"        inc 1\n"
	"        jmp coll\n"
	"rowend: push 10\n"
	"        printc\n"
	"        inc 0\n"
	"        jmp rowl\n"
	"end:    halt\n";

static const char prog_hash[] =
	"; xorshift loop: 200000 rounds, only the final state is printed\n"
	"        push 2463534242\n"
	"        store 0\n"
	"        push 200000\n"
	"        store 1\n"
	"loop:   load 1\n"
	"        jz out\n"
	"        load 0\n"
	"        dup\n"
	"        push 13\n"
	"        shl\n"
	"        xor\n"
	"        dup\n"
	"        push 17\n"
	"        shr\n"
	"        xor\n"
	"        dup\n"
	"        push 5\n"
	"        shl\n"
	"        xor\n"
	"        store 0\n"
	"        dec 1\n"
	"        jmp loop\n"
	"out:    load 0\n"
	"        print\n"
	"        push 10\n"
	"        printc\n"
	"        halt\n";

/* The faulty programs check that each error exit of the interpreter works. */
static const char prog_underflow[] = "push 1\nadd\nhalt\n";
static const char prog_divzero[] = "push 1\npush 0\ndiv\nhalt\n";
static const char prog_badaddr[] = "push 70000\nloadi\nhalt\n";
static const char prog_runaway[] = "top: jmp top\n";
static const char prog_deep[] = "f: call f\n";
static const char prog_bad_asm[] = "push 1\nfrobnicate\n";
static const char prog_bad_label[] = "jmp nowhere\n";

static const struct {
	const char *name;
	const char *src;
} programs[] = {
	{ "sieve", prog_sieve },
	{ "fib", prog_fib },
	{ "gcd-table", prog_gcd_table },
	{ "xorshift", prog_hash },
	{ "underflow", prog_underflow },
	{ "divzero", prog_divzero },
	{ "bad-address", prog_badaddr },
	{ "runaway", prog_runaway },
	{ "deep", prog_deep },
	{ "bad-asm", prog_bad_asm },
	{ "bad-label", prog_bad_label },
};

int main(void)
{
	static struct program prog;
	static struct vm vm;
	uint64_t total_steps = 0;

	for (size_t i = 0; i < sizeof programs / sizeof programs[0]; i++) {
		printf("== %s\n", programs[i].name);
		if (assemble(programs[i].src, &prog) != 0)
			continue;
		memset(vm.mem, 0, sizeof vm.mem);
		vm.out_hash = 2166136261u;
		enum vm_status st = run(&vm, &prog, 5000000);
		total_steps += vm.steps;
		printf("-- %s: %s after %" PRIu64 " steps, %d words, output hash %08" PRIx32 "\n",
		       programs[i].name, vm_status_text[st], vm.steps, prog.len, vm.out_hash);
	}
	printf("total steps: %" PRIu64 "\n", total_steps);
	return 0;
}
