/*
 * grid: puzzles on small grids, written with deeply nested loops, goto out
 * of nested loops and early returns.
 *
 * Usage: grid [N]   where N (4..10, default 8) is the N-queens board size.
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* queens counts placements by backtracking, with bitmasks for attacks. */
static uint32_t queens(int n, int row, uint32_t cols, uint32_t d1, uint32_t d2,
		       int *first, int *have_first)
{
	if (row == n) {
		*have_first = 1;
		return 1;
	}
	uint32_t count = 0;
	uint32_t free_cols = ~(cols | d1 | d2) & ((1u << n) - 1);
	while (free_cols) {
		uint32_t bit = free_cols & -free_cols;
		free_cols ^= bit;
		if (!*have_first)
			first[row] = __builtin_ctz(bit);
		count += queens(n, row + 1, cols | bit, (d1 | bit) << 1, (d2 | bit) >> 1, first,
				have_first);
	}
	return count;
}

#define W 40
#define H 24

/* life runs Conway's game of life on a torus and stops early on a cycle. */
static void life(void)
{
	static uint8_t cur[H][W], next[H][W];
	static uint64_t seen[256];
	uint32_t seed = 7;

	for (int y = 0; y < H; y++)
		for (int x = 0; x < W; x++) {
			seed = seed * 1103515245u + 12345u;
			cur[y][x] = (seed >> 16) % 3 == 0;
		}

	int gen;
	for (gen = 0; gen < 256; gen++) {
		uint64_t h = 1469598103934665603ull;
		int alive = 0;
		for (int y = 0; y < H; y++)
			for (int x = 0; x < W; x++) {
				h = (h ^ cur[y][x]) * 1099511628211ull;
				alive += cur[y][x];
			}
		for (int g = 0; g < gen; g++) {
			if (seen[g] == h) {
				printf("life: generation %d repeats generation %d (period %d), %d alive\n",
				       gen, g, gen - g, alive);
				return;
			}
		}
		seen[gen] = h;
		if (alive == 0) {
			printf("life: extinct at generation %d\n", gen);
			return;
		}
		for (int y = 0; y < H; y++)
			for (int x = 0; x < W; x++) {
				int nb = 0;
				for (int dy = -1; dy <= 1; dy++)
					for (int dx = -1; dx <= 1; dx++) {
						if (dx == 0 && dy == 0)
							continue;
						nb += cur[(y + dy + H) % H][(x + dx + W) % W];
					}
				next[y][x] = nb == 3 || (nb == 2 && cur[y][x]);
			}
		memcpy(cur, next, sizeof cur);
	}
	printf("life: no cycle within %d generations\n", gen);
}

#define MW 61
#define MH 31

static char maze[MH][MW + 1];

/* carve builds a maze with an iterative depth-first search. */
static void carve(uint32_t seed)
{
	static int stack[MW * MH];
	static const int dx[] = { 2, -2, 0, 0 }, dy[] = { 0, 0, 2, -2 };
	int sp = 0;

	for (int y = 0; y < MH; y++) {
		memset(maze[y], '#', MW);
		maze[y][MW] = 0;
	}
	maze[1][1] = ' ';
	stack[sp++] = 1 * MW + 1;
	while (sp > 0) {
		int cell = stack[sp - 1], x = cell % MW, y = cell / MW;
		int order[4] = { 0, 1, 2, 3 };
		for (int i = 3; i > 0; i--) {
			seed = seed * 1103515245u + 12345u;
			int j = (int)((seed >> 16) % (uint32_t)(i + 1)), t = order[i];
			order[i] = order[j];
			order[j] = t;
		}
		int moved = 0;
		for (int k = 0; k < 4 && !moved; k++) {
			int nx = x + dx[order[k]], ny = y + dy[order[k]];
			if (nx <= 0 || ny <= 0 || nx >= MW - 1 || ny >= MH - 1)
				continue;
			if (maze[ny][nx] != '#')
				continue;
			maze[y + dy[order[k]] / 2][x + dx[order[k]] / 2] = ' ';
			maze[ny][nx] = ' ';
			stack[sp++] = ny * MW + nx;
			moved = 1;
		}
		if (!moved)
			sp--;
	}
}

