package templates

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// builtinCopy writes the named built-in templates into a new folder.
func builtinCopy(t *testing.T, names ...string) string {
	t.Helper()
	d := t.TempDir()
	for _, n := range names {
		b, err := builtinFS.ReadFile("builtin/" + n + ".yaml")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, n+".yaml"), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return d
}

func ids(ts []*Template) string {
	var out []string
	for _, t := range ts {
		out = append(out, t.ID)
	}
	return strings.Join(out, ",")
}

// TestSourcesUnionAndSubset: several sources load as their union in
// order (LoadWith and LoadSkipping), a template ID in two of them is
// refused naming both files, IDs and Limit select a subset, an unknown ID
// is an error naming it, and the union's hash changes with either source.
func TestSourcesUnionAndSubset(t *testing.T) {
	a, b := builtinCopy(t, "baker", "cinema"), builtinCopy(t, "orchard")
	src := JoinSources([]string{a, b})
	if got := SplitSources(src); len(got) != 2 || got[0] != a || got[1] != b {
		t.Fatalf("SplitSources(%q) = %q", src, got)
	}
	if JoinSources(nil) != "builtin" || len(SplitSources("builtin")) != 1 {
		t.Error("no source is not builtin")
	}
	ts, err := LoadWith(src, LoadOptions{})
	if err != nil || ids(ts) != "baker,cinema,orchard" {
		t.Fatalf("union: %q, %v", ids(ts), err)
	}
	ts, _, err = LoadSkipping(src, LoadOptions{IDs: []string{"orchard", "baker"}})
	if err != nil || ids(ts) != "baker,orchard" {
		t.Errorf("IDs: %q, %v", ids(ts), err)
	}
	ts, err = LoadWith(src, LoadOptions{Limit: 2})
	if err != nil || ids(ts) != "baker,cinema" {
		t.Errorf("Limit 2: %q, %v", ids(ts), err)
	}
	if _, err := LoadWith(src, LoadOptions{IDs: []string{"baker", "nosuch"}}); err == nil || !strings.Contains(err.Error(), `no template "nosuch"`) {
		t.Errorf("unknown ID: %v", err)
	}
	if _, err := LoadWith(src, LoadOptions{IDs: []string{"bakre"}}); err == nil || !strings.Contains(err.Error(), `no template "bakre" in `+src+` (did you mean baker?; `) {
		t.Errorf("a misspelt ID: %v, want the nearest one named", err)
	}
	dup := builtinCopy(t, "baker")
	for name, load := range map[string]func(string) error{
		"LoadWith":     func(s string) error { _, err := LoadWith(s, LoadOptions{}); return err },
		"LoadSkipping": func(s string) error { _, _, err := LoadSkipping(s, LoadOptions{}); return err },
	} {
		err := load(JoinSources([]string{a, dup}))
		if err == nil || !strings.Contains(err.Error(), filepath.Join(a, "baker.yaml")) || !strings.Contains(err.Error(), filepath.Join(dup, "baker.yaml")) {
			t.Errorf("%s with a duplicate ID: %v", name, err)
		}
	}
	h1, err1 := SourceSHA256(src, LoadOptions{})
	h2, err2 := SourceSHA256(JoinSources([]string{a, dup}), LoadOptions{})
	ha, _ := SourceSHA256(a, LoadOptions{})
	if err1 != nil || err2 != nil || h1 == h2 || h1 == ha {
		t.Errorf("hashes %s %s %s (%v %v)", h1, h2, ha, err1, err2)
	}
	if !HasFolder(src) || HasFolder("builtin") {
		t.Error("HasFolder")
	}
}
