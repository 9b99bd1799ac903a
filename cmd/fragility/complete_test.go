package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestResumeCompleteAndReportHTML: --resume on a complete run says so and
// changes nothing; `report DIR` re-renders a report.html that is there, so
// that the page never shows older numbers than summary.json; --resume on a
// complete run whose results.csv was torn afterwards says so and exits 1.
func TestResumeCompleteAndReportHTML(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"manifest.json", "results.csv"} {
		b, err := os.ReadFile(filepath.Join("..", "..", "probe", "report", "testdata", "runs", "many", f))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, f), b, 0o644)
	}
	before, _ := os.ReadFile(filepath.Join(dir, "results.csv"))
	r := fragility(t, noModels(t), "run", "--resume", dir)
	if r.code != 0 || !strings.Contains(r.stderr, "is complete: nothing to resume") || r.stdout != "" {
		t.Errorf("resume of a complete run: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	if after, _ := os.ReadFile(filepath.Join(dir, "results.csv")); string(after) != string(before) {
		t.Error("the complete run was changed")
	}
	os.WriteFile(filepath.Join(dir, "report.html"), []byte("old numbers"), 0o644)
	if r := fragility(t, noModels(t), "report", dir); r.code != 0 {
		t.Fatalf("report: exit %d: %s", r.code, r.stderr)
	}
	if page, _ := os.ReadFile(filepath.Join(dir, "report.html")); strings.Contains(string(page), "old numbers") || !strings.Contains(string(page), "<html") {
		t.Error("report left the old report.html")
	}
	// A results.csv torn after the run finished: "nothing to resume" while
	// report refused the run left no way forward.
	os.WriteFile(filepath.Join(dir, "results.csv"), before[:len(before)-200], 0o644)
	r = fragility(t, noModels(t), "run", "--resume", dir)
	if r.code != 1 || !strings.Contains(r.stderr, "is complete, but its files no longer read") || !strings.Contains(r.stderr, "results.csv") || strings.Count(r.stderr, "\n") != 1 {
		t.Errorf("resume of a complete run with a torn results.csv: exit %d, stderr %q", r.code, r.stderr)
	}
	if strings.Contains(r.stderr, "finish it with") {
		t.Errorf("resume of a complete run quotes the advice for an interrupted one: %q", r.stderr)
	}
}
