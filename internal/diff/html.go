package diff

import (
	"embed"
	"encoding/json"
	"html/template"
	"io"
	"path/filepath"

	"github.com/pathprof/pathprof/internal/report"
)

//go:embed page.html
var pageFS embed.FS

var pageTmpl = template.Must(template.New("page.html").Funcs(template.FuncMap{
	"pct": func(c *float64) string {
		if c == nil {
			return "-"
		}
		return report.Percent(*c)
	},
	"percent":  report.Percent,
	"possible": report.Possible,
	"base":     filepath.Base,
	"change": func(c *float64) string {
		if c == nil {
			return ""
		}
		b, _ := json.Marshal(*c)
		return string(b)
	},
}).ParseFS(pageFS, "page.html"))

// WriteHTML writes the comparison as one self-contained HTML page: both
// sides' totals, the functions that differ and every path that differs,
// marked gone, new or changed, with filters by status and function.
func (d *Diff) WriteHTML(w io.Writer) error {
	return pageTmpl.Execute(w, d)
}
