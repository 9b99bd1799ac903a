package probe

import "syscall"

// lowerThreadPriority gives the calling OS thread the lowest scheduling
// priority (nice 19; on Linux the nice value is per thread). The caller must
// have locked its goroutine to the thread (runtime.LockOSThread). A failure
// is ignored: it changes speed, not results.
func lowerThreadPriority() {
	_ = syscall.Setpriority(syscall.PRIO_PROCESS, syscall.Gettid(), 19)
}

// MachineMemory returns this machine's physical memory in bytes (sysinfo's
// total RAM), 0 when it cannot be read.
func MachineMemory() uint64 {
	var si syscall.Sysinfo_t
	if syscall.Sysinfo(&si) != nil {
		return 0
	}
	return uint64(si.Totalram) * uint64(si.Unit)
}
