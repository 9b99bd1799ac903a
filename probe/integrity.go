package probe

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/fragility/fragility/llm"
	"github.com/fragility/fragility/probe/anatomy"
	"github.com/fragility/fragility/probe/answer"
	"github.com/fragility/fragility/probe/docqa"
	"github.com/fragility/fragility/probe/results"
	"github.com/fragility/fragility/probe/rundir"
	"github.com/fragility/fragility/templates"
)

// PlannedItems returns the IDs of the items the plan of the run directory
// dir holds, in plan order: every model's items under every condition,
// from set.jsonl and manifest.json (a shard's contiguous part of the plan
// for a shard). Errors name the file.
func PlannedItems(dir string, man *rundir.Manifest) ([]string, error) {
	items, _, edited, err := plannedOf(dir, man)
	if err != nil {
		return nil, err
	}
	if edited != nil {
		return nil, edited
	}
	ids := make([]string, len(items))
	for i, it := range items {
		ids[i] = it.ID
	}
	return ids, nil
}

// plannedOf returns the planned items of dir (as PlannedItems) with the
// line in set.jsonl of each instance. When the manifest records a plan
// sha256, the set file and config must give it: edited is the error that
// names set.jsonl when they do not (a changed answer or question), for the
// caller to give after the more precise row checks. A manifest that records
// error rules (a run of a version that always records the plan sha256) but
// no plan sha256 is edited too.
func plannedOf(dir string, man *rundir.Manifest) (items []PlannedItem, lines map[*templates.Instance]int, edited, err error) {
	path := filepath.Join(dir, rundir.FileSet)
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, nil, err
	}
	set, err := templates.ReadSet(bytes.NewReader(data))
	if err != nil {
		return nil, nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	cfg := man.Config
	cfg.Shard = nil
	if len(cfg.Models) != len(man.Models) {
		cfg.Models = make([]string, len(man.Models))
	}
	batches := PlanBatches(cfg, set)
	if man.PlanSHA256 == "" && man.ErrorRules != "" {
		// Every run that records its error rules records its plan sha256
		// too: a manifest without one was edited, and nothing it says about
		// the plan could be checked.
		edited = fmt.Errorf("%s: records no plan sha256, which every run that records its error rules (%s) has: manifest.json was edited after the run",
			filepath.Join(dir, rundir.FileManifest), man.ErrorRules)
	}
	if man.PlanSHA256 != "" {
		modelSHA := make([]string, len(man.Models))
		for i, m := range man.Models {
			modelSHA[i] = m.SHA256
		}
		if sum, _ := planSHA(cfg, batches, data, modelSHA, man.Embedder); sum != man.PlanSHA256 {
			edited = fmt.Errorf("%s: with the manifest's config it gives plan sha256 %s, not the %s the manifest records: set.jsonl or manifest.json was edited after the run",
				path, rundir.ShortSHA(sum), rundir.ShortSHA(man.PlanSHA256))
		}
	}
	if sh := man.Shard; sh != nil && sh.FirstBatch+sh.Batches <= len(batches) {
		batches = batches[sh.FirstBatch : sh.FirstBatch+sh.Batches]
	}
	lines = make(map[*templates.Instance]int, len(set.Instances))
	for i := range set.Instances {
		lines[&set.Instances[i]] = i + 2 // after the header line
	}
	for _, b := range batches {
		items = append(items, b.Items...)
	}
	return items, lines, edited, nil
}

