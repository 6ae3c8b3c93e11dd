// Command hello is a small Go test program for the profiler: it exercises
// maps, sorting, strings, a type switch, a goroutine pipeline and closures.
//
// Everything before the "entropy:" lines is fixed by the program. The
// entropy lines print values a Go program normally gets from the host (map
// iteration order, an unseeded math/rand value, the wall clock); under a
// deterministic WASI runtime they must also be identical from run to run.
//
// expected.txt holds the fixed part; after changing the program, update it
// with
//
//	go run ./testdata/go/hello | grep -v '^entropy: ' >testdata/go/hello/expected.txt
package main

import (
	"fmt"
	"math/rand"
	"os"
	"slices"
	"sort"
	"strings"
	"time"
)

const text = `the quick brown fox jumps over the lazy dog
the dog sleeps and the fox runs
a fox a dog a day`

type shape interface{ area() float64 }

type rect struct{ w, h float64 }
type square struct{ side float64 }
type circle struct{ r float64 }

func (r rect) area() float64   { return r.w * r.h }
func (s square) area() float64 { return s.side * s.side }
func (c circle) area() float64 { return 3 * c.r * c.r } // integral on purpose

func describe(s shape) string {
	switch v := s.(type) {
	case rect:
		return fmt.Sprintf("rect %gx%g", v.w, v.h)
	case square:
		return fmt.Sprintf("square %g", v.side)
	default:
		return fmt.Sprintf("%T", v)
	}
}

func classify(n int) string {
	switch {
	case n < 0:
		return "negative"
	case n == 0:
		return "zero"
	case n%15 == 0:
		return "fizzbuzz"
	case n%5 == 0:
		return "buzz"
	case n%3 == 0:
		return "fizz"
	default:
		return "plain"
	}
}

// collatzLengths fans work out to a worker goroutine and collects the
// results in order, so the output is independent of scheduling.
func collatzLengths(limit int) []int {
	in := make(chan int)
	out := make(chan [2]int)
	go func() {
		defer close(out)
		for n := range in {
			steps := 0
			for x := n; x != 1; steps++ {
				if x%2 == 0 {
					x /= 2
				} else {
					x = 3*x + 1
				}
			}
			out <- [2]int{n, steps}
		}
	}()
	go func() {
		defer close(in)
		for n := 1; n <= limit; n++ {
			in <- n
		}
	}()
	lengths := make([]int, limit+1)
	for r := range out {
		lengths[r[0]] = r[1]
	}
	return lengths
}

func main() {
	counts := map[string]int{}
	for _, w := range strings.Fields(text) {
		counts[w]++
	}
	words := make([]string, 0, len(counts))
	for w := range counts {
		words = append(words, w)
	}
	sort.Slice(words, func(i, j int) bool {
		if counts[words[i]] != counts[words[j]] {
			return counts[words[i]] > counts[words[j]]
		}
		return words[i] < words[j]
	})
	for _, w := range words[:5] {
		fmt.Printf("%-6s %d\n", w, counts[w])
	}
	fmt.Println("upper:", strings.ToUpper(words[0]), "repeat:", strings.Repeat("ab", 3))
	fmt.Println("title:", strings.Join(strings.Split("x-y-z", "-"), "+"))

	shapes := []shape{rect{2, 3}, square{4}, circle{1}}
	slices.SortFunc(shapes, func(a, b shape) int { return int(a.area() - b.area()) })
	for _, s := range shapes {
		fmt.Printf("%s: %g\n", describe(s), s.area())
	}

	var kinds []string
	for n := -1; n <= 15; n++ {
		kinds = append(kinds, classify(n))
	}
	fmt.Println("kinds:", strings.Join(kinds, ","))

	lengths := collatzLengths(10000)
	best := 1
	for n, l := range lengths {
		if l > lengths[best] {
			best = n
		}
	}
	fmt.Printf("collatz: longest below 10000 is %d with %d steps\n", best, lengths[best])

	var order []string
	for w := range counts {
		order = append(order, w)
	}
	fmt.Println("entropy: map order:", strings.Join(order, " "))
	fmt.Println("entropy: rand:", rand.Int63(), rand.Intn(1000))
	fmt.Println("entropy: now:", time.Now().UTC().Format(time.RFC3339Nano))
	fmt.Println("entropy: args:", len(os.Args), "env:", len(os.Environ()))
}
