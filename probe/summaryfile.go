package probe

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/fragility/fragility/probe/results"
	"github.com/fragility/fragility/probe/rundir"
	"github.com/fragility/fragility/probe/summary"
	"github.com/fragility/fragility/templates"
)

// WriteSummary recomputes summary.json of a run directory from its
// results.csv and manifest.json, without running a model, and writes it
// atomically, with the statistics of this version (summary.Summarize): a run
// directory written by an older version is re-rendered with them. The
// bootstrap uses the resample count and seed of the run's manifest and the
// primary variant it records (none in older runs: Holm across the
// variants), so for a run of this version the result is the run's own.
func WriteSummary(dir string) (*summary.Summary, error) {
	sum, err := Recompute(dir)
	if err != nil {
		return nil, err
	}
	if err := rundir.WriteJSONAtomic(filepath.Join(dir, rundir.FileSummary), sum); err != nil {
		return nil, err
	}
	return sum, nil
}

// Recompute returns the Summary of a run directory from its results.csv and
// manifest.json as WriteSummary does, without writing anything. Errors name the
// directory or file: no manifest, an unreadable or empty results.csv, files
// that were edited or lost lines (checkRunFiles), or
// statistics that cannot be computed (e.g. a recorded primary variant that
// is not in the results).
func Recompute(dir string) (*summary.Summary, error) {
	man, trials, err := ReadRun(dir)
	if err != nil {
		return nil, err
	}
	path := filepath.Join(dir, rundir.FileResults)
	if len(trials) == 0 {
		if man.Status == "failed" && man.FailReason != "" {
			return nil, fmt.Errorf("%s: no trials: the run failed before its first (%s records: %s)", path, rundir.FileManifest, man.FailReason)
		}
		return nil, fmt.Errorf("%s: no trials", path)
	}
	if err := checkRunFiles(dir, man, trials); err != nil {
		return nil, err
	}
	var counts *summary.OverrideCounts
	if o := man.Config.Overrides; o != "" {
		ovs, sum, err := ReadOverrides(o)
		if err != nil {
			return nil, fmt.Errorf("%s: the run's %w", dir, err)
		}
		if want := man.Config.OverridesSHA256; want != "" && sum != want {
			return nil, fmt.Errorf("%s: overrides %s changed since the run (sha256 %s, recorded %s)", dir, o, sum, want)
		}
		n, x := 0, 0
		if trials, n, x, err = ApplyOverrides(trials, ovs, o); err != nil {
			return nil, err
		}
		counts = &summary.OverrideCounts{File: o, SHA256: sum, Overridden: n, Excluded: x}
	}
	p := summary.DefaultParams(man.Config.Seed)
	if b := man.Config.BootstrapB; b < 0 || b > summary.MaxBootstrapResamples {
		return nil, fmt.Errorf("%s: bootstrap_resamples %d is outside 1 to %d", filepath.Join(dir, rundir.FileManifest), b, summary.MaxBootstrapResamples)
	} else if b > 0 {
		p.BootstrapResamples = b
	}
	p.Primary = man.Config.Primary
	p.Temperature = man.Config.Temperature
	runOrder(trials, man.Config)
	sum, err := summary.Summarize(trials, p)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	sum.Overrides = counts
	if man.Status != "complete" {
		sum.RunStatus = man.Status
	}
	sum.Split, sum.ProtocolSHA256 = man.Config.Split, man.Config.ProtocolSHA256
	for _, sk := range man.Skipped {
		sum.TemplatesLeftOut = append(sum.TemplatesLeftOut, summary.LeftOut{Source: sk.Source, Template: sk.Template, Reason: sk.Reason})
	}
	if man.ExtractionRules != "" {
		// The rules the run's rows were scored with, not this binary's.
		sum.Params.ExtractionRules = man.ExtractionRules
	}
	if man.ErrorRules != "" {
		// Likewise the error anatomy's: older runs are read as recorded.
		for i := range sum.Models {
			for j := range sum.Models[i].Variants {
				if e := sum.Models[i].Variants[j].Errors; e != nil {
					e.Rules = man.ErrorRules
				}
			}
		}
	}
	if sum.Calculator != nil {
		sum.Calculator.Protocol = CalcProtocolVersion
		if man.Calculator != nil {
			sum.Calculator.CallLimit = man.Calculator.Calls
		}
	}
	return sum, nil
}

