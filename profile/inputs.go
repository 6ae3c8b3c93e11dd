package profile

// This file holds what a profile records of its inputs: the digest that
// identifies an input and the per-input counts of a path.

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
)

// InputDigest is an input's digest (Input.InputSHA256): SHA-256 of the
// JSON object {"args":ARGS,"env":ENV,"mounts":MOUNTS,"stdin_sha256":S},
// compact, keys in that order, with ARGS, ENV ("K=V") and MOUNTS
// ("HOST:GUEST" or "HOST:GUEST:ro") as lists ([] when empty) and S the
// SHA-256 of the standard input in hex. It names the environment and
// mounts without revealing them, and does not read the mounted files.
// What the host gives the program beyond WASI (host: stubs returning a
// value, calls of exports in place of _start) changes what it does, so a
// non-empty host list ends the object as "host":HOST.
func InputDigest(args, env, mounts []string, stdin []byte, host ...string) string {
	nonNil := func(s []string) []string {
		if s == nil {
			return []string{}
		}
		return s
	}
	in := sha256.Sum256(stdin)
	b, _ := json.Marshal(struct {
		Args   []string `json:"args"`
		Env    []string `json:"env"`
		Mounts []string `json:"mounts"`
		Stdin  string   `json:"stdin_sha256"`
		Host   []string `json:"host,omitempty"`
	}{nonNil(args), nonNil(env), nonNil(mounts), hex.EncodeToString(in[:]), host})
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// MarshalJSON writes c as [input, count].
func (c InputCount) MarshalJSON() ([]byte, error) {
	b := make([]byte, 0, 24)
	b = append(b, '[')
	b = strconv.AppendInt(b, int64(c.Input), 10)
	b = append(b, ',')
	b = strconv.AppendUint(b, c.Count, 10)
	return append(b, ']'), nil
}

// UnmarshalJSON reads [input, count].
func (c *InputCount) UnmarshalJSON(b []byte) error {
	var pair []json.Number
	if err := json.Unmarshal(b, &pair); err != nil || len(pair) != 2 {
		return fmt.Errorf("by_input entry %s is not a pair [input, count]", b)
	}
	in, err := strconv.ParseUint(pair[0].String(), 10, 31)
	if err != nil {
		return fmt.Errorf("by_input entry %s: input %s is not an input index", b, pair[0])
	}
	n, err := strconv.ParseUint(pair[1].String(), 10, 64)
	if err != nil {
		return fmt.Errorf("by_input entry %s: count %s is not a non-negative whole number", b, pair[1])
	}
	c.Input, c.Count = int(in), n
	return nil
}

// validateInputs checks the inputs, the copy runs' inputs and every
// path's attribution: with several inputs, each path's counts by input
// are in input order, each at least 1, and add up to its count.
func (p *Profile) validateInputs() error {
	n := len(p.Inputs)
	if n > 0 && p.Version < 2 {
		return fmt.Errorf("inputs in a version %d profile (inputs came with version 2)", p.Version)
	}
	for i := range p.Inputs {
		in := &p.Inputs[i]
		what := fmt.Sprintf("input %d (%q)", i, in.Label)
		if in.InputSHA256 != "" {
			if b, err := hex.DecodeString(in.InputSHA256); err != nil || len(b) != 32 {
				return fmt.Errorf("%s: input_sha256 %q is not 64 hex digits", what, in.InputSHA256)
			}
		}
		if err := checkStrategy(in.Strategy, in.Copies); err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		if err := checkEnd(in.Complete, in.Incomplete, in.Interrupted); err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		if !(in.Seconds >= 0) {
			return fmt.Errorf("%s: %v seconds", what, in.Seconds)
		}
	}
	if n <= 1 && p.Strategy == Mixed {
		return fmt.Errorf("strategy %q with %d inputs (only a profile of several inputs mixes strategies)", p.Strategy, n)
	}
	for i, r := range p.Runs {
		if r.Input < 0 || r.Input >= max(n, 1) {
			return fmt.Errorf("run %d: input %d of %d", i, r.Input, max(n, 1))
		}
	}
	for fi := range p.Functions {
		f := &p.Functions[fi]
		for _, q := range f.Paths {
			if n <= 1 {
				if len(q.ByInput) > 0 {
					return fmt.Errorf("function %d, path %d: by_input in a profile of %d inputs", f.Index, q.ID, n)
				}
				continue
			}
			if len(q.ByInput) == 0 {
				return fmt.Errorf("function %d, path %d: no by_input in a profile of %d inputs", f.Index, q.ID, n)
			}
			var sum uint64
			last := -1
			for _, c := range q.ByInput {
				if c.Input <= last || c.Input >= n {
					return fmt.Errorf("function %d, path %d: by_input names input %d out of order or out of range (%d inputs)", f.Index, q.ID, c.Input, n)
				}
				if c.Count == 0 {
					return fmt.Errorf("function %d, path %d: by_input count 0 for input %d", f.Index, q.ID, c.Input)
				}
				last = c.Input
				if sum+c.Count < sum {
					return fmt.Errorf("function %d, path %d: by_input counts overflow", f.Index, q.ID)
				}
				sum += c.Count
			}
			if sum != q.Count {
				return fmt.Errorf("function %d, path %d: by_input counts add up to %d, not the count %d", f.Index, q.ID, sum, q.Count)
			}
		}
	}
	return nil
}
