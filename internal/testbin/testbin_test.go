package testbin

import (
	"slices"
	"strings"
	"testing"
)

// TestParseList reads listings as each harness prints them.
func TestParseList(t *testing.T) {
	for _, c := range []struct {
		p    Protocol
		out  string
		want []string
	}{
		{Go, "TestA\nTestB\nBenchmarkC\nExampleD\nFuzzE\n", []string{"TestA", "TestB", "ExampleD", "FuzzE"}},
		{Rust, "tests::add: test\ntests::big: bench\nother::x: test\n", []string{"tests::add", "other::x"}},
		{Rust, "a: test\n\n1 test, 0 benchmarks\n", []string{"a"}},
		{GTest, "Stack.\n  Push\n  Pop\nParam/Sq.\n  Even/0  # GetParam() = 0\n  Even/1  # GetParam() = 2\n",
			[]string{"Stack.Push", "Stack.Pop", "Param/Sq.Even/0", "Param/Sq.Even/1"}},
		{GTest, "Typed/0.  # TypeParam = int\n  Zero\n", []string{"Typed/0.Zero"}},
		{GTest, "Running main() from gtest_main.cc\n  Orphan\nS.\n  T\nnot a suite\n  U\n", []string{"S.T"}},
	} {
		got, err := ParseList(c.p, []byte(c.out))
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("%s %q: %q, %v; want %q", c.p, c.out, got, err, c.want)
		}
	}
}

// TestRunArgs checks that a name that is not a plain identifier is run
// alone: Go matches a regular expression, so its metacharacters are
// quoted.
func TestRunArgs(t *testing.T) {
	if got := RunArgs(Go, "TestA.b"); !slices.Equal(got, []string{"-test.run", `^TestA\.b$`}) {
		t.Errorf("go: %q", got)
	}
	if got := RunArgs(Rust, "m::t"); !slices.Equal(got, []string{"--exact", "m::t"}) {
		t.Errorf("rust: %q", got)
	}
	if got := RunArgs(GTest, "S.T"); !slices.Equal(got, []string{"--gtest_filter=S.T"}) {
		t.Errorf("gtest: %q", got)
	}
}

// FuzzParseList: a test binary's listing is the binary's output, so
// untrusted: any bytes give tests or an error, and each test named is
// one line's worth, without line breaks.
func FuzzParseList(f *testing.F) {
	f.Add("go", []byte("TestA\nBenchmarkB\n"))
	f.Add("rust", []byte("a::b: test\nc: bench\n"))
	f.Add("gtest", []byte("S.\n  T  # GetParam() = 1\n"))
	f.Fuzz(func(t *testing.T, proto string, out []byte) {
		p, err := ParseProtocol(proto)
		if err != nil {
			return
		}
		tests, err := ParseList(p, out)
		if err != nil {
			return
		}
		seen := map[string]bool{}
		for _, name := range tests {
			if name == "" || strings.ContainsAny(name, "\n\r") || seen[name] {
				t.Fatalf("test %q of %q", name, out)
			}
			seen[name] = true
		}
	})
}
