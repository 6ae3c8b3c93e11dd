package partition

// This file holds the compact JSON forms of a plan's edge and frequency
// lists.

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// EdgeList is an ascending list of edge indices. In JSON it is a string of
// comma-separated indices and ranges ("0-5,7,9-12"): classes hold long runs
// of consecutive edges, and a plan for tens of thousands of functions would
// otherwise take tens of megabytes.
type EdgeList []int32

func (l EdgeList) MarshalJSON() ([]byte, error) {
	b := []byte{'"'}
	for i := 0; i < len(l); {
		j := i
		for j+1 < len(l) && l[j+1] == l[j]+1 {
			j++
		}
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, int64(l[i]), 10)
		if j > i {
			b = append(b, '-')
			b = strconv.AppendInt(b, int64(l[j]), 10)
		}
		i = j + 1
	}
	return append(b, '"'), nil
}

func (l *EdgeList) UnmarshalJSON(data []byte) error {
	var s string
	if err := json.Unmarshal(data, &s); err != nil {
		return err
	}
	var out EdgeList
	for part := range strings.SplitSeq(s, ",") {
		if part == "" {
			continue
		}
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.ParseInt(lo, 10, 32)
		if err != nil {
			return fmt.Errorf("partition: edge list %q: %v", s, err)
		}
		b := a
		if isRange {
			if b, err = strconv.ParseInt(hi, 10, 32); err != nil {
				return fmt.Errorf("partition: edge list %q: %v", s, err)
			}
		}
		if a < 0 || b < a || len(out) > 0 && int64(out[len(out)-1]) >= a {
			return fmt.Errorf("partition: edge list %q is not ascending", s)
		}
		for e := a; e <= b; e++ {
			out = append(out, int32(e))
		}
	}
	*l = out
	return nil
}

// FreqList is a function's edge frequencies. In JSON, when they are all
// whole numbers, as counts are, it is a string of comma-separated numbers
// in which a run of n zeros is "0*n" ("12,0*40,7"): most edges of a
// function never run, and a plan holds every executed function's list.
// Otherwise it is an array of numbers.
type FreqList []float64

func (l FreqList) MarshalJSON() ([]byte, error) {
	for _, x := range l {
		if x != math.Trunc(x) || math.Abs(x) >= 1<<53 {
			return json.Marshal([]float64(l))
		}
	}
	b := []byte{'"'}
	for i := 0; i < len(l); {
		if i > 0 {
			b = append(b, ',')
		}
		j := i + 1
		if l[i] == 0 {
			for j < len(l) && l[j] == 0 {
				j++
			}
		}
		b = strconv.AppendInt(b, int64(l[i]), 10)
		if j-i > 1 {
			b = append(b, '*')
			b = strconv.AppendInt(b, int64(j-i), 10)
		}
		i = j
	}
	return append(b, '"'), nil
}

func (l *FreqList) UnmarshalJSON(data []byte) error {
	var s string
	if err := json.Unmarshal(data, &s); err != nil {
		var a []float64
		if err := json.Unmarshal(data, &a); err != nil {
			return fmt.Errorf("partition: frequencies: %v", err)
		}
		*l = a
		return nil
	}
	var out FreqList
	if s == "" {
		*l = nil
		return nil
	}
	for part := range strings.SplitSeq(s, ",") {
		v, run, isRun := strings.Cut(part, "*")
		if v == "" || v[0] == '+' || isRun && (run == "" || run[0] == '+') {
			return fmt.Errorf("partition: frequencies %q: bad entry %q", s, part)
		}
		x, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return fmt.Errorf("partition: frequencies %q: %v", s, err)
		}
		n := int64(1)
		if isRun {
			if n, err = strconv.ParseInt(run, 10, 32); err != nil || n < 1 || x != 0 {
				return fmt.Errorf("partition: frequencies %q: bad run %q", s, part)
			}
		}
		if int64(len(out))+n > 1<<26 {
			return fmt.Errorf("partition: frequencies %q: too many", s)
		}
		for range n {
			out = append(out, float64(x))
		}
	}
	*l = out
	return nil
}
