package probe

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/fragility/fragility/probe/results"
	"github.com/fragility/fragility/probe/rundir"
)

// TestRecomputeRowOrder: a run directory (two models, two conditions)
// whose results.csv rows were reversed, the models' first rows included,
// is summarized to the same bytes, the models in the order the manifest
// names them (runOrder; Summarize orders the rest).
func TestRecomputeRowOrder(t *testing.T) {
	src := filepath.Join("report", "testdata", "runs", "arith")
	dir := t.TempDir()
	for _, name := range []string{rundir.FileManifest, rundir.FileResults} {
		data, err := os.ReadFile(filepath.Join(src, name))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, name), data, 0o644)
	}
	// The manifest names the models against their paths' sort order.
	man, err := rundir.ReadManifest(dir)
	if err != nil {
		t.Fatal(err)
	}
	first := "/models/a-Q8_0.gguf"
	man.Config.Models = []string{first, "/models/a-Q4_K_M.gguf"}
	data, _ := json.Marshal(man)
	os.WriteFile(filepath.Join(dir, rundir.FileManifest), data, 0o644)
	summarize := func() []byte {
		t.Helper()
		sum, err := Recompute(dir)
		if err != nil {
			t.Fatal(err)
		}
		if len(sum.Models) < 3 || sum.Models[0].Path != first {
			t.Fatalf("%d models, the first %q; want %q first", len(sum.Models), sum.Models[0].Path, first)
		}
		j, _ := json.Marshal(sum)
		return j
	}
	want := summarize()
	f, _ := os.Open(filepath.Join(dir, rundir.FileResults))
	trials, err := results.ReadCSV(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	slices.Reverse(trials)
	out, _ := os.Create(filepath.Join(dir, rundir.FileResults))
	if err := results.WriteCSV(out, trials); err != nil {
		t.Fatal(err)
	}
	out.Close()
	if got := summarize(); string(got) != string(want) {
		t.Fatal("the summary of the reversed rows differs")
	}
}
