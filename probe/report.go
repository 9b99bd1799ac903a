package probe

import (
	"fmt"
	"os"
	"path/filepath"
)

// Report recomputes summary.json and narrative.md of a run directory from its
// results.csv and manifest.json, without running a model, and writes both
// atomically. The bootstrap uses the resample count and seed of the run's
// manifest, so the result is the same as the run's own.
func Report(dir string) (*Summary, error) {
	man, err := ReadManifest(dir)
	if err != nil {
		return nil, err
	}
	path := filepath.Join(dir, FileResults)
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	trials, err := ReadResultsCSV(f)
	f.Close()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(trials) == 0 {
		return nil, fmt.Errorf("%s: no trials", path)
	}
	p := DefaultParams(man.Config.Seed)
	if man.Config.BootstrapB > 0 {
		p.BootstrapResamples = man.Config.BootstrapB
	}
	sum, err := Summarize(trials, p)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	if err := writeJSONAtomic(filepath.Join(dir, FileSummary), sum); err != nil {
		return nil, err
	}
	if err := writeAtomic(filepath.Join(dir, FileNarrative), []byte(Narrative(sum))); err != nil {
		return nil, err
	}
	return sum, nil
}
