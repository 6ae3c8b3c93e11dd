/*
 * Writes the GLSL shaders that glslangValidator compiles in the benchmark:
 *
 *   genshaders DIR FUNCS
 *
 * writes one shader for each programmable stage of a graphics pipeline,
 * DIR/s.vert, s.tesc, s.tese, s.geom and s.frag, each with FUNCS functions
 * of loops, branches, switches, local arrays, structs and vector
 * arithmetic, the later ones calling earlier ones, and a main that calls
 * them. glslangValidator links the stages into one program and optimises
 * each stage's SPIR-V on its own. The shaders come from a fixed-seed
 * xorshift, so they are the same bytes on every machine: front end, SPIR-V
 * generation and the optimiser (inlining, scalar replacement, SSA,
 * constant propagation, dead code) all have real work to do.
 */
#include <stdio.h>
#include <stdlib.h>

static unsigned long long state = 0x9e3779b97f4a7c15ULL;

static unsigned next(void) {
	state ^= state << 13;
	state ^= state >> 7;
	state ^= state << 17;
	return (unsigned)(state >> 32);
}

static unsigned pick(unsigned n) { return next() % n; }

static FILE *out;
static int called; /* the function being written has a call */

/* A float expression of the given depth over the names in scope. */
static void fexpr(int depth, int nvars) {
	if (depth == 0 || pick(4) == 0) {
		switch (pick(4)) {
		case 0:
			fprintf(out, "%u.%02u", pick(8), pick(100));
			return;
		case 1:
			fprintf(out, "v.%c", "xyzw"[pick(4)]);
			return;
		default:
			fprintf(out, "t%u", pick(nvars));
			return;
		}
	}
	switch (pick(9)) {
	case 0:
		fputs("sin(", out);
		fexpr(depth - 1, nvars);
		fputs(")", out);
		return;
	case 1:
		fputs("max(", out);
		fexpr(depth - 1, nvars);
		fputs(", ", out);
		fexpr(depth - 1, nvars);
		fputs(")", out);
		return;
	case 2:
		fputs("clamp(", out);
		fexpr(depth - 1, nvars);
		fputs(", -4.0, 4.0)", out);
		return;
	case 3:
		fputs("mix(", out);
		fexpr(depth - 1, nvars);
		fputs(", ", out);
		fexpr(depth - 1, nvars);
		fprintf(out, ", 0.%u)", 1 + pick(9));
		return;
	case 4:
		fputs("dot(v, vec4(", out);
		fexpr(depth - 1, nvars);
		fputs("))", out);
		return;
	default:
		fputs("(", out);
		fexpr(depth - 1, nvars);
		fprintf(out, " %c ", "+-*+-*"[pick(6)]);
		fexpr(depth - 1, nvars);
		fputs(")", out);
		return;
	}
}

static void indent(int n) {
	for (int i = 0; i < n; i++)
		fputc('\t', out);
}

/* A statement at the given nesting, which may call functions below self. */
static void stmt(int nest, int nvars, int self) {
	int t = pick(nvars);
	switch (nest >= 3 ? 0 : pick(7)) {
	case 0:
	case 1:
		indent(nest);
		fprintf(out, "t%d = ", t);
		fexpr(3, nvars);
		fputs(";\n", out);
		return;
	case 2:
		indent(nest);
		fprintf(out, "if (t%u > ", pick(nvars));
		fexpr(1, nvars);
		fputs(") {\n", out);
		stmt(nest + 1, nvars, self);
		stmt(nest + 1, nvars, self);
		indent(nest);
		fputs("} else {\n", out);
		stmt(nest + 1, nvars, self);
		indent(nest);
		fputs("}\n", out);
		return;
	case 3: {
		indent(nest);
		fprintf(out, "for (int i%d = 0; i%d < %u; i%d++) {\n", nest, nest, 2 + pick(6), nest);
		stmt(nest + 1, nvars, self);
		stmt(nest + 1, nvars, self);
		indent(nest + 1);
		fprintf(out, "a[i%d & 7] += t%d;\n", nest, t);
		indent(nest);
		fputs("}\n", out);
		return;
	}
	case 4:
		indent(nest);
		fprintf(out, "switch (int(abs(t%u)) & 3) {\n", pick(nvars));
		for (int c = 0; c < 3; c++) {
			indent(nest);
			fprintf(out, "case %d:\n", c);
			stmt(nest + 1, nvars, self);
			indent(nest + 1);
			fputs("break;\n", out);
		}
		indent(nest);
		fputs("default:\n", out);
		indent(nest + 1);
		fprintf(out, "s.w[%u] = t%d;\n", pick(4), t);
		indent(nest);
		fputs("}\n", out);
		return;
	case 5:
		/* One call a function at most: the optimiser inlines every
		 * call, and more would grow the shaders exponentially. */
		if (self > 0 && !called) {
			called = 1;
			indent(nest);
			fprintf(out, "t%d += f%u(v * t%u, s);\n", t, pick(self), pick(nvars));
			return;
		}
		/* fall through */
	default:
		indent(nest);
		fprintf(out, "s.p += vec4(t%d, t%u, a[%u], s.w[%u]);\n", t, pick(nvars), pick(8), pick(4));
		return;
	}
}

