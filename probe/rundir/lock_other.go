//go:build !unix

package probe

import "os"

// flockExclusive does nothing where flock(2) does not exist: the run
// directory's lock is not enforced there.
func flockExclusive(f *os.File) error { return nil }
