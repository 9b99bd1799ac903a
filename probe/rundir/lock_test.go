package rundir

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

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
