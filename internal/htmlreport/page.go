package htmlreport

// This file writes the page: its style and scripts, embedded from page/,
// and the data as inert JSON script elements.

import (
	"bufio"
	"embed"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"strings"
)

// page is the report as the page holds it: the overview's data, and each
// function's as JSON.
type page struct {
	ov      overview
	details map[int][]byte // by function row
}

//go:embed page/page.css
var pageCSS string

//go:embed page/*.js
var pageFiles embed.FS

// pageScripts lists the page's script files in the order they are
// concatenated into its one script element, which keeps the page a single
// file that works offline: the data and helpers first, the views, and the
// router, which starts the page, last.
var pageScripts = []string{"data.js", "helpers.js", "overview.js", "function.js", "layout.js", "graph.js", "code.js", "route.js"}

var pageJS = concatScripts()

// concatScripts joins the page's scripts, a blank line apart.
func concatScripts() string {
	var b strings.Builder
	for i, name := range pageScripts {
		js, err := pageFiles.ReadFile("page/" + name)
		if err != nil {
			panic(err) // a listed file that is not embedded
		}
		if i > 0 {
			b.WriteByte('\n')
		}
		b.Write(js)
	}
	return b.String()
}

func (pg *page) write(w io.Writer) error {
	ov, err := json.Marshal(pg.ov)
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>%s</title>\n<style>\n%s</style>\n</head>\n<body>\n",
		html.EscapeString(pg.ov.Title), pageCSS)
	bw.WriteString("<div id=\"app\"><p class=\"loading\">Loading the profile…</p></div>\n")
	// The data are inert script elements, which the browser only
	// tokenises at load; each function's is parsed when it is shown.
	// json.Marshal escapes '<', so no data can end its element.
	bw.WriteString("<script type=\"application/json\" id=\"overview\">")
	bw.Write(ov)
	bw.WriteString("</script>\n")
	for i := range len(pg.ov.Funcs) {
		b, ok := pg.details[i]
		if !ok {
			continue
		}
		fmt.Fprintf(bw, "<script type=\"application/json\" id=\"fd%d\">", i)
		bw.Write(b)
		bw.WriteString("</script>\n")
	}
	fmt.Fprintf(bw, "<script>\n%s</script>\n</body>\n</html>\n", pageJS)
	return bw.Flush()
}
