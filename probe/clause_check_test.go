package probe

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fragility/fragility/probe/anatomy"
	"github.com/fragility/fragility/probe/answer"
	"github.com/fragility/fragility/probe/results"
	"github.com/fragility/fragility/probe/rundir"
	"github.com/fragility/fragility/templates"
)

// TestCheckScoresClauseNumbers (errors/3): CheckScores re-derives a
// clause_used that rests on the clause's numbers from the set.jsonl
// beside results.csv, refusing the row edited to other; without set.jsonl
// it keeps what was recorded; older rules are read as recorded.
func TestCheckScoresClauseNumbers(t *testing.T) {
	in := clauseInstance()
	tr := clauseTrial(in)
	classifyErrorOf(&tr, &in)
	dir := t.TempDir()
	var set bytes.Buffer
	if err := (&templates.Set{Instances: []templates.Instance{in}}).WriteJSONL(&set); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, rundir.FileSet), set.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, rundir.FileResults)
	if err := CheckScores(path, answer.ExtractionRulesVersion, anatomy.Version, []results.Trial{tr}); err != nil {
		t.Errorf("clause_used with set.jsonl: %v", err)
	}
	edited := tr
	edited.ErrorKind = anatomy.Other
	if err := CheckScores(path, answer.ExtractionRulesVersion, anatomy.Version, []results.Trial{edited}); err == nil ||
		!strings.Contains(err.Error(), `error_kind is "other", but the error-anatomy rules `+anatomy.Version+` give "clause_used"`) {
		t.Errorf("edited to other: %v", err)
	}
	if err := CheckScores(path, answer.ExtractionRulesVersion, "errors/2", []results.Trial{edited}); err != nil {
		t.Errorf("errors/2 read as recorded: %v", err)
	}

	// No set.jsonl: the clause's numbers are unknown, so a recorded
	// clause_used stands, and so does other.
	bare := filepath.Join(t.TempDir(), rundir.FileResults)
	for _, x := range []results.Trial{tr, edited} {
		if err := CheckScores(bare, answer.ExtractionRulesVersion, anatomy.Version, []results.Trial{x}); err != nil {
			t.Errorf("no set.jsonl, %s: %v", x.ErrorKind, err)
		}
	}
}