// CheckRecords checks the records of a complete run directory against its
// plan: results.csv (trials) and traces.jsonl (traceIDs, nil to skip) hold
// every planned item once and nothing else, and each row's template,
// variant, instance and expected answer are its planned instance's in
// set.jsonl. The error names the file and the first items missing,
// repeated or not planned, with the counts, or the first row (by line)
// that disagrees with the set. A run that is not complete (a status other
// than "complete") is not checked.
func CheckRecords(dir string, man *rundir.Manifest, trials []results.Trial, traceIDs []string) error {
	if man.Status != "complete" {
		return nil
	}
	if err := headerComplete(dir, man); err != nil {
		return err
	}
	items, lines, edited, err := plannedOf(dir, man)
	if err != nil {
		return err
	}
	planned := make([]string, len(items))
	for i, it := range items {
		planned[i] = it.ID
	}
	ids := make([]string, len(trials))
	for i := range trials {
		ids[i] = trials[i].ItemID
	}
	if err := rundir.SameItems(filepath.Join(dir, rundir.FileResults), "row", planned, ids); err != nil {
		return err
	}
	if err := rowsMatchSet(filepath.Join(dir, rundir.FileResults), items, lines, trials, man.AnswerScore != ""); err != nil {
		return err
	}
	if traceIDs != nil {
		if err := rundir.SameItems(filepath.Join(dir, rundir.FileTraces), "trace", planned, traceIDs); err != nil {
			return err
		}
	}
	return edited
}

// rowsMatchSet refuses the first trial whose template, variant, instance
// index or (for an arithmetic answer) expected answer is not its planned
// instance's, naming results.csv's line and set.jsonl's. With current
// (a run that wrote every column of this version: headerComplete) it
// also refuses a relation, step count or difficulty level that is not the
// instance's, as these group the summary's statistics, and a question
// that is not its text (as results.csv gives it back: rundir.CSVText).
func rowsMatchSet(path string, items []PlannedItem, lines map[*templates.Instance]int, trials []results.Trial, current bool) error {
	byID := make(map[string]*templates.Instance, len(items))
	for _, it := range items {
		byID[it.ID] = it.Inst
	}
	for i := range trials {
		t := &trials[i]
		in := byID[t.ItemID]
		if in == nil {
			continue
		}
		var field, got, want string
		switch {
		case t.TemplateID != in.TemplateID:
			field, got, want = "template", t.TemplateID, in.TemplateID
		case t.Variant != string(in.Variant):
			field, got, want = "variant", t.Variant, string(in.Variant)
		case t.Instance != in.Index:
			field, got, want = "instance", fmt.Sprint(t.Instance), fmt.Sprint(in.Index)
		case !t.Skipped() && (t.ScoreRule == "" || t.ScoreRule == docqa.ScoreNumber) && t.Expected != in.Answer:
			field, got, want = "expected", t.Expected, in.Answer
		case current && t.Level != in.Level:
			field, got, want = "level", t.Level, in.Level
		case current && t.Relation != in.Relation:
			field, got, want = "relation", t.Relation, in.Relation
		case current && t.Steps != in.Steps:
			field, got, want = "steps", fmt.Sprint(t.Steps), fmt.Sprint(in.Steps)
		case current && t.Question != rundir.CSVText(in.Question):
			field, got, want = "question", t.Question, in.Question
		default:
			continue
		}
		return fmt.Errorf("%s: %s (item %s): %s is %s, but the instance %s in %s (line %d) has %s: a file was edited after the run",
			path, rundir.RowRef(path, i), t.ItemID, field, results.Quote(got), in.ID, rundir.FileSet, lines[in], results.Quote(want))
	}
	return nil
}

