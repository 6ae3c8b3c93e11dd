package jshost

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"maps"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/tetratelabs/wazero"

	"github.com/pathprof/pathprof/internal/counters"
)

// TestModule checks that the manifest lands in the module once, and that
// copies whose counters are in the program's memory are refused: a host
// that grows the memory itself would overwrite them.
func TestModule(t *testing.T) {
	part := Part{Format: "pathprof-part", Version: 1}
	b, err := Module("abc", part, []Copy{{SHA256: "def", Counters: []byte{0, 'a', 's', 'm'}}})
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(b, placeholder) || !bytes.Contains(b, []byte(`"module_sha256":"abc"`)) || !bytes.Contains(b, []byte(`"counters":"AGFzbQ=="`)) {
		t.Fatalf("the manifest is not in the module:\n%s", b[:min(len(b), 2000)])
	}
	_, err = Module("abc", part, []Copy{{SHA256: "def"}})
	if err == nil || !strings.Contains(err.Error(), "counter module") {
		t.Fatalf("a copy without a counter module: %v", err)
	}
}

// TestReadCounts checks pathprof.mjs's reading of a counter module's
// memory against counters.Read's: a memory that random counts have
// filled, through several growths of the hash table, is put into the
// counter module of a copy in node, and the part must hold what Read
// gets.
func TestReadCounts(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("skipped: node is not installed (apt-get install nodejs, as .ci/run does)")
	}
	paths := []uint64{0, 10, 1 << 40, 3, 5000, 1 << 62}
	l, err := counters.NewLayout(paths, counters.Options{DenseMax: 100, HashSlots: 64})
	if err != nil {
		t.Fatal(err)
	}
	mod, err := l.Module()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	rt := wazero.NewRuntime(ctx)
	defer rt.Close(ctx)
	inst, err := rt.Instantiate(ctx, mod)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(5, 6))
	for range 20000 {
		f := uint32(1 + r.IntN(len(paths)-1))
		p := r.Uint64N(min(paths[f], 3000))
		if l.Funcs[f].Kind == counters.KindDense {
			_, err = inst.ExportedFunction(counters.CountNName).Call(ctx, uint64(l.Slot(f))+p, r.Uint64N(1<<40))
		} else {
			_, err = inst.ExportedFunction(counters.CountHashName).Call(ctx, uint64(f), p, 1)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	mem, _ := inst.Memory().Read(0, inst.Memory().Size())
	want, err := counters.Read(mem)
	if err != nil {
		t.Fatal(err)
	}

	dir := t.TempDir()
	js, err := Module("abc", Part{Format: "pathprof-part", Version: 1}, []Copy{{SHA256: "def", Counters: mod}})
	if err != nil {
		t.Fatal(err)
	}
	// The host puts the memory in place of the counter module's own.
	host := `import { readFileSync } from 'node:fs';
const { copy } = await import('./` + FileName + `');
const pp = copy(0);
const m = pp.imports({}).pathprof.memory;
const mem = readFileSync('memory');
m.grow(mem.length / 65536 - m.buffer.byteLength / 65536);
new Uint8Array(m.buffer).set(mem);
process.stdout.write(await pp.part());
`
	for name, b := range map[string][]byte{FileName: js, "host.mjs": []byte(host), "memory": mem} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(node, "host.mjs")
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node: %v", err)
	}
	var part struct {
		Counts map[string]map[string]uint64 `json:"counts"`
	}
	if err := json.Unmarshal(out, &part); err != nil {
		t.Fatalf("%v: %.300s", err, out)
	}
	got := counters.Counts{}
	for fs, ps := range part.Counts {
		f, _ := strconv.ParseUint(fs, 10, 32)
		got[uint32(f)] = map[uint64]uint64{}
		for ids, n := range ps {
			id, _ := strconv.ParseUint(ids, 10, 64)
			got[uint32(f)][id] = n
		}
	}
	if len(want) == 0 || !maps.EqualFunc(want, got, maps.Equal) {
		t.Fatalf("pathprof.mjs read\n%v\ncounters.Read\n%v", got, want)
	}
	if capSlots := binary.LittleEndian.Uint32(mem[l.HashOff:]); capSlots <= 64 {
		t.Fatalf("the hash table never grew: %d slots", capSlots)
	}
}
