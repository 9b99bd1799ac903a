package templates

import (
	"os"
	"path/filepath"
	"testing"
)

// sharedDir locates the project's shared/ directory: $FRAGILITY_SHARED, or
// ../../shared relative to this package (the repository's sibling). Tests
// that need it skip only when it is truly absent.
func sharedDir(t testing.TB) string {
	t.Helper()
	if d := os.Getenv("FRAGILITY_SHARED"); d != "" {
		return d
	}
	for _, d := range []string{filepath.Join("..", "..", "shared"), filepath.Join("..", "shared")} {
		if st, err := os.Stat(filepath.Join(d, "samples")); err == nil && st.IsDir() {
			return d
		}
	}
	t.Skip("third-party files not in the repository: the project's shared/ directory (GSM-Symbolic templates, GSM8K test split) was not found; set FRAGILITY_SHARED")
	return ""
}

func mustBuiltin(t testing.TB) []*Template {
	t.Helper()
	ts, err := Builtin()
	if err != nil {
		t.Fatal(err)
	}
	return ts
}
