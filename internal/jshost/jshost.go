// Package jshost writes the ES module with which a JavaScript host (node,
// a browser, emscripten's glue) runs instrumented copies with its own
// loader: the module adds a copy's counter module to the import object
// and, after the run, reads the counters into the copy's part, so that
// pathprof need not run the program.
package jshost

import (
	"bytes"
	_ "embed"
	"encoding/base64"
	"encoding/json"
	"fmt"

	"github.com/pathprof/pathprof/internal/counters"
	"github.com/pathprof/pathprof/internal/instrument"
)

// FileName is the name the module is written under, beside the copies.
const FileName = "pathprof.mjs"

//go:embed pathprof.mjs
var template []byte

var placeholder = []byte("/*MANIFEST*/ null")

// Copy is what the module needs of one copy: its hash, which ties its part
// to it, and its counter module.
type Copy struct {
	SHA256   string
	Counters []byte
}

// Part is the format and version of the parts the module writes.
type Part struct {
	Format  string
	Version int
}

// Module returns the ES module for the copies of the module whose sha256
// is moduleSHA256. Every copy must keep its counters in a counter module:
// a host that grows the memory itself (emscripten's glue does) would
// overwrite counters kept in the program's memory.
func Module(moduleSHA256 string, part Part, copies []Copy) ([]byte, error) {
	type copyJSON struct {
		SHA256   string `json:"sha256"`
		Counters string `json:"counters"`
	}
	m := struct {
		ModuleSHA256 string     `json:"module_sha256"`
		Part         any        `json:"part"`
		ImportModule string     `json:"import_module"`
		CallsPrefix  string     `json:"calls_prefix"`
		Counters     any        `json:"counters"`
		Copies       []copyJSON `json:"copies"`
	}{
		ModuleSHA256: moduleSHA256,
		Part:         map[string]any{"format": part.Format, "version": part.Version},
		ImportModule: counters.ModuleName,
		CallsPrefix:  instrument.CallsPrefix,
		Counters: map[string]any{"magic": counters.Magic, "version": counters.Version,
			"dense": counters.KindDense, "entry": counters.EntrySize},
	}
	for i, c := range copies {
		if c.Counters == nil {
			return nil, fmt.Errorf("copy %d keeps its counters in its own memory: a JavaScript host needs them in a counter module", i)
		}
		m.Copies = append(m.Copies, copyJSON{c.SHA256, base64.StdEncoding.EncodeToString(c.Counters)})
	}
	b, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	if bytes.Count(template, placeholder) != 1 {
		return nil, fmt.Errorf("%s: no single place for the manifest", FileName)
	}
	return bytes.Replace(template, placeholder, b, 1), nil
}
