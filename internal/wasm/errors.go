package wasm

// This file defines DecodeError, the error of every malformed module.

import "fmt"

// DecodeError is a malformed or unsupported module: it names the section and
// the absolute byte offset in the module where decoding stopped.
type DecodeError struct {
	Section string
	Offset  int
	Msg     string
}

func (e *DecodeError) Error() string {
	if e.Section == "" {
		return fmt.Sprintf("offset 0x%x: %s", e.Offset, e.Msg)
	}
	return fmt.Sprintf("%s section, offset 0x%x: %s", e.Section, e.Offset, e.Msg)
}
