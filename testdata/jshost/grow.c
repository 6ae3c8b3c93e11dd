// A program for JavaScript hosts: its heap grows well past emscripten's
// initial memory, so the glue grows the memory from JavaScript while the
// program counts paths.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct node {
	unsigned key, count;
	struct node *left, *right;
};

static unsigned state = 2463534242u;

static unsigned next(void) {
	state ^= state << 13;
	state ^= state >> 17;
	state ^= state << 5;
	return state;
}

static struct node *insert(struct node *t, unsigned key) {
	struct node **p = &t;
	while (*p) {
		if (key < (*p)->key)
			p = &(*p)->left;
		else if (key > (*p)->key)
			p = &(*p)->right;
		else {
			(*p)->count++;
			return t;
		}
	}
	*p = calloc(1, sizeof **p);
	(*p)->key = key;
	(*p)->count = 1;
	return t;
}

static unsigned depth(const struct node *t) {
	if (!t)
		return 0;
	unsigned l = depth(t->left), r = depth(t->right);
	return 1 + (l > r ? l : r);
}

static unsigned steps(unsigned n) {
	unsigned s = 0;
	while (n != 1) {
		n = n % 2 ? 3 * n + 1 : n / 2;
		s++;
	}
	return s;
}

// run is the program. main calls it through a pointer, which keeps
// binaryen from inlining it into main and main into _start (as the
// standalone build would), so that run is the same function in both builds.
static int run(unsigned n) {
	// A vector that doubles by realloc, and blocks of 1 MiB kept alive:
	// together well above the 16 MiB the memory starts with.
	size_t pages = __builtin_wasm_memory_size(0);
	unsigned *v = NULL;
	size_t len = 0, cap = 0;
	char *blocks[48];
	int nblocks = 0;
	struct node *tree = NULL;
	unsigned long long sum = 0;
	for (unsigned i = 0; i < n; i++) {
		if (len == cap) {
			cap = cap ? 2 * cap : 16;
			v = realloc(v, cap * sizeof *v);
			if (!v)
				return 2;
		}
		unsigned x = next();
		v[len++] = x;
		if (i % (n / 40 + 1) == 0 && nblocks < 48) {
			blocks[nblocks] = malloc(1 << 20);
			if (!blocks[nblocks])
				return 3;
			memset(blocks[nblocks], nblocks, 1 << 20);
			nblocks++;
		}
		tree = insert(tree, x % (n / 4 + 1));
		switch (x % 5) {
		case 0:
			sum += steps(x % 1000 + 1);
			break;
		case 1:
		case 2:
			sum += x >> 20;
			break;
		default:
			sum ^= x;
		}
	}
	unsigned long long bsum = 0;
	for (int b = 0; b < nblocks; b++)
		bsum += (unsigned char)blocks[b][b * 4099 % (1 << 20)];
	printf("n=%u len=%zu cap=%zu blocks=%d depth=%u sum=%llu bsum=%llu last=%u grew=%d\n",
	       n, len, cap, nblocks, depth(tree), sum, bsum, v[len - 1],
	       __builtin_wasm_memory_size(0) > pages);
	return 0;
}

static int (*volatile run_ptr)(unsigned) = run;

int main(int argc, char **argv) {
	return run_ptr(argc > 1 ? (unsigned)atoi(argv[1]) : 200000);
}
