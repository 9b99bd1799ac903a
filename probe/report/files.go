package report

import (
	"path/filepath"

	"github.com/fragility/fragility/probe"
	"github.com/fragility/fragility/probe/compare"
	"github.com/fragility/fragility/probe/rundir"
	"github.com/fragility/fragility/probe/summary"
)

// WriteNarrative writes narrative.md of the run directory dir from s
// (Narrative), atomically. A Summary without statistics (s.Params unset:
// what probe.Run returns for a shard that cannot be summarised alone)
// writes nothing.
func WriteNarrative(dir string, s *summary.Summary) error {
	if s == nil || s.Params.BootstrapResamples == 0 {
		return nil
	}
	return rundir.WriteFileAtomic(filepath.Join(dir, rundir.FileNarrative), []byte(Narrative(s)))
}

// Rewrite recomputes summary.json of the run directory dir from its
// results.csv and manifest.json (probe.WriteSummary) and writes narrative.md
// from it: what `fragility report DIR` does. Errors name the directory or
// file; a directory in the place of either file is refused before either
// is written.
func Rewrite(dir string) (*summary.Summary, error) {
	if err := rundir.CheckNotDirs(filepath.Join(dir, rundir.FileSummary), filepath.Join(dir, rundir.FileNarrative)); err != nil {
		return nil, err
	}
	s, err := probe.WriteSummary(dir)
	if err != nil {
		return nil, err
	}
	if err := WriteNarrative(dir, s); err != nil {
		return nil, err
	}
	return s, nil
}

// WriteCompareNarrative writes compare.md of the run directory dir from c
// (CompareNarrative), atomically.
func WriteCompareNarrative(dir string, c *compare.Comparison) error {
	return rundir.WriteFileAtomic(filepath.Join(dir, rundir.FileCompareMD), []byte(CompareNarrative(c)))
}
