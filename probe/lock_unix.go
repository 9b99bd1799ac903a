//go:build unix

package probe

import (
	"os"
	"syscall"
)

// flockExclusive takes an exclusive flock(2) on f without waiting.
func flockExclusive(f *os.File) error {
	return syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
}

// die kills the process with SIGKILL: no deferred function, no flush (the
// crash hook, EnvCrashAt).
func die() {
	syscall.Kill(os.Getpid(), syscall.SIGKILL)
	select {} // the signal is on its way
}
