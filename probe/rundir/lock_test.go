package rundir

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLockDir: a second lock of a run directory in use is refused naming
// the directory and the holder's pid; released, it can be taken again;
// taking it creates the directory and removes the temporary files a killed
// writer left; the lock file does not make a directory "not empty".
func TestLockDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	l, err := LockDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	_, err = LockDir(dir)
	want := fmt.Sprintf("%s: in use by another fragility process (pid %d)", dir, os.Getpid())
	if !errors.Is(err, ErrInUse) || !strings.HasPrefix(err.Error(), want) {
		t.Fatalf("second lock: %v, want %q", err, want)
	}
	l.Unlock()
	l.Unlock() // a second release does nothing
	if HasRunContent(dir) {
		t.Error("the lock file alone counts as run content")
	}
	if err := PrepareDir(dir, false, false); err != nil {
		t.Errorf("a directory holding only the lock file: %v", err)
	}
	os.WriteFile(filepath.Join(dir, "."+FileResults+".tmp-123"), []byte("half"), 0o600)
	os.WriteFile(filepath.Join(dir, ".probe-write-9"), nil, 0o600)
	os.WriteFile(filepath.Join(dir, ".mine"), nil, 0o600)
	l, err = LockDir(dir)
	if err != nil {
		t.Fatalf("lock after release: %v", err)
	}
	defer l.Unlock()
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if got := strings.Join(names, ","); got != ".mine,"+FileLock {
		t.Errorf("after the lock the directory holds %s, want .mine and the lock file", got)
	}
}

// TestOutDirUsable: an output path that is a file, under a file or a
// dangling symbolic link is refused with one line naming it; a symbolic
// link to a directory is followed.
func TestOutDirUsable(t *testing.T) {
	base := t.TempDir()
	file := filepath.Join(base, "f")
	os.WriteFile(file, nil, 0o644)
	os.Symlink(filepath.Join(base, "none"), filepath.Join(base, "dangling"))
	os.Mkdir(filepath.Join(base, "target"), 0o755)
	os.Symlink(filepath.Join(base, "target"), filepath.Join(base, "link"))
	for _, c := range []struct{ dir, want string }{
		{file, "output directory " + file + " is a file, not a directory"},
		{filepath.Join(file, "x"), "output directory " + filepath.Join(file, "x") + ": mkdir " + file + ": not a directory"},
		{filepath.Join(base, "dangling"), "is a symbolic link to " + filepath.Join(base, "none") + ", which does not exist"},
		{"", "no output directory given"},
	} {
		err := OutDirUsable(c.dir)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: %v, want one line with %q", c.dir, err, c.want)
		}
	}
	l, err := LockDir(filepath.Join(base, "link"))
	if err != nil {
		t.Fatalf("symlink to a directory: %v", err)
	}
	l.Unlock()
	if _, err := os.Stat(filepath.Join(base, "target", FileLock)); err != nil {
		t.Errorf("the lock through the symlink is not in its target: %v", err)
	}
}

// TestStreamsStartedFresh: a run killed after its manifest and before its
// first batch (no results.csv, or a header alone, and no trace) resumes
// with empty streams instead of failing; one with a record does not.
func TestStreamsStartedFresh(t *testing.T) {
	dir := t.TempDir()
	res, tr := filepath.Join(dir, FileResults), filepath.Join(dir, FileTraces)
	s, err := OpenStreams(dir, true)
	if err != nil {
		t.Fatalf("resume with no streams: %v", err)
	}
	s.Close()
	if b, _ := os.ReadFile(res); !strings.HasPrefix(string(b), "item_id") || strings.Count(string(b), "\n") != 1 {
		t.Errorf("fresh results.csv: %q", b)
	}
	os.Remove(tr)
	if s, err = OpenStreams(dir, true); err != nil {
		t.Fatalf("resume with a header alone: %v", err)
	}
	s.Close()
	if streamsStarted(res, tr) {
		t.Error("a header alone counts as started")
	}
	os.WriteFile(tr, []byte("{\"item_id\":\"a\"}\n"), 0o644)
	if !streamsStarted(res, tr) {
		t.Error("a trace line does not count as started")
	}
}