/* solve returns the BFS distance from (1,1) to (tx,ty) and marks the path. */
static int solve(int tx, int ty)
{
	static int dist[MH][MW], queue[MW * MH];
	static const int dx[] = { 1, -1, 0, 0 }, dy[] = { 0, 0, 1, -1 };
	int head = 0, tail = 0;

	if (maze[ty][tx] != ' ')
		return -1;
	for (int y = 0; y < MH; y++)
		for (int x = 0; x < MW; x++)
			dist[y][x] = -1;
	dist[1][1] = 0;
	queue[tail++] = 1 * MW + 1;
	while (head < tail) {
		int cell = queue[head++], x = cell % MW, y = cell / MW;
		if (x == tx && y == ty)
			goto found;
		for (int k = 0; k < 4; k++) {
			int nx = x + dx[k], ny = y + dy[k];
			if (maze[ny][nx] == '#' || dist[ny][nx] >= 0)
				continue;
			dist[ny][nx] = dist[y][x] + 1;
			queue[tail++] = ny * MW + nx;
		}
	}
	return -1;

found:
	/* Walk back along decreasing distances to mark the path. */
	for (int x = tx, y = ty; dist[y][x] > 0;) {
		maze[y][x] = '.';
		for (int k = 0; k < 4; k++) {
			int nx = x + dx[k], ny = y + dy[k];
			if (dist[ny][nx] == dist[y][x] - 1) {
				x = nx;
				y = ny;
				break;
			}
		}
	}
	maze[1][1] = '.';
	return dist[ty][tx];
}

/*
 * find_saddle looks for an entry that is the minimum of its row and the
 * maximum of its column; goto leaves both loops as soon as one is found.
 */
static int find_saddle(int n, const int32_t m[][8], int *ry, int *rx)
{
	for (int y = 0; y < n; y++) {
		for (int x = 0; x < n; x++) {
			for (int k = 0; k < n; k++)
				if (m[y][k] < m[y][x])
					goto next_cell;
			for (int k = 0; k < n; k++)
				if (m[k][x] > m[y][x])
					goto next_cell;
			*ry = y;
			*rx = x;
			return 1;
		next_cell:;
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	int n = 8;
	if (argc > 1) {
		n = atoi(argv[1]);
		if (n < 4 || n > 10) {
			fprintf(stderr, "grid: board size must be 4..10\n");
			return 2;
		}
	}

	int first[16], have_first = 0;
	uint32_t solutions = queens(n, 0, 0, 0, 0, first, &have_first);
	printf("queens(%d): %" PRIu32 " solutions, first:", n, solutions);
	for (int i = 0; i < n; i++)
		printf(" %d", first[i]);
	printf("\n");

	life();

	carve(99);
	int d = solve(MW - 2, MH - 2);
	printf("maze: shortest path %d\n", d);
	for (int y = 0; y < MH; y++)
		printf("%s\n", maze[y]);

	static int32_t m[8][8];
	uint32_t seed = 5;
	int found = 0;
	for (int trial = 0; trial < 200; trial++) {
		for (int y = 0; y < 8; y++)
			for (int x = 0; x < 8; x++) {
				seed = seed * 1103515245u + 12345u;
				m[y][x] = (int32_t)((seed >> 16) % 100);
			}
		int sy, sx;
		if (find_saddle(4 + trial % 5, (const int32_t(*)[8])m, &sy, &sx)) {
			found++;
			if (found <= 3)
				printf("saddle: trial %d size %d at (%d,%d) = %" PRId32 "\n", trial,
				       4 + trial % 5, sy, sx, m[sy][sx]);
		}
	}
	printf("saddle points found in %d of 200 matrices\n", found);
	return 0;
}
