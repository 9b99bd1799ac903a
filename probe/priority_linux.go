package probe

import "syscall"

// lowerThreadPriority gives the calling OS thread the lowest scheduling
// priority (nice 19; on Linux the nice value is per thread). The caller must
// have locked its goroutine to the thread (runtime.LockOSThread). A failure
// is ignored: it changes speed, not results.
func lowerThreadPriority() {
	_ = syscall.Setpriority(syscall.PRIO_PROCESS, syscall.Gettid(), 19)
}
