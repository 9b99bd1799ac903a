package probe

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/fragility/fragility/probe/answer"
	"github.com/fragility/fragility/probe/docqa"
	"github.com/fragility/fragility/probe/results"
	"github.com/fragility/fragility/templates"
)

// PlannedItems returns the IDs of the items the plan of the run directory
// dir holds, in plan order: every model's items under every condition,
// from set.jsonl and manifest.json (a shard's contiguous part of the plan
// for a shard). Errors name the file.
func PlannedItems(dir string, man *Manifest) ([]string, error) {
	path := filepath.Join(dir, FileSet)
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	set, err := templates.ReadSet(f)
	f.Close()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	cfg := man.Config
	cfg.Models = make([]string, len(man.Models))
	batches := planBatches(cfg, set)
	if sh := man.Shard; sh != nil && sh.FirstBatch+sh.Batches <= len(batches) {
		batches = batches[sh.FirstBatch : sh.FirstBatch+sh.Batches]
	}
	var ids []string
	for _, b := range batches {
		for _, it := range b.items {
			ids = append(ids, it.id)
		}
	}
	return ids, nil
}

// CheckRecords checks the records of a complete run directory against its
// plan: results.csv (trials) and traces.jsonl (traceIDs, nil to skip) hold
// every planned item once and nothing else. The error names the file and
// the first items missing, repeated or not planned, with the counts. A run
// that is not complete (a status other than "complete") is not checked.
func CheckRecords(dir string, man *Manifest, trials []results.Trial, traceIDs []string) error {
	if man.Status != "complete" {
		return nil
	}
	planned, err := PlannedItems(dir, man)
	if err != nil {
		return err
	}
	ids := make([]string, len(trials))
	for i := range trials {
		ids[i] = trials[i].ItemID
	}
	if err := sameItems(filepath.Join(dir, FileResults), "row", planned, ids); err != nil {
		return err
	}
	if traceIDs != nil {
		return sameItems(filepath.Join(dir, FileTraces), "trace", planned, traceIDs)
	}
	return nil
}

// sameItems compares the item IDs a file holds with the planned ones.
func sameItems(path, what string, planned, got []string) error {
	want := make(map[string]bool, len(planned))
	for _, id := range planned {
		want[id] = true
	}
	seen := map[string]bool{}
	var missing, extra, twice []string
	for _, id := range got {
		switch {
		case seen[id]:
			twice = append(twice, id)
		case !want[id]:
			extra = append(extra, id)
		}
		seen[id] = true
	}
	for _, id := range planned {
		if !seen[id] {
			missing = append(missing, id)
		}
	}
	var parts []string
	for _, x := range []struct {
		what string
		ids  []string
	}{{"with no " + what, missing}, {"with two " + what + "s or more", twice}, {"not in the plan", extra}} {
		if len(x.ids) > 0 {
			parts = append(parts, fmt.Sprintf("%d item(s) %s (%s)", len(x.ids), x.what, firstIDs(x.ids)))
		}
	}
	if len(parts) == 0 {
		return nil
	}
	return fmt.Errorf("%s: %s; the plan has %d items and the file %d %ss: the run directory is not the run its manifest says (re-run, or --resume an interrupted run)",
		path, strings.Join(parts, "; "), len(planned), len(got), what)
}

// firstIDs lists the first three IDs, and how many more.
func firstIDs(ids []string) string {
	if len(ids) <= 3 {
		return strings.Join(ids, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(ids[:3], ", "), len(ids)-3)
}

// CheckScores re-derives each arithmetic trial's correct column from its
// recorded extraction and expected answer (answer.AnswerMatches, rule none
// never correct) and refuses the first row that contradicts it, naming
// results.csv, the row and the item: a hand-edited label is not read as
// data. Document items (scored by docqa) are not re-derived.
func CheckScores(path string, trials []results.Trial) error {
	for i := range trials {
		t := &trials[i]
		if t.Skipped() || (t.ScoreRule != "" && t.ScoreRule != docqa.ScoreNumber) {
			continue
		}
		want := t.Rule != answer.RuleNone && answer.AnswerMatches(t.Extracted, t.Expected)
		if want != t.Correct {
			return fmt.Errorf("%s: row %d (item %s): correct is %v, but its extraction (rule %s, answer %q) against the expected %q gives %v: the file was edited (a corrected label goes in an overrides file: run --overrides)",
				path, i+1, t.ItemID, t.Correct, t.Rule, t.Extracted, t.Expected, want)
		}
	}
	return nil
}
