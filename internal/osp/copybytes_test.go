// Pins the bytes of OSP's sampling copies: the copy of every committed C
// program and of the sort package's test binary, as Instrument makes it,
// with every other function block by block, and with jumps not threaded.
// Go's hello is left out: it is built from the checkout, whose path its
// bytes hold.
package osp

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"testing"
)

// sampledCopyDigests are the sha256 digests of the sampling copies, by
// program and variant. They change only when the copy's code is meant to.
var sampledCopyDigests = map[string]string{
	"calc":                 "c892299b887d4737afb513edc8a0d528c263d97261a531be90040cca28550d33",
	"calc mixed":           "9e1eafa434c2ff007fb72e640791f2928a768b644b04e15fd7798214705f8660",
	"calc unthreaded":      "c892299b887d4737afb513edc8a0d528c263d97261a531be90040cca28550d33",
	"vm":                   "3a195f0479c0f579a4c09d5b4c6a54c8aab93315cd855ca2b9f44865d16c074a",
	"vm mixed":             "4e55b15f8806d5577c247d49de6ae2a9162b185da72d93e63396f24290e3f8c0",
	"vm unthreaded":        "ca756e26fb1342a6dd3e066649771bd42655482bf21be2cccfee6db48ae03fa6",
	"vm-O0":                "4ae087b5c6bff4b21819a958578329b8b68182f87106ae78add387efc1d14e70",
	"vm-O0 mixed":          "7589e3d100fdf797b0c534b13280c1c75a240da0c1bcc2ae9f1914881cbe5f6b",
	"vm-O0 unthreaded":     "497c48567e91896ef7d5fc42998786a80af71a056f663f230f9368d68fe66fde",
	"sort":                 "0a9b97a70e2e20f6643543600cd251989e13ea8ebde54577c561ee978f9ed824",
	"sort mixed":           "0c198a272270bca46e2d20c9244e8566a0eca41541053ae7e5fd4fef8527d91c",
	"sort unthreaded":      "0a9b97a70e2e20f6643543600cd251989e13ea8ebde54577c561ee978f9ed824",
	"wordfreq":             "433951ebe42c50616b14a2cb79fd1bd41faa41bdeadc255e2f461a574d49d2ac",
	"wordfreq mixed":       "34fb964a586dab1791f97fc18827f859851044d02f891a104efdae6166205de0",
	"wordfreq unthreaded":  "433951ebe42c50616b14a2cb79fd1bd41faa41bdeadc255e2f461a574d49d2ac",
	"records":              "db0b9ccf7d62235b7bd03fae9d7b7ef561d3b7e55912e736080e4b90e23f5f61",
	"records mixed":        "4f30ecda18fc3c014febab8f14ebc6771fcadfad05aa51ad7e1538fcb924a2ef",
	"records unthreaded":   "db0b9ccf7d62235b7bd03fae9d7b7ef561d3b7e55912e736080e4b90e23f5f61",
	"grid":                 "966633067b6c877f14d4939a63efa7c0a0622b3ef11cfc0d5bd67c07ca156f78",
	"grid mixed":           "2700efcfe86e5530887f10ef58320d31c3b85e21834e2c33c8a8c39e66d4cd8f",
	"grid unthreaded":      "966633067b6c877f14d4939a63efa7c0a0622b3ef11cfc0d5bd67c07ca156f78",
	"sort.test":            "928ee3687423b4b74bc3d03b27d7fa8a4230805d040694844044b5781ce642de",
	"sort.test mixed":      "c68313108e89eff3d468b242ab6c59c04d370d31322ecef5a5bd8511e0c2fe47",
	"sort.test unthreaded": "86b9d028a5497b2e47229ae6e5be2878f592c71ec6d856e74ccbaec4ad266e85",
}

func TestSamplingCopyBytes(t *testing.T) {
	for _, p := range benchPrograms(t, true) {
		if p.Name == "hello" {
			continue
		}
		orig, err := os.ReadFile(p.Path)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range copyVariants {
			ins := v.instrument(t, orig)
			sum := sha256.Sum256(ins.Wasm)
			got := hex.EncodeToString(sum[:])
			key := p.Name + v.name
			if want := sampledCopyDigests[key]; got != want {
				t.Errorf("%s: sampling copy digest %s, want %s", key, got, want)
			}
		}
	}
}
