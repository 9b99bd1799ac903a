package probe

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"

	"github.com/fragility/fragility/probe/anatomy"
	"github.com/fragility/fragility/probe/results"
	"github.com/fragility/fragility/probe/rundir"
	"github.com/fragility/fragility/templates"
)

// clauseNumbers returns the numbers the no-op clause of in brings into its
// question (anatomy.ClauseNumbers), which the error anatomy reads
// (errors/3); nil for an instance without a clause.
func clauseNumbers(in *templates.Instance) []string {
	if in == nil || in.NoopClause == "" {
		return nil
	}
	return anatomy.ClauseNumbers(in.Question, in.NoopClause, in.NoopValues)
}

// classifyErrorOf sets t.ErrorKind by the error-anatomy rules with the
// numbers of its instance's clause, as a run classifies a trial.
func classifyErrorOf(t *results.Trial, in *templates.Instance) {
	t.ErrorKind = errorKindClause(t, clauseNumbers(in))
}

// instanceKey names an instance by its template, variant and index, as a
// trial records them.
func instanceKey(template, variant string, index int) string {
	return fmt.Sprintf("%s\x00%s\x00%d", template, variant, index)
}

// runClauses are the clause numbers of a run directory's instances, read
// from its set.jsonl when first needed: results.csv does not record them,
// and CheckScores re-derives error_kind from them.
type runClauses struct {
	dir  string
	read bool
	byID map[string][]string // nil when set.jsonl is absent or does not read
}

// clausesOf returns the clause numbers of the run directory dir (read
// lazily).
func clausesOf(dir string) *runClauses { return &runClauses{dir: dir} }

// errorKind is the error-anatomy kind of t with its instance's clause
// numbers. Where they cannot be known (a directory without a readable
// set.jsonl: results.csv and manifest.json put together by hand, which
// CheckRecords does not check against a plan either), a recorded
// clause_used that the rules without them read as other is kept as
// recorded: only the clause's numbers could tell.
func (rc *runClauses) errorKind(t *results.Trial) string {
	if !rc.read {
		rc.read = true
		if data, err := os.ReadFile(filepath.Join(rc.dir, rundir.FileSet)); err == nil {
			if set, err := templates.ReadSet(bytes.NewReader(data)); err == nil {
				rc.byID = map[string][]string{}
				for i := range set.Instances {
					in := &set.Instances[i]
					if n := clauseNumbers(in); n != nil {
						rc.byID[instanceKey(in.TemplateID, string(in.Variant), in.Index)] = n
					}
				}
			}
		}
	}
	k := errorKindClause(t, rc.byID[instanceKey(t.TemplateID, t.Variant, t.Instance)])
	if rc.byID == nil && k == anatomy.Other && t.ErrorKind == anatomy.ClauseUsed {
		return t.ErrorKind
	}
	return k
}