// CheckScores re-derives each arithmetic trial's correct column from its
// recorded extraction and expected answer (answer.AnswerMatches, rule none
// never correct) and refuses the first row that contradicts it, naming
// results.csv, the row and the item: a hand-edited label is not read as
// data. Document items (scored by docqa) are not re-derived. With
// extractionRules equal to this binary's answer.ExtractionRulesVersion
// (the manifest's extraction_rules) it re-derives an arithmetic item's
// extraction itself from the response and stop reason, as the run did
// (Extract: a response the budget cut is read by answer.Truncated), so
// an edited extracted, rule or stop_reason is refused too, and so is an
// expected_anywhere the response does not give (a document
// item, one with passages, is scored by docqa.ScoreResponse and not
// re-derived); with errorRules equal to
// this binary's anatomy.Version (the manifest's error_rules), it
// re-derives error_kind the same way, with the numbers of each no-op
// clause from the set.jsonl beside path (runClauses); and it refuses recorded measures
// that cannot be (rundir.CheckMeasures). Runs recorded under older rules are
// read as recorded.
func CheckScores(path, extractionRules, errorRules string, trials []results.Trial) error {
	clauses := clausesOf(filepath.Dir(path)) // the clauses' numbers, from set.jsonl beside it
	for i := range trials {
		t := &trials[i]
		if err := rundir.CheckMeasures(t); err != nil {
			return fmt.Errorf("%s: %s (item %s): %w: the file was edited", path, rundir.RowRef(path, i), t.ItemID, err)
		}
		// A document item (one with passages) is scored by
		// docqa.ScoreResponse against every accepted answer, and expected
		// holds only the first: its correct is not re-derived here.
		if t.Skipped() || (t.ScoreRule != "" && t.ScoreRule != docqa.ScoreNumber) || t.Passages != "" {
			continue
		}
		if extractionRules == answer.ExtractionRulesVersion {
			if ex := Extract(&llm.Generation{Text: t.Response, StopReason: t.StopReason}); ex.Value != t.Extracted || ex.Rule != t.Rule {
				return fmt.Errorf("%s: %s (item %s): extracted is %s (rule %s), but the extraction rules %s read %s (rule %s) from its response with stop reason %s: the file was edited",
					path, rundir.RowRef(path, i), t.ItemID, results.Quote(t.Extracted), results.Quote(t.Rule), answer.ExtractionRulesVersion, results.Quote(ex.Value), ex.Rule, results.Quote(t.StopReason))
			}
			if want := answer.ExpectedAnywhere(t.Response, t.Expected); want != t.ExpectedAnywhere {
				return fmt.Errorf("%s: %s (item %s): expected_anywhere is %v, but its response %s the expected answer %s: the file was edited",
					path, rundir.RowRef(path, i), t.ItemID, t.ExpectedAnywhere, map[bool]string{true: "holds", false: "does not hold"}[want], results.Quote(t.Expected))
			}
		}
		want := t.Rule != answer.RuleNone && answer.AnswerMatches(t.Extracted, t.Expected)
		if want != t.Correct {
			return fmt.Errorf("%s: %s (item %s): correct is %v, but its extraction (rule %s, answer %s) against the expected %s gives %v: the file was edited (a corrected label goes in an overrides file: run --overrides)",
				path, rundir.RowRef(path, i), t.ItemID, t.Correct, t.Rule, results.Quote(t.Extracted), results.Quote(t.Expected), want)
		}
		if errorRules == anatomy.Version {
			if k := clauses.errorKind(t); k != t.ErrorKind {
				return fmt.Errorf("%s: %s (item %s): error_kind is %s, but the error-anatomy rules %s give %q from its response and answers: the file was edited",
					path, rundir.RowRef(path, i), t.ItemID, results.Quote(t.ErrorKind), anatomy.Version, k)
			}
		}
	}
	return nil
}

// answerFirstColumns are the columns answer-score/2 added (the answer
// first): a run recorded under AnswerScoreV1 has the others without them.
var answerFirstColumns = []string{"answer_first_logprob", "answer_first_logprob_tokens"}

// headerComplete refuses a results.csv of a run recorded with the current
// columns (its manifest records the answer-scoring pass, the newest of
// them) whose header lacks some of them: a deleted column would otherwise
// read as zeros (a DDC margin of 0 in every row) and be summarized as
// measured. Runs recorded before read the columns they have.
func headerComplete(dir string, man *rundir.Manifest) error {
	if man.AnswerScore == "" {
		return nil
	}
	path := filepath.Join(dir, rundir.FileResults)
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	header, err := csv.NewReader(f).Read()
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	have := make(map[string]bool, len(header))
	for _, h := range header {
		have[strings.TrimPrefix(h, "\ufeff")] = true
	}
	var missing []string
	for _, h := range results.Header() {
		if !have[h] && !(man.AnswerScore == AnswerScoreV1 && slices.Contains(answerFirstColumns, h)) {
			missing = append(missing, h)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("%s: lacks the column(s) %s, which every run that records its answer scoring (%s) writes: results.csv was edited after the run",
			path, strings.Join(missing, ", "), man.AnswerScore)
	}
	return nil
}
