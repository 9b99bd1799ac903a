package report

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/fragility/fragility/probe/rundir"
)

// TestRewriteByteIdentical: `fragility report` (Rewrite) on the checked-in
// run directories of testdata/runs reproduces their summary.json and
// narrative.md byte for byte. The package move of issue 29 (the summary
// into probe/summary, the narrative into this package) reproduced the files
// of the code before it (commit 97234d3) byte for byte; since then a change
// of statistics or wording updates them on purpose, in the same commit. The runs are synthetic results.csv files (two quantizations of a
// model with and without the calculator over three difficulty levels;
// document questions; one model on 26 templates, where the sign-flip test is
// Monte Carlo and the bootstrap interval is reported) with the manifest of
// a real run on the fast test model.
func TestRewriteByteIdentical(t *testing.T) {
	runs, err := filepath.Glob(filepath.Join("testdata", "runs", "*"))
	if err != nil || len(runs) == 0 {
		t.Fatalf("no runs in testdata/runs (%v)", err)
	}
	for _, src := range runs {
		t.Run(filepath.Base(src), func(t *testing.T) {
			dir := t.TempDir()
			for _, f := range []string{rundir.FileManifest, rundir.FileResults} {
				b, err := os.ReadFile(filepath.Join(src, f))
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := Rewrite(dir); err != nil {
				t.Fatal(err)
			}
			for _, f := range []string{rundir.FileSummary, rundir.FileNarrative} {
				want, err := os.ReadFile(filepath.Join(src, f))
				if err != nil {
					t.Fatal(err)
				}
				got, err := os.ReadFile(filepath.Join(dir, f))
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, want) && os.Getenv("FRAGILITY_UPDATE_GOLDEN") == "1" {
					// A change of statistics or wording made on purpose:
					// FRAGILITY_UPDATE_GOLDEN=1 go test -run TestRewriteByteIdentical ./probe/report/
					if err := os.WriteFile(filepath.Join(src, f), got, 0o644); err != nil {
						t.Fatal(err)
					}
					continue
				}
				if !bytes.Equal(got, want) {
					i := 0
					for i < len(got) && i < len(want) && got[i] == want[i] {
						i++
					}
					t.Errorf("%s differs from %s at byte %d", f, filepath.Join(src, f), i)
				}
			}
		})
	}
}
