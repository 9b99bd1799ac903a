package models

import (
	"os"
	"path/filepath"
	"testing"
)

// TestSHA256FileOnce checks the remembered hash against SHA256File and that
// a file rewritten with another size is hashed again.
func TestSHA256FileOnce(t *testing.T) {
	p := filepath.Join(t.TempDir(), "m.gguf")
	if err := os.WriteFile(p, []byte("abc"), 0o644); err != nil {
		t.Fatal(err)
	}
	const abc = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" // sha256("abc"), FIPS 180-2 example
	for i := 0; i < 2; i++ {
		if sum, err := SHA256FileOnce(p); err != nil || sum != abc {
			t.Fatalf("call %d: %s, %v; want %s", i+1, sum, err, abc)
		}
	}
	if err := os.WriteFile(p, []byte("abcd"), 0o644); err != nil {
		t.Fatal(err)
	}
	want, _ := SHA256File(p)
	if sum, err := SHA256FileOnce(p); err != nil || sum != want || sum == abc {
		t.Fatalf("after a rewrite: %s, %v; want %s", sum, err, want)
	}
	if _, err := SHA256FileOnce(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Fatal("no error for a missing file")
	}
}
