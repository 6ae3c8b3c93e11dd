# The big Debian program python's input: pure Python work over the
# interpreter's core (bytecode dispatch, objects, dicts, strings, the
# parser and compiler) and C modules of the standard library (json, re,
# pickle, struct, decimal, heapq, collections, hashlib's built-in
# hashes). Every choice comes from a seeded random.Random, and nothing it
# prints depends on hash randomisation, object addresses or libm: sets are
# sorted before they are printed, and floats see only +, -, *, / and sqrt,
# which every libm rounds the same.
import ast
import collections
import decimal
import fractions
import hashlib
import heapq
import itertools
import json
import math
import pickle
import random
import re
import struct
import textwrap

rng = random.Random(20261127)
digest = hashlib.sha256()


def emit(label, value):
    text = f"{label}: {value}"
    digest.update(text.encode())
    print(text)


# --- an expression language: tokenizer, parser, evaluator -----------------

TOKEN = re.compile(r"\s*(?:(\d+)|([A-Za-z_]\w*)|(\*\*|//|[-+*/%()<>=!]=?|[?:,]))")


class Node:
    __slots__ = ()


class Num(Node):
    __slots__ = ("v",)

    def __init__(self, v):
        self.v = v

    def eval(self, env):
        return self.v


class Var(Node):
    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def eval(self, env):
        return env[self.name]


class Bin(Node):
    __slots__ = ("op", "a", "b")
    OPS = {
        "+": lambda a, b: a + b,
        "-": lambda a, b: a - b,
        "*": lambda a, b: a * b,
        "//": lambda a, b: a // b if b else 0,
        "%": lambda a, b: a % b if b else 0,
        "<": lambda a, b: int(a < b),
        ">": lambda a, b: int(a > b),
        "==": lambda a, b: int(a == b),
        "!=": lambda a, b: int(a != b),
    }

    def __init__(self, op, a, b):
        self.op, self.a, self.b = op, a, b

    def eval(self, env):
        return self.OPS[self.op](self.a.eval(env), self.b.eval(env))


class Cond(Node):
    __slots__ = ("c", "t", "f")

    def __init__(self, c, t, f):
        self.c, self.t, self.f = c, t, f

    def eval(self, env):
        return self.t.eval(env) if self.c.eval(env) else self.f.eval(env)


class Call(Node):
    __slots__ = ("fn", "args")
    FUNCS = {"min": min, "max": max, "abs": abs, "gcd": math.gcd}

    def __init__(self, fn, args):
        self.fn, self.args = fn, args

    def eval(self, env):
        return self.FUNCS[self.fn](*(a.eval(env) for a in self.args))


class Parser:
    LEVELS = [("==", "!="), ("<", ">"), ("+", "-"), ("*", "//", "%")]

    def __init__(self, text):
        self.toks = []
        pos = 0
        while pos < len(text):
            m = TOKEN.match(text, pos)
            if not m:
                raise SyntaxError(text[pos:])
            pos = m.end()
            num, name, op = m.groups()
            self.toks.append(("num", int(num)) if num else ("name", name) if name else ("op", op))
        self.i = 0

    def peek(self):
        return self.toks[self.i] if self.i < len(self.toks) else ("end", None)

    def take(self, want=None):
        t = self.peek()
        if want is not None and t[1] != want:
            raise SyntaxError(f"want {want}, got {t}")
        self.i += 1
        return t

    def expr(self):
        c = self.binary(0)
        if self.peek()[1] == "?":
            self.take()
            t = self.expr()
            self.take(":")
            return Cond(c, t, self.expr())
        return c

    def binary(self, level):
        if level == len(self.LEVELS):
            return self.atom()
        left = self.binary(level + 1)
        while self.peek()[1] in self.LEVELS[level]:
            op = self.take()[1]
            left = Bin(op, left, self.binary(level + 1))
        return left

    def atom(self):
        kind, v = self.take()
        if kind == "num":
            return Num(v)
        if kind == "name":
            if self.peek()[1] == "(":
                self.take()
                args = [self.expr()]
                while self.peek()[1] == ",":
                    self.take()
                    args.append(self.expr())
                self.take(")")
                return Call(v, args)
            return Var(v)
        if v == "(":
            e = self.expr()
            self.take(")")
            return e
        if v == "-":
            return Bin("-", Num(0), self.atom())
        raise SyntaxError(f"unexpected {v}")


