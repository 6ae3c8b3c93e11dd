package wasm

// The decoder looks opcodes up in dense tables built from opInfos: a map
// lookup per instruction would dominate decoding of large modules.
var (
	coreOps     [256]opInfo
	coreKnown   [256]bool
	prefixedOps [3][]opInfo // 0xFC, 0xFD, 0xFE
	prefixedOK  [3][]bool
)

func init() {
	for op, info := range opInfos {
		if op <= 0xFF {
			coreOps[op] = info
			coreKnown[op] = true
			continue
		}
		p := int(op>>16) - 0xFC
		sub := int(op & 0xFFFF)
		for len(prefixedOps[p]) <= sub {
			prefixedOps[p] = append(prefixedOps[p], opInfo{})
			prefixedOK[p] = append(prefixedOK[p], false)
		}
		prefixedOps[p][sub] = info
		prefixedOK[p][sub] = true
	}
}

func lookupOp(op Op) (opInfo, bool) {
	if op <= 0xFF {
		return coreOps[op], coreKnown[op]
	}
	p := int(op>>16) - 0xFC
	sub := int(op & 0xFFFF)
	if p < 0 || p > 2 || sub >= len(prefixedOps[p]) {
		return opInfo{}, false
	}
	return prefixedOps[p][sub], prefixedOK[p][sub]
}
