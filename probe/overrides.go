package probe

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/fragility/fragility/internal/jsonerr"
	"github.com/fragility/fragility/internal/readlimit"
	"github.com/fragility/fragility/probe/anatomy"
	"github.com/fragility/fragility/probe/answer"
	"github.com/fragility/fragility/probe/docqa"
	"github.com/fragility/fragility/probe/results"
	"github.com/fragility/fragility/templates"
)

// Override is one line of a label-overrides file (run --overrides FILE,
// JSON Lines): it names a template ("template", every instance of it) or
// one instance ("item", an instance ID as in set.jsonl, e.g.
// "baker/base/0"), and either gives the corrected answer ("answer", a
// number) or excludes it ("exclude": the reason, required). "reason" may
// explain a corrected answer. Overrides apply before scoring: the run's
// results.csv keeps what the model said and the label it was given, and the
// statistics (summary.json, narrative.md) use the corrected labels.
type Override struct {
	Template string `json:"template,omitempty"`
	Item     string `json:"item,omitempty"`
	Answer   string `json:"answer,omitempty"`
	Exclude  string `json:"exclude,omitempty"`
	Reason   string `json:"reason,omitempty"`
	line     int
}

// maxOverridesSize bounds a label-overrides file (ReadOverrides), in bytes.
const maxOverridesSize = 64 << 20

// ReadOverrides reads and checks a label-overrides file; errors name the
// file and line. It returns the overrides and the file's sha256.
func ReadOverrides(path string) ([]Override, string, error) {
	data, err := readlimit.ReadFile(path, maxOverridesSize)
	if readlimit.IsTooLarge(err) {
		return nil, "", fmt.Errorf("overrides %w", err)
	}
	if err != nil {
		return nil, "", fmt.Errorf("overrides %s: %w", path, templates.BarePathError(err))
	}
	sum := sha256.Sum256(data)
	var out []Override
	seen := map[string]int{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	line := 0
	for sc.Scan() {
		line++
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 || b[0] == '#' {
			continue
		}
		var o Override
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&o); err != nil {
			return nil, "", fmt.Errorf("%s:%d: bad JSON: %s", path, line, jsonerr.Text(b, err))
		}
		o.line = line
		switch {
		case (o.Template == "") == (o.Item == ""):
			return nil, "", fmt.Errorf("%s:%d: give one of \"template\" or \"item\"", path, line)
		case (o.Answer == "") == (o.Exclude == ""):
			return nil, "", fmt.Errorf("%s:%d: give one of \"answer\" (the corrected answer) or \"exclude\" (the reason)", path, line)
		case o.Answer != "" && !answer.AnswerMatches(o.Answer, o.Answer):
			return nil, "", fmt.Errorf("%s:%d: answer %q is not a number", path, line, o.Answer)
		case strings.TrimSpace(o.Exclude) == "" && o.Answer == "":
			return nil, "", fmt.Errorf("%s:%d: \"exclude\" needs a reason", path, line)
		}
		key := "template " + o.Template
		if o.Item != "" {
			key = "item " + o.Item
		}
		if prev, ok := seen[key]; ok {
			return nil, "", fmt.Errorf("%s:%d: %s is overridden twice (also line %d)", path, line, key, prev)
		}
		seen[key] = line
		out = append(out, o)
	}
	if err := sc.Err(); err != nil {
		return nil, "", fmt.Errorf("%s:%d: %v", path, line+1, err)
	}
	if len(out) == 0 {
		return nil, "", fmt.Errorf("overrides %s: no override in the file", path)
	}
	return out, hex.EncodeToString(sum[:]), nil
}

// instanceOf is the instance ID of a trial's item ID ("m0/baker/base/0" →
// "baker/base/0").
func instanceOf(itemID string) string {
	if _, rest, ok := strings.Cut(itemID, "/"); ok && strings.HasPrefix(itemID, "m") {
		return rest
	}
	return itemID
}

// ApplyOverrides returns the trials with the overrides applied: an excluded
// trial is left out; a corrected one gets Expected = the answer and is
// re-scored (Correct, ExpectedAnywhere, F1) from its recorded extraction. An
// item override wins over its template's. An override that matches no
// trial, or a corrected answer for a document item scored by exact match, is
// an error naming the file and line.
func ApplyOverrides(trials []results.Trial, ovs []Override, path string) ([]results.Trial, int, int, error) {
	byTemplate, byItem := map[string]*Override{}, map[string]*Override{}
	used := map[*Override]bool{}
	for i := range ovs {
		if ovs[i].Item != "" {
			byItem[ovs[i].Item] = &ovs[i]
		} else {
			byTemplate[ovs[i].Template] = &ovs[i]
		}
	}
	var out []results.Trial
	overridden, excluded := 0, 0
	for _, t := range trials {
		o := byItem[instanceOf(t.ItemID)]
		if o == nil {
			o = byTemplate[t.TemplateID]
		}
		if o == nil {
			out = append(out, t)
			continue
		}
		used[o] = true
		if o.Exclude != "" {
			excluded++
			continue
		}
		if t.ScoreRule != "" && t.ScoreRule != docqa.ScoreNumber {
			return nil, 0, 0, fmt.Errorf("%s:%d: %s is scored by %s: a corrected answer applies to numeric items only (exclude it instead)", path, o.line, t.ItemID, t.ScoreRule)
		}
		t.Expected = o.Answer
		t.Correct = t.Rule != answer.RuleNone && answer.AnswerMatches(t.Extracted, o.Answer)
		t.ExpectedAnywhere = answer.ExpectedAnywhere(t.Response, o.Answer)
		if t.F1 = 0; t.Correct {
			t.F1 = 1
		}
		was := t.ErrorKind
		classifyError(&t)
		if was == anatomy.ClauseUsed && !t.Correct {
			// No rule up to clause_used reads the expected answer, so a
			// corrected one leaves it; the clause's numbers it may rest on
			// (errors/3) are in set.jsonl, not in the row.
			t.ErrorKind = was
		}
		overridden++
		out = append(out, t)
	}
	for i := range ovs {
		if !used[&ovs[i]] {
			what := "template " + ovs[i].Template
			if ovs[i].Item != "" {
				what = "item " + ovs[i].Item
			}
			return nil, 0, 0, fmt.Errorf("%s:%d: %s is not in the run", path, ovs[i].line, what)
		}
	}
	if len(out) == 0 && excluded > 0 {
		return nil, 0, 0, fmt.Errorf("%s: every trial of the run is excluded: nothing is left to score", path)
	}
	return out, overridden, excluded, nil
}

// checkOverrides applies the overrides file at path to the set's items
// before any model runs, so that an override naming a template or item the
// run does not have, or one that excludes every item, is refused before
// generation rather than after it.
func checkOverrides(path string, set *templates.Set) error {
	ovs, _, err := ReadOverrides(path)
	if err != nil {
		return err
	}
	trials := make([]results.Trial, len(set.Instances))
	for i, in := range set.Instances {
		trials[i] = results.Trial{ItemID: itemID(0, &set.Instances[i]), TemplateID: in.TemplateID}
	}
	_, _, _, err = ApplyOverrides(trials, ovs, path)
	return err
}