def gen_expr(depth):
    r = rng.random()
    if depth == 0 or r < 0.2:
        return str(rng.randrange(100)) if rng.random() < 0.5 else rng.choice("abcxyz")
    if r < 0.3:
        return f"({gen_expr(depth - 1)} ? {gen_expr(depth - 1)} : {gen_expr(depth - 1)})"
    if r < 0.4:
        fn = rng.choice(["min", "max", "abs", "gcd"])
        n = 1 if fn == "abs" else 2
        return f"{fn}({', '.join(gen_expr(depth - 1) for _ in range(n))})"
    op = rng.choice(["+", "-", "*", "//", "%", "<", ">", "==", "!="])
    return f"({gen_expr(depth - 1)} {op} {gen_expr(depth - 1)})"


total = 0
for i in range(300):
    tree = Parser(gen_expr(6)).expr()
    for j in range(20):
        env = {k: rng.randrange(-50, 50) for k in "abcxyz"}
        total = (total * 31 + tree.eval(env)) % (1 << 61)
emit("expressions", total)

# --- the same expressions through Python's own parser and compiler -------

src = []
for i in range(150):
    # The language's "c ? t : f" is Python's "t if c else f" with t and c
    # in each other's places.
    e = gen_expr(5).replace("?", "if").replace(":", "else")
    src.append(f"def f{i}(a, b, c, x, y, z):\n    return {e}\n")
code = "".join(src)
try:
    tree = ast.parse(code)
    emit("ast nodes", sum(1 for _ in ast.walk(tree)))
    emit("unparsed", hashlib.md5(ast.unparse(tree).encode()).hexdigest())
    ns = {"gcd": math.gcd}
    exec(compile(tree, "<generated>", "exec"), ns)
    acc = 0
    for i in range(150):
        f = ns[f"f{i}"]
        for j in range(40):
            args = [rng.randrange(-20, 20) for _ in range(6)]
            try:
                acc = (acc * 17 + int(f(*args))) % (1 << 61)
            except ZeroDivisionError:
                acc += 1
    emit("compiled", acc)
except SyntaxError as e:
    emit("syntax error", e.msg)

# --- records: json, pickle, struct, sorting, grouping --------------------

WORDS = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa",
         "lambda", "mu", "nu", "xi", "omicron", "pi", "rho", "sigma", "tau", "upsilon"]
records = []
for i in range(6000):
    records.append({
        "id": i,
        "name": " ".join(rng.choice(WORDS) for _ in range(rng.randrange(1, 4))),
        "score": rng.randrange(1000) / 8,
        "tags": sorted({rng.choice(WORDS) for _ in range(rng.randrange(4))}),
        "nested": {"x": rng.randrange(10**6), "ok": rng.random() < 0.5},
    })
text = json.dumps(records, sort_keys=True)
emit("json bytes", len(text))
back = json.loads(text)
emit("json round trip", back == records)
blob = pickle.dumps(records, protocol=4)
emit("pickle round trip", pickle.loads(blob) == records)
packed = b"".join(struct.pack("<iId?", r["id"], r["nested"]["x"], r["score"], r["nested"]["ok"]) for r in records)
emit("struct", hashlib.sha1(packed).hexdigest())
by_tag = collections.defaultdict(list)
for r in records:
    for t in r["tags"]:
        by_tag[t].append(r["score"])
for t in sorted(by_tag)[:8]:
    s = by_tag[t]
    emit(f"tag {t}", f"{len(s)} {sum(s) / len(s):.4f}")
best = sorted(records, key=lambda r: (-r["score"], r["name"], r["id"]))[:5]
emit("best", [(r["id"], r["name"]) for r in best])
words = collections.Counter(w for r in records for w in r["name"].split())
emit("common words", words.most_common(5))

# --- text: regular expressions, formatting, wrapping ---------------------

sentences = []
for i in range(2500):
    n = rng.randrange(4, 14)
    sentences.append(" ".join(rng.choice(WORDS) + (str(rng.randrange(100)) if rng.random() < 0.1 else "")
                              for _ in range(n)).capitalize() + rng.choice(".!?"))
