// Subpath fingerprints: a polynomial hash of scrambled block ids, so that a
// window's comes from the sample's prefix fingerprints in one step.

package osp

// A subpath's fingerprint is Σ v(id_i)·B^(n−1−i) mod 2^64, where v
// scrambles a block id into 64 bits (splitmix64's finalizer) and B is an
// odd constant: a window's fingerprint then comes from the sample's
// prefix fingerprints in one multiplication and one subtraction. Two
// different subpaths of one length share it only where their scrambled
// blocks' weighted differences cancel modulo 2^64, about one chance in
// 2^64 for subpaths not built to collide; they would then share a pair.
const fpBase = 0x9e3779b97f4a7c15 | 1

func fpBlock(id uint32) uint64 {
	z := uint64(id) + 0x9e3779b97f4a7c15
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

func fingerprint(blocks []uint32) uint64 {
	var h uint64
	for _, b := range blocks {
		h = h*fpBase + fpBlock(b)
	}
	return h
}

// fpPow is fpBase^n mod 2^64.
func fpPow(n int) uint64 {
	p := uint64(1)
	for range n {
		p *= fpBase
	}
	return p
}

// powMod is hashBase^n mod 2^61−1.
func powMod(n int) uint64 {
	p := uint64(1)
	for range n {
		p = mulMod(p, hashBase)
	}
	return p
}
