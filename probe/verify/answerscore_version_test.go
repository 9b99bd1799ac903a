package verify

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fragility/fragility/probe"
	"github.com/fragility/fragility/probe/rundir"
)

// TestVerifyRefusesOtherAnswerScore: a run recorded under another
// answer-scoring version (answer-score/2 decoded the forced tokens one per
// call, this binary's together) is refused before any replay, even forced,
// with a message naming the manifest and both versions, not replayed into
// bit mismatches.
func TestVerifyRefusesOtherAnswerScore(t *testing.T) {
	if probe.AnswerScoreVersion == "answer-score/2" {
		t.Fatal("this binary's answer scoring is answer-score/2")
	}
	dir := t.TempDir()
	man := &rundir.Manifest{AnswerScore: "answer-score/2", Status: "complete"}
	if err := rundir.WriteJSONAtomic(filepath.Join(dir, rundir.FileManifest), man); err != nil {
		t.Fatal(err)
	}
	_, err := Verify(context.Background(), dir, VerifyOptions{Force: true})
	if err == nil || !strings.Contains(err.Error(), "answer-score/2") || !strings.Contains(err.Error(), probe.AnswerScoreVersion) || !strings.Contains(err.Error(), rundir.FileManifest) {
		t.Fatalf("a run recorded under answer-score/2: %v", err)
	}
	if err := checkAnswerScore(dir, &rundir.Manifest{}); err != nil {
		t.Errorf("a run without answer scoring: %v", err)
	}
	if err := checkAnswerScore(dir, &rundir.Manifest{AnswerScore: probe.AnswerScoreVersion}); err != nil {
		t.Errorf("a run under this binary's answer scoring: %v", err)
	}
}
