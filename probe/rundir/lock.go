package rundir

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/fragility/fragility/templates"
)

// FileLock is the lock file of a run directory: a run, a resume, a merge
// into it or a report of it holds an exclusive flock(2) on it while it
// writes there, so that two processes never interleave their writes. The
// lock dies with its process (a kill -9 releases it); the file stays and
// holds the pid of the last holder. It is not a run file: --force keeps it.
const FileLock = "fragility.lock"

// ErrInUse is wrapped by DirLock's error when another process holds the
// run directory's lock.
var ErrInUse = errors.New("in use by another fragility process")

// DirLock is a held lock on a run directory (LockDir); Unlock releases it.
type DirLock struct {
	f *os.File
}

// LockDir takes the lock of the run directory dir (FileLock), creating dir
// when it does not exist, and returns it held. When another process holds
// it, the error (wrapping ErrInUse) names dir and that process's pid; a
// directory that cannot be created or written is named with the cause.
// Holding it, LockDir removes the temporary files a killed process left
// there (removeStaleTemps). The lock is released by Unlock or by the end of
// the process; on systems without flock(2) it is not enforced.
func LockDir(dir string) (*DirLock, error) {
	if err := OutDirUsable(dir); err != nil {
		return nil, err
	}
	path := filepath.Join(dir, FileLock)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("output directory %s: %w", dir, templates.BarePathError(err))
	}
	if err := flockExclusive(f); err != nil {
		b := make([]byte, 64)
		n, _ := f.ReadAt(b, 0)
		f.Close()
		who := "pid " + strings.TrimSpace(string(b[:n]))
		if n == 0 {
			who = "its pid not yet written"
		}
		return nil, fmt.Errorf("%s: %w (%s): wait for it to finish or stop it; the lock is %s and dies with its process", dir, ErrInUse, who, path)
	}
	removeStaleTemps(dir)
	// Best effort: the pid only helps the message of a refused process.
	if err := f.Truncate(0); err == nil {
		f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return &DirLock{f: f}, nil
}

// Unlock releases the lock; a nil DirLock or a second call does nothing.
func (l *DirLock) Unlock() {
	if l == nil || l.f == nil {
		return
	}
	l.f.Close() // closing the descriptor releases the flock
	l.f = nil
}

// OutDirUsable refuses, with one line naming dir, an output path that is a
// file (or under a file), and creates dir when it does not exist. A
// symbolic link to a directory is followed: the run's files go where it
// points.
func OutDirUsable(dir string) error {
	if dir == "" {
		return errors.New("no output directory given (--out)")
	}
	fi, err := os.Stat(dir)
	switch {
	case err == nil && !fi.IsDir():
		return fmt.Errorf("output directory %s is a file, not a directory: give a directory with --out", dir)
	case err == nil:
		return nil
	case errors.Is(err, os.ErrNotExist) || errors.Is(err, syscall.ENOTDIR):
		if lfi, lerr := os.Lstat(dir); lerr == nil && lfi.Mode()&os.ModeSymlink != 0 {
			target, _ := os.Readlink(dir)
			return fmt.Errorf("output directory %s is a symbolic link to %s, which does not exist", dir, target)
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			// The error names the part of the path that failed.
			return fmt.Errorf("output directory %s: %w", dir, err)
		}
		return nil
	default:
		return fmt.Errorf("output directory %s: %w", dir, templates.BarePathError(err))
	}
}

// HasRunContent reports whether dir exists and holds anything besides its
// lock file (FileLock).
func HasRunContent(dir string) bool {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, e := range entries {
		if e.Name() != FileLock {
			return true
		}
	}
	return false
}

// removeStaleTemps removes what a process killed while writing in dir left
// behind: the temporary files of WriteFileAtomic for the run files and of
// CheckWritable. The caller holds dir's lock, so none is another process's.
func removeStaleTemps(dir string) {
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		name := e.Name()
		stale := strings.HasPrefix(name, ".probe-write-")
		for _, f := range RunFiles {
			stale = stale || strings.HasPrefix(name, "."+f+".tmp-")
		}
		if stale && e.Type().IsRegular() {
			os.Remove(filepath.Join(dir, name))
		}
	}
}

// PrepareDir prepares the output directory dir of a run (OutDirUsable):
// without resume it refuses an existing run unless force (RefuseExisting)
// and removes the files of the run it replaces (RunFiles); in any case it
// checks that dir is writable (CheckWritable).
func PrepareDir(dir string, force, resume bool) error {
	if err := OutDirUsable(dir); err != nil {
		return err
	}
	if resume {
		return CheckWritable(dir)
	}
	if err := RefuseExisting(dir, force, resume); err != nil {
		return err
	}
	if HasRunContent(dir) {
		for _, name := range RunFiles {
			os.Remove(filepath.Join(dir, name))
		}
	}
	return CheckWritable(dir)
}

// RefuseExisting refuses, without --force or --resume, an output
// directory that holds files: a run (to overwrite or resume) or files of
// something else (no manifest.json: no run to resume).
func RefuseExisting(dir string, force, resume bool) error {
	if force || resume || !HasRunContent(dir) {
		return nil
	}
	if !IsFile(filepath.Join(dir, FileManifest)) {
		return fmt.Errorf("output directory %s already exists and holds files but no %s, so it is no run to resume: use another --out, or --force to write the run beside them (only fragility's run files are replaced)", dir, FileManifest)
	}
	return fmt.Errorf("output directory %s already exists and is not empty: use --force to overwrite it or --resume to finish it", dir)
}