/* The stages, with what each needs before its functions. */
static const struct {
	const char *ext, *layout;
} stages[] = {
	{"vert", ""},
	{"tesc", "layout(vertices = 3) out;\n"},
	{"tese", "layout(triangles) in;\n"},
	{"geom", "layout(points) in;\nlayout(points, max_vertices = 1) out;\n"},
	{"frag", "layout(location = 0) out vec4 colour;\n"},
};

static void shader(int stage, int funcs) {
	fprintf(out, "#version 450\n%s"
	             "struct State { vec4 p; float w[4]; };\n"
	             "layout(std430, binding = 0) readonly buffer In { vec4 src[]; };\n"
	             "layout(std430, binding = 1) buffer Out { State dst[]; };\n"
	             "layout(binding = 2) uniform Params { uint id; };\n",
	        stages[stage].layout);
	for (int f = 0; f < funcs; f++) {
		int nvars = 3 + pick(4);
		called = 0;
		fprintf(out, "\nfloat f%d(vec4 v, inout State s) {\n", f);
		fputs("\tfloat a[8] = float[8](0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0);\n", out);
		for (int i = 0; i < nvars; i++)
			fprintf(out, "\tfloat t%d = v.%c * %u.%u;\n", i, "xyzw"[i & 3], 1 + pick(4), pick(10));
		int n = 4 + pick(6);
		for (int i = 0; i < n; i++)
			stmt(1, nvars, f);
		fputs("\treturn t0", out);
		for (int i = 1; i < nvars; i++)
			fprintf(out, " + t%d", i);
		fputs(" + a[0] + a[7];\n}\n", out);
	}
	fputs("\nvoid main() {\n"
	      "\tState s = dst[id];\n"
	      "\tvec4 v = src[id];\n"
	      "\tfloat r = 0.0;\n",
	      out);
	for (int f = 0; f < funcs; f++)
		if (f >= funcs - 4 || pick(3) == 0)
			fprintf(out, "\tr += f%d(v + vec4(r), s);\n", f);
	fputs("\ts.p.x += r;\n"
	      "\tdst[id] = s;\n",
	      out);
	if (stage == 4)
		fputs("\tcolour = s.p;\n", out);
	else if (stage == 3)
		fputs("\tgl_Position = s.p;\n\tEmitVertex();\n", out);
	else if (stage == 1)
		fputs("\tgl_out[gl_InvocationID].gl_Position = s.p;\n", out);
	else
		fputs("\tgl_Position = s.p;\n", out);
	fputs("}\n", out);
}

int main(int argc, char **argv) {
	if (argc != 3) {
		fprintf(stderr, "usage: genshaders DIR FUNCS\n");
		return 2;
	}
	int funcs = atoi(argv[2]);
	for (int i = 0; i < (int)(sizeof stages / sizeof stages[0]); i++) {
		char name[4096];
		snprintf(name, sizeof name, "%s/s.%s", argv[1], stages[i].ext);
		out = fopen(name, "w");
		if (!out) {
			perror(name);
			return 1;
		}
		shader(i, funcs);
		if (fclose(out) != 0) {
			perror(name);
			return 1;
		}
	}
	return 0;
}
