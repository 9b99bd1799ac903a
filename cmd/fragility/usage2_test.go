package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestUsageLeftovers: an unknown subcommand is wrong usage (exit 2, one
// line) as an unknown command is, and help hints name the whole command;
// --out - is refused where --out is a directory or a protocol file;
// --items with --split or a template subset is refused; an --out that
// cannot be written is named without the temporary file's name.
func TestUsageLeftovers(t *testing.T) {
	items := filepath.Join(t.TempDir(), "items.jsonl")
	if err := os.WriteFile(items, []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"protocol", "bogus"}, `unknown command "protocol bogus" (see: fragility protocol --help)`},
		{[]string{"templates", "bogus"}, `unknown command "templates bogus" (see: fragility templates --help)`},
		{[]string{"models", "bogus"}, `unknown command "models bogus" (see: fragility models --help)`},
		{[]string{"protocol", "freeze", "--bogus"}, "flag provided but not defined: --bogus (see: fragility protocol freeze --help)"},
		{[]string{"run", "--bogus"}, "(see: fragility run --help)"},
		{[]string{"run", "--out", "-"}, "--out -: run writes a run directory"},
		{[]string{"protocol", "freeze", "--out", "-"}, "--out -: protocol freeze writes the protocol to a file"},
		{[]string{"compare", "a.gguf", "b.gguf", "--out", "-"}, "--out -: compare writes a run directory"},
		{[]string{"plan", "--items", items, "--split", "dev"}, "--items replaces --templates (and --level, --split"},
		{[]string{"plan", "--items", items, "--template-ids", "baker"}, "--items replaces --templates"},
	} {
		r := fragility(t, noModels(t), c.args...)
		line := strings.TrimSuffix(r.stderr, "\n")
		if r.code != exitUsage || strings.Contains(line, "\n") || !strings.Contains(line, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and one line with %q", c.args, r.code, r.stderr, c.want)
		}
	}
	if _, err := os.Stat("-"); err == nil {
		t.Error(`a file named "-" was written`)
	}
	out := filepath.Join(t.TempDir(), "no-such-dir", "set.jsonl")
	r := fragility(t, nil, "generate-set", "--instances", "1", "--variants", "base", "--template-ids", "baker", "--out", out)
	oneErrorLine(t, "generate-set into a missing folder", r, "--out "+out+": the folder "+filepath.Dir(out)+" does not exist (or is not a folder)")
	if strings.Contains(r.stderr, ".tmp") {
		t.Errorf("the error names a temporary file: %s", r.stderr)
	}
}
