//go:build !linux

package probe

// lowerThreadPriority does nothing outside Linux, where the nice value is
// not per thread.
func lowerThreadPriority() {}
