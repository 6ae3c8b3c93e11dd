package bench

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"strings"
)

// ResourceFile is a file of a YoWASP resources module's tree: its
// contents, or the URL (relative to the module) of a file beside it.
type ResourceFile struct {
	Path string // slash-separated, relative
	Data []byte
	URL  string
}

// ParseResources reads the "filesystem" tree of a YoWASP resources module,
// the JavaScript module that carries a program's data files (yosys's
// share directory):
//
//	export const filesystem = {
//	    share: {
//	        "abc9_map.v": "...",
//	        ice40: { "cells_sim.v": new URL("./share/ice40/cells_sim.v", import.meta.url), },
//	    },
//	};
//
// It understands only that form, object literals of JSON strings and
// URLs, and evaluates nothing: the module is untrusted input.
func ParseResources(data []byte) ([]ResourceFile, error) {
	const decl = "export const filesystem ="
	i := bytes.Index(data, []byte(decl))
	if i < 0 {
		return nil, errors.New("no filesystem tree")
	}
	p := &resParser{data: data, pos: i + len(decl)}
	var files []ResourceFile
	if err := p.object("", &files, 0); err != nil {
		return nil, fmt.Errorf("offset %d: %w", p.pos, err)
	}
	return files, nil
}

type resParser struct {
	data []byte
	pos  int
}

func (p *resParser) space() {
	for p.pos < len(p.data) && strings.IndexByte(" \t\r\n", p.data[p.pos]) >= 0 {
		p.pos++
	}
}

// eat skips white space and then s, if it is there.
func (p *resParser) eat(s string) bool {
	p.space()
	if bytes.HasPrefix(p.data[p.pos:], []byte(s)) {
		p.pos += len(s)
		return true
	}
	return false
}

// object reads an object literal whose entries are files and directories
// under dir.
func (p *resParser) object(dir string, files *[]ResourceFile, depth int) error {
	if depth > 32 {
		return errors.New("directories nested too deep")
	}
	if !p.eat("{") {
		return errors.New("want {")
	}
	for !p.eat("}") {
		key, err := p.key()
		if err != nil {
			return err
		}
		if key == "" || key == "." || key == ".." || strings.ContainsAny(key, "/\\\x00") {
			return fmt.Errorf("file name %q", key)
		}
		name := path.Join(dir, key)
		if !p.eat(":") {
			return errors.New("want :")
		}
		p.space()
		switch {
		case p.pos < len(p.data) && p.data[p.pos] == '{':
			if err := p.object(name, files, depth+1); err != nil {
				return err
			}
		case p.eat("new URL("):
			u, err := p.str()
			if err != nil {
				return err
			}
			if !p.eat(",") || !p.eat("import.meta.url") || !p.eat(")") {
				return errors.New("want new URL(\"...\", import.meta.url)")
			}
			if _, err := insideDir(strings.TrimPrefix(u, "./")); err != nil {
				return err
			}
			*files = append(*files, ResourceFile{Path: name, URL: path.Clean(u)})
		default:
			s, err := p.str()
			if err != nil {
				return err
			}
			*files = append(*files, ResourceFile{Path: name, Data: []byte(s)})
		}
		if !p.eat(",") {
			if !p.eat("}") {
				return errors.New("want , or }")
			}
			return nil
		}
	}
	return nil
}

// key reads a property name: a JSON string or a bare identifier.
func (p *resParser) key() (string, error) {
	p.space()
	if p.pos < len(p.data) && p.data[p.pos] == '"' {
		return p.str()
	}
	start := p.pos
	for p.pos < len(p.data) {
		c := p.data[p.pos]
		if c == '_' || c == '$' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' && p.pos > start {
			p.pos++
			continue
		}
		break
	}
	if p.pos == start {
		return "", errors.New("want a property name")
	}
	return string(p.data[start:p.pos]), nil
}

// str reads a JSON string.
func (p *resParser) str() (string, error) {
	p.space()
	if p.pos >= len(p.data) || p.data[p.pos] != '"' {
		return "", errors.New("want a string")
	}
	end := p.pos + 1
	for ; end < len(p.data) && p.data[end] != '"'; end++ {
		if p.data[end] == '\\' {
			end++
		}
	}
	if end >= len(p.data) {
		return "", errors.New("unterminated string")
	}
	var s string
	if err := json.Unmarshal(p.data[p.pos:end+1], &s); err != nil {
		return "", err
	}
	p.pos = end + 1
	return s, nil
}
