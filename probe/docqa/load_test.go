package docqa

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestLoadMissingNamesFlag: an --items file that is not there, or a
// folder, is refused naming the flag, not as open(2)'s bare error.
func TestLoadMissingNamesFlag(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "nope.jsonl")
	if _, err := Load(missing); err == nil || !strings.HasPrefix(err.Error(), "--items "+missing+": no such file or directory") {
		t.Errorf("missing: %v", err)
	}
	if _, err := Load(dir); err == nil || !strings.HasPrefix(err.Error(), "--items "+dir+": a folder") {
		t.Errorf("folder: %v", err)
	}
}
