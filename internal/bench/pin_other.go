//go:build !linux

package bench

func pinThread() (cpu int, restore func()) { return -1, func() {} }
