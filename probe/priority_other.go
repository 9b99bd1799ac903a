//go:build !linux

package probe

// lowerThreadPriority does nothing outside Linux, where the nice value is
// not per thread.
func lowerThreadPriority() {}

// MachineMemory returns 0 outside Linux: the physical memory is not read.
func MachineMemory() uint64 { return 0 }
