package templates

import (
	"os"
	"path/filepath"
	"testing"
)

// TestSplit: a template's split depends on its ID and text alone, about
// 30% of the built-in library is dev, a set keeps one split, and
// SourceSHA256 changes with a file's bytes.
func TestSplit(t *testing.T) {
	ts := mustBuiltin(t)
	dev := 0
	for _, x := range ts {
		if s := x.Split(); s == SplitDev {
			dev++
		} else if s != SplitTest {
			t.Fatalf("%s: split %q", x.ID, s)
		}
		if x.Split() != x.Split() {
			t.Fatal("split not stable")
		}
	}
	// Binomial(68, 0.3): mean 20.4, sd 3.8; outside 8..33 is beyond 3 sd.
	if dev < 8 || dev > 33 {
		t.Errorf("%d of %d built-in templates are dev", dev, len(ts))
	}
	set, err := Generate(ts, Options{Variants: []Variant{VariantBase}, Instances: 1, Split: SplitDev})
	if err != nil || len(set.Templates) != dev {
		t.Fatalf("dev set: %v, %d templates, want %d", err, len(set.Templates), dev)
	}
	if _, err := ParseSplit("train"); err == nil {
		t.Error("split train accepted")
	}
	if _, err := Generate(ts, Options{Variants: []Variant{VariantBase}, Instances: 1, Split: "train"}); err == nil {
		t.Error("Generate took split train")
	}
	dir := t.TempDir()
	f := filepath.Join(dir, "a.yaml")
	b, _ := builtinFS.ReadFile("builtin/baker.yaml")
	os.WriteFile(f, b, 0o644)
	h1, err := SourceSHA256(dir, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(f, append(b, ' '), 0o644)
	h2, _ := SourceSHA256(dir, LoadOptions{})
	hb, _ := SourceSHA256("builtin", LoadOptions{})
	if h1 == h2 || len(h1) != 64 || len(hb) != 64 {
		t.Errorf("hashes %s %s %s", h1, h2, hb)
	}
}
