package rundir

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/fragility/fragility/probe/results"
	"github.com/fragility/fragility/templates"
)

// File names inside a run directory.
const (
	FileManifest  = "manifest.json"
	FileResults   = "results.csv"
	FileTraces    = "traces.jsonl"
	FileSummary   = "summary.json"
	FileNarrative = "narrative.md"
	FileSet       = "set.jsonl"
)

// ReadResults reads the results.csv at path (results.ReadCSV). Errors name
// the path once: a missing file ("no such file or directory"), a directory
// in the file's place, a header or row that does not parse (a torn or
// ragged row, results.TornRowError, says what to do, naming the run
// directory).
func ReadResults(path string) ([]results.Trial, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, templates.BarePathError(err))
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.IsDir() {
		return nil, fmt.Errorf("%s: is a directory, not a file", path)
	}
	trials, err := results.ReadCSV(f)
	if torn := (*results.TornRowError)(nil); errors.As(err, &torn) {
		torn.Dir = filepath.Dir(path)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return trials, nil
}

// WriteFileAtomic writes data to path through a temporary file in the same
// directory, fsyncs it and renames it into place, so a reader never sees a
// half-written file.
func WriteFileAtomic(path string, data []byte) error {
	// rename(2) would say "file exists" (or "is a directory").
	if err := CheckNotDirs(path); err != nil {
		return err
	}
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-")
	if err != nil {
		return fmt.Errorf("%s: %w", path, templates.BarePathError(err))
	}
	tmp := f.Name()
	_, werr := f.Write(data)
	perr := f.Chmod(0o644) // CreateTemp makes 0600; results are meant to be shared
	serr := f.Sync()
	cerr := f.Close()
	if err := firstErr(werr, perr, serr, cerr); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("%s: %w", path, templates.BarePathError(err))
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("%s: %w", path, templates.BarePathError(err))
	}
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}

// CheckNotDirs refuses the first of paths that is a directory, as
// WriteFileAtomic would ("PATH: is a directory, not a file"), before
// anything is written: a command that writes several files checks them
// all first, so that one it cannot write leaves the others as they were.
func CheckNotDirs(paths ...string) error {
	for _, p := range paths {
		if st, err := os.Lstat(p); err == nil && st.IsDir() {
			return fmt.Errorf("%s: is a directory, not a file", p)
		}
	}
	return nil
}

// WriteJSONAtomic writes v as indented JSON (with a final newline) to path
// atomically (WriteFileAtomic); errors name the path.
func WriteJSONAtomic(path string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return WriteFileAtomic(path, append(data, '\n'))
}

func firstErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

// CheckWritable creates dir if needed and proves it is writable by creating
// and removing a file, so an unwritable or full directory is reported before
// any model loads.
func CheckWritable(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("output directory %s: %w", dir, err)
	}
	f, err := os.CreateTemp(dir, ".probe-write-")
	if err != nil {
		return fmt.Errorf("output directory %s is not writable: %w", dir, templates.BarePathError(err))
	}
	name := f.Name()
	_, werr := f.Write(make([]byte, 64<<10))
	serr := f.Sync()
	f.Close()
	os.Remove(name)
	if err := firstErr(werr, serr); err != nil {
		return fmt.Errorf("output directory %s: cannot write (disk full?): %w", dir, templates.BarePathError(err))
	}
	return nil
}

// Files a quantization comparison (package compare) writes into the run
// directory.
const (
	FileCompareCSV  = "compare.csv"
	FileCompareMD   = "compare.md"
	FileCompareJSON = "compare.json"
)

// RunFiles names every file a run, a merge, a compare or a report writes in
// a run directory: what --force removes, and only that ("report.html" is
// probe/report's FileHTML).
var RunFiles = []string{FileManifest, FileResults, FileTraces, FileSummary, FileNarrative, FileSet,
	FileCompareCSV, FileCompareMD, FileCompareJSON, "report.html"}
