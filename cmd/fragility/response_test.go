package main

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fragility/fragility/probe/rundir"
)

// TestEditedResponseRefused: a copy of a run whose results.csv has one
// response edited by hand (a letter's case: "the" to "The"), its
// traces.jsonl left as the run wrote it, is refused by report and by
// verify before any replay, each with one error line (exit 1) naming
// results.csv, the row's line and item and that its response differs from
// its trace; the untouched copy is reported.
func TestEditedResponseRefused(t *testing.T) {
	want, _ := faultStraight(t)
	dir := filepath.Join(t.TempDir(), "run")
	os.Mkdir(dir, 0o755)
	for _, name := range []string{rundir.FileManifest, rundir.FileSet, rundir.FileTraces, rundir.FileResults} {
		b, err := os.ReadFile(filepath.Join(want, name))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, name), b, 0o644)
	}
	if r := fragility(t, nil, "report", dir); r.code != 0 {
		t.Fatalf("untouched copy: exit %d\n%s", r.code, tail(r.stderr))
	}
	path := filepath.Join(dir, rundir.FileResults)
	f, _ := os.Open(path)
	recs, err := csv.NewReader(f).ReadAll()
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	col, id := slices.Index(recs[0], "response"), slices.Index(recs[0], "item_id")
	row, at := -1, -1
	for i := 1; i < len(recs) && row < 0; i++ {
		if at = strings.IndexAny(recs[i][col], "abcdefghijklmnopqrstuvwxyz"); at >= 0 {
			row = i
		}
	}
	if row < 0 {
		t.Fatal("no response with a letter to edit")
	}
	b := []byte(recs[row][col])
	b[at] -= 'a' - 'A'
	recs[row][col] = string(b)
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	w.WriteAll(recs)
	os.WriteFile(path, buf.Bytes(), 0o644)
	// The line the edited row starts on (responses may span lines).
	r := csv.NewReader(bytes.NewReader(buf.Bytes()))
	line := 0
	for k := 0; k <= row; k++ {
		r.Read()
		line, _ = r.FieldPos(0)
	}
	msg := fmt.Sprintf("%s: line %d (item %s): its response differs from its trace in %s at byte %d", path, line, recs[row][id], rundir.FileTraces, at)
	oneErrorLine(t, "report of an edited response", fragility(t, nil, "report", dir), msg)
	res := fragility(t, nil, "verify", "--quiet", dir)
	oneErrorLine(t, "verify of an edited response", res, msg)
	if strings.Contains(res.stdout, "verified") {
		t.Errorf("verify of an edited response says %q", res.stdout)
	}
}
