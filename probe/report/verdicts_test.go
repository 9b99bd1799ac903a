package report

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fragility/fragility/probe/rundir"
)

// TestVerdictsFirst: narrative.md opens with every model's verdict, each
// within its first 25 lines, in lines a reader does not skim past (none
// over 300 characters), on the checked-in four-model run.
func TestVerdictsFirst(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{rundir.FileManifest, rundir.FileResults} {
		b, err := os.ReadFile(filepath.Join("testdata", "runs", "arith", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sum, err := Rewrite(dir)
	if err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(dir, rundir.FileNarrative))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(md), "\n")
	if len(sum.Models) < 4 {
		t.Fatalf("%d models", len(sum.Models))
	}
	for _, m := range sum.Models {
		at := -1
		for i, l := range lines[:min(25, len(lines))] {
			if strings.HasPrefix(l, "**"+m.Label+": "+m.Headline) {
				at = i
			}
		}
		if at < 0 {
			t.Errorf("%s: verdict %q not in the first 25 lines:\n%s", m.Label, m.Headline, strings.Join(lines[:min(25, len(lines))], "\n"))
		}
	}
	for _, l := range strings.Split(Verdicts(sum), "\n") {
		if len([]rune(l)) > 300 {
			t.Errorf("a verdict line of %d characters: %q", len([]rune(l)), l)
		}
	}
}
