// Pins the bytes of the copies made of the spec tests' modules: counting
// copies with loop counters and without, and sampling copies with the arms
// of wrapEnd.
package instrument

import (
	"crypto/sha256"
	"encoding/hex"
	"testing"

	"github.com/pathprof/pathprof/internal/wasm"
)

// TestSpecCopyBytes checks one digest over the counting copies and one over
// the sampling copies of every spec module that wazero compiles. They
// change only when the copies' code is meant to.
func TestSpecCopyBytes(t *testing.T) {
	const (
		wantCounting = "35f23a582de73a39c2f7cc03f1dade4700da4e834fc81c9af0fbccf60d6de53c"
		wantSampling = "1d0f922d9116e683d1dad8da46121499aa540411cac0f304a24709597d264424"
	)
	counting, sampling := sha256.New(), sha256.New()
	forSpecModules(t, func(where string, orig []byte, compile func([]byte) error) {
		for _, opt := range []Options{{}, {NoLoopCounts: true}} {
			if res, err := Instrument(orig, opt); err == nil {
				counting.Write(res.Module)
			}
		}
		if res, err := InstrumentSegments(orig, Segments{End: wrapEnd(map[wasm.Op]int{})}); err == nil {
			sampling.Write(res.Module)
		}
	})
	if got := hex.EncodeToString(counting.Sum(nil)); got != wantCounting {
		t.Errorf("counting copies digest %s, want %s", got, wantCounting)
	}
	if got := hex.EncodeToString(sampling.Sum(nil)); got != wantSampling {
		t.Errorf("sampling copies digest %s, want %s", got, wantSampling)
	}
}
