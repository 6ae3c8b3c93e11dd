package runner_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"

	"github.com/pathprof/pathprof/internal/runner"
)

// hitModule is a host module "host" whose function "hit" counts its calls.
func hitModule(hits *int) func(context.Context, wazero.Runtime) ([]wazero.CompiledModule, error) {
	return func(ctx context.Context, r wazero.Runtime) ([]wazero.CompiledModule, error) {
		c, err := r.NewHostModuleBuilder("host").
			NewFunctionBuilder().
			WithGoModuleFunction(api.GoModuleFunc(func(context.Context, api.Module, []uint64) { *hits++ }), nil, nil).
			Export("hit").
			Compile(ctx)
		if err != nil {
			return nil, err
		}
		return []wazero.CompiledModule{c}, nil
	}
}

// TestHostModules checks that the program links against Go host modules,
// that their state outlives a run, and that their imports are checked.
func TestHostModules(t *testing.T) {
	ctx := context.Background()
	var hits int
	cfg := runner.Config{HostModules: hitModule(&hits)}
	prog, err := runner.Compile(ctx, command([][]byte{importFunc("host", "hit", 0)}, opCall, 0, opCall, 0, opCall, 0), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer prog.Close(ctx)
	for run := 1; run <= 2; run++ {
		if _, err := prog.Run(ctx, cfg); err != nil {
			t.Fatal(err)
		}
		if hits != 3*run {
			t.Errorf("after run %d: %d hits, want %d", run, hits, 3*run)
		}
	}

	_, err = runner.Compile(ctx, command([][]byte{importFunc("host", "miss", 0)}, opCall, 0), cfg)
	var ie *runner.ImportError
	if !errors.As(err, &ie) || ie.MissingModule || ie.Module != "host" || !slices.Contains(ie.Available, "host") {
		t.Errorf("import of a missing host function: error %v (%+v)", err, ie)
	}

	boom := func(context.Context, wazero.Runtime) ([]wazero.CompiledModule, error) { return nil, errors.New("boom") }
	if _, err := runner.Compile(ctx, command(nil), runner.Config{HostModules: boom}); err == nil || !strings.Contains(err.Error(), "boom") {
		t.Errorf("HostModules error lost: %v", err)
	}
	clash := func(ctx context.Context, r wazero.Runtime) ([]wazero.CompiledModule, error) {
		c, err := r.NewHostModuleBuilder("wasi_snapshot_preview1").Compile(ctx)
		return []wazero.CompiledModule{c}, err
	}
	if _, err := runner.Compile(ctx, command(nil), runner.Config{HostModules: clash}); err == nil {
		t.Error("a host module named like WASI was accepted")
	}
}

// callsModule returns a command whose _start (function 0) calls function 1
// twice; function 1 runs code.
func callsModule(code ...byte) []byte {
	return module(
		section(secType, funcType()),
		section(secFunction, uleb(0), uleb(0)),
		section(secExport, export("_start", kindFunc, 0)),
		section(secCode, body(opCall, 1, opCall, 1), body(code...)),
	)
}

// eventLog is a listener that logs the calls of the program's functions
// and records which host functions it was offered.
type eventLog struct {
	events []string
	hosts  []string
}

func (l *eventLog) NewFunctionListener(def api.FunctionDefinition) experimental.FunctionListener {
	if def.GoFunction() != nil {
		l.hosts = append(l.hosts, def.ModuleName()+"."+def.Name())
		return nil
	}
	return l
}

func (l *eventLog) Before(_ context.Context, _ api.Module, def api.FunctionDefinition, _ []uint64, _ experimental.StackIterator) {
	l.events = append(l.events, fmt.Sprint("before ", def.Index()))
}

func (l *eventLog) After(_ context.Context, _ api.Module, def api.FunctionDefinition, _ []uint64) {
	l.events = append(l.events, fmt.Sprint("after ", def.Index()))
}

func (l *eventLog) Abort(_ context.Context, _ api.Module, def api.FunctionDefinition, _ error) {
	l.events = append(l.events, fmt.Sprint("abort ", def.Index()))
}

// TestListener checks that a function listener sees the program's calls,
// returns and traps, and is offered the host functions too.
func TestListener(t *testing.T) {
	ctx := context.Background()
	var l eventLog
	if _, err := runner.Run(ctx, callsModule(), runner.Config{Listener: &l}); err != nil {
		t.Fatal(err)
	}
	want := "before 0,before 1,after 1,before 1,after 1,after 0"
	if got := strings.Join(l.events, ","); got != want {
		t.Errorf("events %s, want %s", got, want)
	}
	if !slices.Contains(l.hosts, "wasi_snapshot_preview1.proc_exit") {
		t.Errorf("the factory was not offered WASI's proc_exit; offered %v", l.hosts)
	}

	var trap eventLog
	if _, err := runner.Run(ctx, callsModule(opUnreachable), runner.Config{Listener: &trap}); err == nil {
		t.Fatal("no error from a trapping program")
	}
	want = "before 0,before 1,abort 1,abort 0"
	if got := strings.Join(trap.events, ","); got != want {
		t.Errorf("events of a trap %s, want %s", got, want)
	}

}

// TestListenerHostModule checks that a host module defined through
// HostModules is compiled with the listener too.
func TestListenerHostModule(t *testing.T) {
	var hits int
	var l eventLog
	wasm := command([][]byte{importFunc("host", "hit", 0)}, opCall, 0)
	if _, err := runner.Run(context.Background(), wasm, runner.Config{HostModules: hitModule(&hits), Listener: &l}); err != nil {
		t.Fatal(err)
	}
	if hits != 1 || !slices.Contains(l.hosts, "host.hit") {
		t.Errorf("hits %d, host functions offered %v", hits, l.hosts)
	}
}
