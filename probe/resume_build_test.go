package probe

import (
	"strings"
	"testing"

	"github.com/fragility/fragility/llm"
	"github.com/fragility/fragility/probe/rundir"
)

// TestRefuseMixedBuild: a resume by a binary whose answer scoring or
// llama.cpp differs from the run's is refused with one line naming both;
// the same build, and a run recorded before answer scoring, are not.
func TestRefuseMixedBuild(t *testing.T) {
	now := &rundir.Manifest{AnswerScore: AnswerScoreVersion, LlamaCommit: llm.LlamaCommit}
	cases := []struct {
		name string
		old  *rundir.Manifest
		want string // "" for no error
	}{
		{"no manifest", nil, ""},
		{"same build", &rundir.Manifest{AnswerScore: AnswerScoreVersion, LlamaCommit: llm.LlamaCommit}, ""},
		{"before answer scoring", &rundir.Manifest{LlamaCommit: llm.LlamaCommit}, ""},
		{"older answer scoring", &rundir.Manifest{AnswerScore: "answer-score/2", LlamaCommit: llm.LlamaCommit}, "started with answer scoring answer-score/2, this binary has " + AnswerScoreVersion},
		{"other llama.cpp", &rundir.Manifest{AnswerScore: AnswerScoreVersion, LlamaCommit: "b0000"}, "started with llama.cpp b0000, this binary has " + llm.LlamaCommit},
	}
	for _, c := range cases {
		err := refuseMixedBuild("runs/x", c.old, now)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "runs/x: ") || strings.Contains(err.Error(), "\n")):
			t.Errorf("%s: %v, want one line with %q", c.name, err, c.want)
		}
	}
}
