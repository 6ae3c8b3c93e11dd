// Fuzzing of the profile file's decoding: refused, or reported and round-tripped.

package osp

import (
	"encoding/json"
	"io"
	"reflect"
	"testing"
)

// FuzzDecode checks that any input either is refused or decodes to a
// profile that reports without panicking and survives a round trip.
func FuzzDecode(f *testing.F) {
	f.Add([]byte(`{"format":"pathprof-osp","version":2,"sampling":{"lengths":[2],"by_length":[{"length":2,"windows":4,"scale":3,"tau":1}]},` +
		`"subpaths":[{"length":2,"count":3,"squares":5,"estimate":9,"error":4,"blocks":[{"func":1,"offset":10},{"func":1,"offset":12}]}]}`))
	f.Add([]byte(`{"format":"pathprof-osp","version":1,"subpaths":[{"length":1,"count":7,"blocks":[{"offset":1}]}]}`))
	f.Add([]byte(`{"format":"pathprof-osp","version":2,"subpaths":[{"length":2,"blocks":[{"offset":1}]}]}`))
	f.Add([]byte(`{"format":"pathprof","version":1}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := Decode(b)
		if err != nil {
			return
		}
		for _, top := range []int{0, 3} {
			if err := WriteReport(io.Discard, p, nil, top); err != nil {
				t.Fatal(err)
			}
		}
		again, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		q, err := Decode(again)
		if err != nil {
			t.Fatalf("a decoded profile does not decode again: %v", err)
		}
		if !reflect.DeepEqual(p, q) {
			t.Fatalf("the round trip changed the profile:\n%+v\n%+v", p, q)
		}
	})
}
