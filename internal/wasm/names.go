package wasm

// This file holds the name section: decoded, remapped when function
// indices shift, and encoded.

import "sort"

// Names is the decoded "name" custom section. Subsections other than the
// module, function and local names are kept as bytes; those indexed by
// function (labels) are remapped when function indices shift.
type Names struct {
	Module    string
	HasModule bool
	Funcs     map[uint32]string
	Locals    map[uint32]map[uint32]string
	// Other holds the remaining subsections in order, with their ids.
	Other []NameSub
	order []byte // subsection ids in their original order
}

// NameSub is a name subsection the codec does not interpret.
type NameSub struct {
	ID      byte
	Payload []byte
}

func decodeNames(b []byte, base int) (*Names, error) {
	n := &Names{Funcs: map[uint32]string{}, Locals: map[uint32]map[uint32]string{}}
	d := newDecoder(b, base, "name")
	for d.pos < len(d.buf) {
		id, err := d.byte1("name subsection id")
		if err != nil {
			return nil, err
		}
		size, err := d.u32("name subsection size")
		if err != nil {
			return nil, err
		}
		payload, err := d.bytes(size, "name subsection")
		if err != nil {
			return nil, err
		}
		sd := newDecoder(payload, d.base+d.pos-len(payload), "name")
		switch id {
		case 0:
			if n.Module, err = sd.name("module name"); err != nil {
				return nil, err
			}
			n.HasModule = true
		case 1:
			if n.Funcs, err = sd.nameMap(); err != nil {
				return nil, err
			}
		case 2:
			cnt, err := sd.count("local names", 2)
			if err != nil {
				return nil, err
			}
			for i := uint32(0); i < cnt; i++ {
				f, err := sd.u32("function index")
				if err != nil {
					return nil, err
				}
				if n.Locals[f], err = sd.nameMap(); err != nil {
					return nil, err
				}
			}
		default:
			n.Other = append(n.Other, NameSub{ID: id, Payload: payload})
		}
		if id <= 2 && sd.pos != len(sd.buf) {
			return nil, sd.errf(sd.pos, "name subsection size mismatch")
		}
		n.order = append(n.order, id)
	}
	return n, nil
}

func (d *decoder) nameMap() (map[uint32]string, error) {
	cnt, err := d.count("name map", 2)
	if err != nil {
		return nil, err
	}
	m := make(map[uint32]string, cnt)
	for i := uint32(0); i < cnt; i++ {
		idx, err := d.u32("name index")
		if err != nil {
			return nil, err
		}
		if m[idx], err = d.name("name"); err != nil {
			return nil, err
		}
	}
	return m, nil
}

func appendNameMap(b []byte, m map[uint32]string) []byte {
	keys := make([]uint32, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
	b = appendU(b, uint64(len(keys)))
	for _, k := range keys {
		b = appendU(b, uint64(k))
		b = appendName(b, m[k])
	}
	return b
}

func appendName(b []byte, s string) []byte {
	b = appendU(b, uint64(len(s)))
	return append(b, s...)
}

func appendSub(b []byte, id byte, payload []byte) []byte {
	b = append(b, id)
	b = appendU(b, uint64(len(payload)))
	return append(b, payload...)
}

// encode writes the name section payload (without the section name).
// Subsections keep their original order; label names (3), indexed by
// function, must have been remapped by the caller.
func (n *Names) encode() []byte {
	order := n.order
	if order == nil {
		order = []byte{0, 1, 2}
	}
	var out []byte
	other := 0
	for _, id := range order {
		switch id {
		case 0:
			if n.HasModule {
				out = appendSub(out, 0, appendName(nil, n.Module))
			}
		case 1:
			if len(n.Funcs) > 0 {
				out = appendSub(out, 1, appendNameMap(nil, n.Funcs))
			}
		case 2:
			if len(n.Locals) > 0 {
				keys := make([]uint32, 0, len(n.Locals))
				for k := range n.Locals {
					keys = append(keys, k)
				}
				sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
				p := appendU(nil, uint64(len(keys)))
				for _, k := range keys {
					p = appendU(p, uint64(k))
					p = appendNameMap(p, n.Locals[k])
				}
				out = appendSub(out, 2, p)
			}
		default:
			s := n.Other[other]
			other++
			out = appendSub(out, s.ID, s.Payload)
		}
	}
	return out
}