// checkRunFiles refuses a run directory whose files were edited or lost
// lines: a results.csv row whose correct column contradicts its recorded
// extraction (CheckScores); a row whose variant or model name is not its
// item's (checkRowsKnown); a row whose response is not the text its
// trace's tokens give (CheckResponses); for a complete run, a missing
// set.jsonl or traces.jsonl when the other is there, and a planned item
// without its row or its trace, a repeated item and one not in the plan
// (CheckRecords). A directory with neither file (results.csv and
// manifest.json put together by hand) is not checked against a plan.
func checkRunFiles(dir string, man *rundir.Manifest, trials []results.Trial) error {
	if err := CheckScores(filepath.Join(dir, rundir.FileResults), man.ExtractionRules, man.ErrorRules, trials); err != nil {
		return err
	}
	_, setErr := os.Stat(filepath.Join(dir, rundir.FileSet))
	_, trErr := os.Stat(filepath.Join(dir, rundir.FileTraces))
	switch {
	case setErr != nil && trErr != nil:
		// results.csv and manifest.json alone (a directory put together
		// by hand): nothing to check the rows against.
		return nil
	case setErr != nil || trErr != nil:
		missing := rundir.FileSet
		if trErr != nil {
			missing = rundir.FileTraces
		}
		if man.Status == "complete" {
			return fmt.Errorf("%s: missing: a complete run has its set.jsonl and traces.jsonl, and the rows cannot be checked against the plan without it", filepath.Join(dir, missing))
		}
		return nil
	}
	if err := checkSetRows(dir, man, trials); err != nil {
		return err
	}
	traces, err := rundir.ReadTraces(dir)
	if err != nil {
		return err
	}
	if err := CheckResponses(filepath.Join(dir, rundir.FileResults), man, trials, traces); err != nil {
		return err
	}
	traceIDs := make([]string, len(traces))
	for i := range traces {
		traceIDs[i] = traces[i].ItemID
	}
	return CheckRecords(dir, man, trials, traceIDs)
}

// checkSetRows reads set.jsonl of dir and checks the rows of results.csv
// against it and the manifest (checkRowsKnown); errors name the file.
func checkSetRows(dir string, man *rundir.Manifest, trials []results.Trial) error {
	path := filepath.Join(dir, rundir.FileSet)
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	set, err := templates.ReadSet(f)
	f.Close()
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return checkRowsKnown(dir, man, set, trials)
}

// ReadRun reads the manifest and results.csv of the run directory dir.
// Errors name the directory or the file.
func ReadRun(dir string) (*rundir.Manifest, []results.Trial, error) {
	man, err := rundir.ReadManifest(dir)
	if err != nil {
		return nil, nil, err
	}
	trials, err := rundir.ReadResults(filepath.Join(dir, rundir.FileResults))
	if err != nil {
		return nil, nil, err
	}
	return man, trials, nil
}

// runOrder sorts trials in place, stably, by their model's place in the
// run's Config (Models, then Conditions), so that the summary lists the
// models in the order the run named them whatever the order of
// results.csv's rows (summary.Summarize orders the rest). A model or
// condition the Config does not name comes after the others, by path or
// name.
func runOrder(trials []results.Trial, cfg rundir.Config) {
	place := func(names []string, name string) int {
		if i := slices.Index(names, name); i >= 0 {
			return i
		}
		return len(names)
	}
	slices.SortStableFunc(trials, func(a, b results.Trial) int {
		ca, cb := results.ConditionName(a.Condition), results.ConditionName(b.Condition)
		return cmp.Or(cmp.Compare(place(cfg.Models, a.ModelPath), place(cfg.Models, b.ModelPath)),
			cmp.Compare(a.ModelPath, b.ModelPath), cmp.Compare(a.ModelName, b.ModelName),
			cmp.Compare(place(cfg.Conditions, ca), place(cfg.Conditions, cb)), cmp.Compare(ca, cb))
	})
}
