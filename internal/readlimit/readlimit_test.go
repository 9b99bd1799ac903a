package readlimit

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadFile: a file within the bound is read whole; one byte over, and
// an endless device, give one line naming the file; a missing file gives
// os.Open's error.
func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "x.yaml")
	if err := os.WriteFile(p, []byte("12345"), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, err := ReadFile(p, 5); err != nil || string(b) != "12345" {
		t.Errorf("within the bound: %q, %v", b, err)
	}
	_, err := ReadFile(p, 4)
	if !IsTooLarge(err) || !strings.HasPrefix(err.Error(), p+": larger than 4 bytes") || strings.Contains(err.Error(), "\n") {
		t.Errorf("one byte over: %v", err)
	}
	if _, err := os.Stat("/dev/zero"); err == nil {
		_, err := ReadFile("/dev/zero", 2<<20)
		if !IsTooLarge(err) || !strings.Contains(err.Error(), "/dev/zero: larger than 2 MiB") {
			t.Errorf("/dev/zero: %v", err)
		}
	}
	if _, err := ReadFile(filepath.Join(dir, "none"), 5); !os.IsNotExist(err) {
		t.Errorf("missing file: %v", err)
	}
}
