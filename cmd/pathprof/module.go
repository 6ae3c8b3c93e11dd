// This file holds findModule, the one rule by which report and osp --show
// find the module a profile was taken of.
package main

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// findModule finds the module a profile was taken of; recorded and sum are
// the path and sha256 the profile records, profilePath where the profile
// was read from, explicit the --module flag. The rule, for both kinds of
// profile:
//
//   - With --module FILE, that file and no other. A file that cannot be
//     read, or whose sha256 is not the recorded one, is an error.
//   - Without it, the recorded path, then, for a relative one, the same
//     path next to the profile (a profile and its module are often moved
//     together). The first file there whose sha256 is the recorded one (or
//     any, if none is recorded) is the module. When none is, there is no
//     module and warn says why: a file that cannot be read (the search
//     stops there), else a file that has changed since, else none found.
func findModule(recorded, sum, profilePath, explicit string) (module []byte, name, warn string, err error) {
	if explicit != "" {
		b, err := os.ReadFile(explicit)
		if err != nil {
			return nil, "", "", err
		}
		if got := sha256hex(b); sum != "" && got != sum {
			return nil, "", "", fmt.Errorf("%s is not the module profiled in %s (sha256 %s, the profile's %s)", explicit, profilePath, got, sum)
		}
		return b, explicit, "", nil
	}
	if recorded == "" {
		return nil, "", "the profile names no module", nil
	}
	tries := []string{recorded}
	if !filepath.IsAbs(recorded) {
		if alt := filepath.Join(filepath.Dir(profilePath), recorded); alt != filepath.Clean(recorded) {
			tries = append(tries, alt)
		}
	}
	var changed []string
	for _, name := range tries {
		b, err := os.ReadFile(name)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, "", err.Error(), nil
		}
		if sum != "" && sha256hex(b) != sum {
			changed = append(changed, name)
			continue
		}
		return b, name, "", nil
	}
	if len(changed) > 0 {
		return nil, "", fmt.Sprintf("module %s has changed since it was profiled (its sha256 differs)", changed[0]), nil
	}
	return nil, "", fmt.Sprintf("module %s not found", recorded), nil
}

func sha256hex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}
