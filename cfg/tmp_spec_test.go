package cfg
import ("encoding/json"; "os"; "os/exec"; "path/filepath"; "strings"; "testing")
type specModule struct {
	Kind, Path string
}

func specModules(t *testing.T) []specModule {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/tetratelabs/wazero").Output()
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(strings.TrimSpace(string(out)), "internal/integration_test/spectest")
	jsons, _ := filepath.Glob(filepath.Join(root, "*/testdata/*.json"))
	j2, _ := filepath.Glob(filepath.Join(root, "*/*.json"))
	var mods []specModule
	for _, j := range append(jsons, j2...) {
		var f struct {
			Commands []struct {
				Type, Filename, ModuleType string `json:"module_type"`
			}
		}
		b, err := os.ReadFile(j)
		if err != nil {
			t.Fatal(err)
		}
		var raw struct {
			Commands []map[string]any `json:"commands"`
		}
		if err := json.Unmarshal(b, &raw); err != nil {
			t.Fatal(err)
		}
		_ = f
		for _, c := range raw.Commands {
			fn, _ := c["filename"].(string)
			if fn == "" || !strings.HasSuffix(fn, ".wasm") {
				continue
			}
			mods = append(mods, specModule{Kind: c["type"].(string), Path: filepath.Join(filepath.Dir(j), fn)})
		}
	}
	return mods
}

