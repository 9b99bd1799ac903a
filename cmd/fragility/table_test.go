package main

import (
	"encoding/csv"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// tableRuns copies probe/report's three synthetic runs into a temporary
// folder and re-renders each (fragility report), so that its summary.json
// is this version's.
func tableRuns(t *testing.T) []string {
	t.Helper()
	root := t.TempDir()
	var dirs []string
	for _, name := range []string{"arith", "docqa", "many"} {
		dst := filepath.Join(root, name)
		if err := os.CopyFS(dst, os.DirFS(filepath.Join("..", "..", "probe", "report", "testdata", "runs", name))); err != nil {
			t.Fatal(err)
		}
		if r := fragility(t, nil, "report", dst); r.code != 0 {
			t.Fatalf("report %s: exit %d\n%s", name, r.code, tail(r.stderr))
		}
		dirs = append(dirs, dst)
	}
	return dirs
}

// TestTableCommand: fragility table over three run directories prints a
// row per model (7) in each format, flags runs under different protocols,
// and refuses a folder that is not a run directory in one line (exit 1).
func TestTableCommand(t *testing.T) {
	dirs := tableRuns(t)
	r := fragility(t, nil, append([]string{"table"}, dirs...)...)
	lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
	if r.code != 0 || r.stderr != "" || len(lines) != 8 || !strings.HasPrefix(lines[0], "run ") ||
		!strings.Contains(lines[1], "a-Q4_K_M") || !strings.Contains(lines[7], "b-Q4_K_M") || !strings.Contains(lines[7], "50.0%") {
		t.Errorf("text: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	r = fragility(t, nil, append([]string{"table", "--format", "csv"}, dirs...)...)
	recs, err := csv.NewReader(strings.NewReader(r.stdout)).ReadAll()
	if r.code != 0 || err != nil || len(recs) != 8 || recs[0][0] != "dir" || recs[3][1] != "a-Q8_0" {
		t.Errorf("csv: exit %d (%v)\n%s%s", r.code, err, r.stdout, r.stderr)
	}
	r = fragility(t, nil, append([]string{"table", "--format", "html"}, dirs...)...)
	if r.code != 0 || !strings.HasPrefix(r.stdout, "<!DOCTYPE html>") || strings.Count(r.stdout, "<tr>") != 8 || strings.Contains(r.stdout, "http") {
		t.Errorf("html: exit %d\n%s%s", r.code, tail(r.stdout), r.stderr)
	}

	// The many run under a protocol: the rows are not comparable.
	man := filepath.Join(dirs[2], "manifest.json")
	data, err := os.ReadFile(man)
	if err != nil {
		t.Fatal(err)
	}
	hash := strings.Repeat("cd", 32)
	edited := strings.Replace(string(data), `"config": {`, `"config": {"protocol_sha256": "`+hash+`",`, 1)
	if edited == string(data) {
		t.Fatal("manifest without a config object")
	}
	os.WriteFile(man, []byte(edited), 0o644)
	r = fragility(t, nil, append([]string{"table"}, dirs...)...)
	if r.code != 0 || !strings.HasPrefix(r.stdout, "not comparable: the rows follow 2 different protocols (none, cdcdcdcdcdcd)") || !strings.Contains(r.stdout, "protocol (differs)") {
		t.Errorf("two protocols: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = fragility(t, nil, append([]string{"table", "--format", "json"}, dirs...)...)
	if r.code != 0 || r.stderr != "fragility: not comparable: the rows follow 2 different protocols (none, cdcdcdcdcdcd); a difference between rows of different protocols may be the protocol's, not the model's\n" ||
		!strings.Contains(r.stdout, `"comparable": false`) {
		t.Errorf("two protocols, json: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	// --json and --csv are --format's shorthands, as --json is in every
	// command (round-4 retry: "flag provided but not defined: --json").
	if js := fragility(t, nil, append([]string{"table", "--json"}, dirs...)...); js.code != 0 || js.stdout != r.stdout {
		t.Errorf("--json: exit %d, not --format json's output\n%s", js.code, js.stderr)
	}
	if cs, want := fragility(t, nil, append([]string{"table", "--csv"}, dirs...)...), fragility(t, nil, append([]string{"table", "--format", "csv"}, dirs...)...); cs.code != 0 || cs.stdout != want.stdout {
		t.Errorf("--csv: exit %d, not --format csv's output\n%s", cs.code, cs.stderr)
	}
	if both := fragility(t, nil, "table", "--json", "--format", "csv", dirs[0]); both.code != exitUsage {
		t.Errorf("--json with --format csv: exit %d\n%s", both.code, both.stderr)
	}

	notRun := t.TempDir()
	r = fragility(t, nil, "table", dirs[0], notRun)
	oneErrorLine(t, "not a run directory", r, notRun+": no manifest: not a run directory")
	if r.stdout != "" {
		t.Errorf("not a run directory: stdout %q", r.stdout)
	}
	r = fragility(t, nil, "table", "--format", "xml", dirs[0])
	if r.code != exitUsage || !strings.Contains(r.stderr, `--format "xml": want one of text, csv, json, html`) {
		t.Errorf("--format xml: exit %d\n%s", r.code, r.stderr)
	}
}
