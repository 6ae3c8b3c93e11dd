package runner

// This file runs a program by calling its exports (Config.Invoke), as a
// reactor or a library is run: _initialize first when it is exported.

import (
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
)

// Call is one call of an exported function with its arguments as given
// on the command line.
type Call struct {
	Name string
	Args []string
}

// ParseCall reads --invoke's "NAME[:ARG,...]".
func ParseCall(s string) (Call, error) {
	name, args, hasArgs := strings.Cut(s, ":")
	if name == "" {
		return Call{}, &InvokeError{fmt.Sprintf("--invoke %q: want NAME or NAME:ARG,...", s)}
	}
	c := Call{Name: name}
	if hasArgs && args != "" {
		c.Args = strings.Split(args, ",")
	}
	return c, nil
}

func (c Call) String() string { return c.Name + "(" + strings.Join(c.Args, ", ") + ")" }

// InvokeError says why an export cannot be called as asked.
type InvokeError struct{ Msg string }

func (e *InvokeError) Error() string { return e.Msg }

// Returned is what one call of Config.Invoke returned.
type Returned struct {
	Call Call
	// Results are the results as text: integers in decimal (signed),
	// floats in the shortest form that reads back the same.
	Results []string
}

// encodeCalls checks every call against the module's exports and encodes
// its arguments as wazero passes them.
func encodeCalls(name string, c wazero.CompiledModule, calls []Call) ([][]uint64, error) {
	exports := c.ExportedFunctions()
	out := make([][]uint64, len(calls))
	for i, call := range calls {
		def := exports[call.Name]
		if def == nil {
			names := slices.Sorted(maps.Keys(exports))
			return nil, &InvokeError{fmt.Sprintf("--invoke %s: %s exports no function %s (its functions: %s)", call.Name, name, call.Name, strings.Join(names, ", "))}
		}
		params := def.ParamTypes()
		if len(call.Args) != len(params) {
			return nil, &InvokeError{fmt.Sprintf("--invoke %s: %s takes %d arguments (%s), not %d", call.Name, call.Name, len(params), typeNames(params), len(call.Args))}
		}
		for j, a := range call.Args {
			v, err := encodeValue(a, params[j])
			if err != nil {
				return nil, &InvokeError{fmt.Sprintf("--invoke %s: argument %d, %q: %s wants %s: %v", call.Name, j+1, a, call.Name, api.ValueTypeName(params[j]), err)}
			}
			out[i] = append(out[i], v)
		}
	}
	return out, nil
}

func typeNames(ts []api.ValueType) string {
	names := make([]string, len(ts))
	for i, t := range ts {
		names[i] = api.ValueTypeName(t)
	}
	return strings.Join(names, ", ")
}

// encodeValue encodes s as a value of type t: an integer for i32 (signed
// or unsigned 32 bits) and i64, a number for f32 and f64.
func encodeValue(s string, t api.ValueType) (uint64, error) {
	var err error
	switch t {
	case api.ValueTypeI32:
		var v int64
		if v, err = strconv.ParseInt(s, 0, 64); err == nil && (v < math.MinInt32 || v > math.MaxUint32) {
			err = strconv.ErrRange
		}
		return uint64(uint32(v)), unwrapNum(err)
	case api.ValueTypeI64:
		var v int64
		if v, err = strconv.ParseInt(s, 0, 64); err != nil {
			var u uint64
			if u, err = strconv.ParseUint(s, 0, 64); err == nil {
				v = int64(u)
			}
		}
		return uint64(v), unwrapNum(err)
	case api.ValueTypeF32:
		v, err := strconv.ParseFloat(s, 32)
		return uint64(math.Float32bits(float32(v))), unwrapNum(err)
	case api.ValueTypeF64:
		v, err := strconv.ParseFloat(s, 64)
		return math.Float64bits(v), unwrapNum(err)
	}
	return 0, fmt.Errorf("only i32, i64, f32 and f64 arguments can be given")
}

func unwrapNum(err error) error {
	if ne, ok := err.(*strconv.NumError); ok {
		return ne.Err
	}
	return err
}

// decodeValue is the text of a result of type t.
func decodeValue(v uint64, t api.ValueType) string {
	switch t {
	case api.ValueTypeI32:
		return strconv.FormatInt(int64(int32(v)), 10)
	case api.ValueTypeI64:
		return strconv.FormatInt(int64(v), 10)
	case api.ValueTypeF32:
		return strconv.FormatFloat(float64(math.Float32frombits(uint32(v))), 'g', -1, 32)
	case api.ValueTypeF64:
		return strconv.FormatFloat(math.Float64frombits(v), 'g', -1, 64)
	}
	return fmt.Sprintf("%s 0x%x", api.ValueTypeName(t), v)
}

// invoke calls _initialize, if exported, then each call in turn, and
// records their results in res. It stops at the first call that fails.
func invoke(ctx context.Context, mod api.Module, calls []Call, args [][]uint64, res *Result) error {
	if f := mod.ExportedFunction("_initialize"); f != nil {
		if _, err := f.Call(ctx); err != nil {
			return err
		}
	}
	for i, c := range calls {
		f := mod.ExportedFunction(c.Name)
		out, err := f.Call(ctx, args[i]...)
		if err != nil {
			return err
		}
		r := Returned{Call: c, Results: []string{}}
		for j, t := range f.Definition().ResultTypes() {
			r.Results = append(r.Results, decodeValue(out[j], t))
		}
		res.Returned = append(res.Returned, r)
	}
	return nil
}