doc = " ".join(sentences)
emit("doc chars", len(doc))
pat = re.compile(r"\b([a-z]+)(\d+)\b")
emit("numbered words", len(pat.findall(doc)))
emit("repeats", len(re.findall(r"\b(\w+) \1\b", doc)))
emit("sub", hashlib.md5(re.sub(r"(\w)(\w*)", lambda m: m.group(2) + m.group(1) + "ay", doc).encode()).hexdigest())
wrapped = textwrap.fill(doc[:20000], width=72)
emit("wrapped lines", wrapped.count("\n") + 1)
table = "\n".join(f"{i:>5} | {w:<10} | {c:08.3f} | {c:e}" for i, (w, c) in
                  enumerate((w, len(w) * 1.25 + i / 7) for i, w in enumerate(WORDS * 40)))
emit("table", hashlib.md5(table.encode()).hexdigest())

# --- numbers: big integers, fractions, decimals, floats ------------------

f = 1
for i in range(2, 1500):
    f *= i
emit("1499! digit sum", sum(map(int, str(f))))
h = fractions.Fraction(0)
for i in range(1, 400):
    h += fractions.Fraction(1, i)
emit("H(399) denominator digits", len(str(h.denominator)))
decimal.getcontext().prec = 60
d = decimal.Decimal(2).sqrt() * decimal.Decimal(3).sqrt()
s = decimal.Decimal(0)
for i in range(1, 3000):
    s += decimal.Decimal(1) / decimal.Decimal(i * i)
emit("decimal", f"{d} {s}")
pts = [(rng.random(), rng.random()) for _ in range(700)]
closest = min(math.sqrt((a[0] - b[0]) * (a[0] - b[0]) + (a[1] - b[1]) * (a[1] - b[1]))
              for a, b in itertools.combinations(pts, 2))
emit("closest pair", f"{closest:.12f}")

# --- graphs: Dijkstra with heapq, breadth-first search with a deque ------

N = 3000
adj = [[] for _ in range(N)]
for u in range(N):
    for _ in range(4):
        v = rng.randrange(N)
        adj[u].append((v, rng.randrange(1, 100)))
dist = [None] * N
heap = [(0, 0)]
while heap:
    du, u = heapq.heappop(heap)
    if dist[u] is not None:
        continue
    dist[u] = du
    for v, w in adj[u]:
        if dist[v] is None:
            heapq.heappush(heap, (du + w, v))
reached = [x for x in dist if x is not None]
emit("dijkstra", f"{len(reached)} {sum(reached)} {max(reached)}")
seen = {0: 0}
q = collections.deque([0])
while q:
    u = q.popleft()
    for v, _ in adj[u]:
        if v not in seen:
            seen[v] = seen[u] + 1
            q.append(v)
emit("bfs levels", sorted(collections.Counter(seen.values()).items()))

# --- generators, closures, exceptions, classes ---------------------------


def primes():
    found = []
    for n in itertools.count(2):
        if all(n % p for p in itertools.takewhile(lambda p: p * p <= n, found)):
            found.append(n)
            yield n


emit("primes", sum(itertools.islice(primes(), 3000)))


class Shape:
    def area(self):
        raise NotImplementedError


class Rect(Shape):
    def __init__(self, w, h):
        self.w, self.h = w, h

    def area(self):
        return self.w * self.h


class Square(Rect):
    def __init__(self, s):
        super().__init__(s, s)


class Tri(Shape):
    def __init__(self, b, h):
        self.b, self.h = b, h

    def area(self):
        return self.b * self.h / 2


shapes = [rng.choice([lambda: Rect(rng.randrange(1, 9), rng.randrange(1, 9)),
                      lambda: Square(rng.randrange(1, 9)),
                      lambda: Tri(rng.randrange(1, 9), rng.randrange(1, 9)),
                      Shape])() for _ in range(30000)]
areas, errors = 0.0, 0
for s in shapes:
    try:
        areas += s.area()
    except NotImplementedError:
        errors += 1
emit("shapes", f"{areas} {errors} {collections.Counter(type(s).__name__ for s in shapes).most_common()}")

print("digest:", digest.hexdigest())
