package templates

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// SetFormat is the value of the "format" field in a set file's header line.
const SetFormat = "fragility-set"

// SetVersion is the version of the set file layout written by WriteJSONL.
const SetVersion = 1

// setHeader is the first line of a set file.
type setHeader struct {
	Format    string         `json:"format"`
	Version   int            `json:"version"`
	Seed      int64          `json:"seed"`
	Options   Options        `json:"options"`
	Count     int            `json:"count"` // number of instance lines that follow
	Templates []TemplateInfo `json:"templates"`
	Excluded  []Exclusion    `json:"excluded"`
	Flagged   []Flag         `json:"flagged"`
	Skipped   []Skip         `json:"skipped,omitempty"` // templates left out, with the reason
}

// WriteJSONL writes the set as JSON Lines: a header line (format, version,
// seed, options, templates, exclusions, flags), then one instance per line.
// The output depends only on the set, so the same templates and options give
// byte-identical files.
func (s *Set) WriteJSONL(w io.Writer) error {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	h := setHeader{SetFormat, SetVersion, s.Seed, s.Options, len(s.Instances), s.Templates, s.Excluded, s.Flagged, s.Skipped}
	if h.Excluded == nil {
		h.Excluded = []Exclusion{}
	}
	if h.Flagged == nil {
		h.Flagged = []Flag{}
	}
	if err := enc.Encode(h); err != nil {
		return fmt.Errorf("writing set header: %w", err)
	}
	for i := range s.Instances {
		if err := enc.Encode(&s.Instances[i]); err != nil {
			return fmt.Errorf("writing instance %s: %w", s.Instances[i].ID, err)
		}
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("writing set: %w", err)
	}
	return nil
}

// ReadSet reads a set written by WriteJSONL. Errors name the line.
func ReadSet(r io.Reader) (*Set, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<20), 1<<28)
	var h setHeader
	s := &Set{}
	line := 0
	ids := map[string]bool{}
	for sc.Scan() {
		line++
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		if line == 1 {
			if err := json.Unmarshal(b, &h); err != nil {
				return nil, fmt.Errorf("set line 1: bad header: %v", err)
			}
			if h.Format != SetFormat {
				return nil, fmt.Errorf("set line 1: not a fragility set (format %q)", h.Format)
			}
			if h.Version != SetVersion {
				return nil, fmt.Errorf("set line 1: unsupported set version %d (this build reads %d)", h.Version, SetVersion)
			}
			s.Seed, s.Options, s.Templates, s.Excluded, s.Flagged, s.Skipped = h.Seed, h.Options, h.Templates, h.Excluded, h.Flagged, h.Skipped
			continue
		}
		var in Instance
		if err := json.Unmarshal(b, &in); err != nil {
			return nil, fmt.Errorf("set line %d: %v", line, err)
		}
		if in.ID == "" || ids[in.ID] {
			return nil, fmt.Errorf("set line %d: missing or repeated instance id %q", line, in.ID)
		}
		ids[in.ID] = true
		s.Instances = append(s.Instances, in)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading set: %w", err)
	}
	if line == 0 {
		return nil, errors.New("empty set file")
	}
	if len(s.Instances) != h.Count {
		return nil, fmt.Errorf("set has %d instances, header says %d (truncated file?)", len(s.Instances), h.Count)
	}
	return s, nil
}

// WriteFile writes the set to path atomically (a temporary file in the same
// directory, synced, then renamed). An existing file is an error unless
// overwrite is true.
func (s *Set) WriteFile(path string, overwrite bool) (err error) {
	if !overwrite {
		if _, err := os.Lstat(path); err == nil {
			return fmt.Errorf("%s exists (use --force to overwrite)", path)
		}
	}
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("writing set %s: %w", path, BarePathError(err))
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if err := s.WriteJSONL(f); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("writing set %s: %w", path, BarePathError(err))
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("writing set %s: %w", path, BarePathError(err))
	}
	// CreateTemp made it 0600; a set is an ordinary file, as a run's are.
	if err := os.Chmod(f.Name(), 0o644); err != nil {
		return fmt.Errorf("writing set %s: %w", path, BarePathError(err))
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return fmt.Errorf("writing set %s: %w", path, BarePathError(err))
	}
	return nil
}

// BarePathError returns the cause of a *fs.PathError or *os.LinkError (such
// as "permission denied"), without the operation and the file name it
// carries: a temporary file's name means nothing to the user, so the caller
// names the file it was writing (see WriteFile). Other errors are returned
// as they are.
func BarePathError(err error) error {
	var pe *fs.PathError
	var le *os.LinkError
	switch {
	case errors.As(err, &pe):
		return pe.Err
	case errors.As(err, &le):
		return le.Err
	}
	return err
}

// Summary is a one-line account of the set: instances per variant, excluded
// draws, not-applicable variants and flagged clauses.
func (s *Set) Summary() string {
	per := map[Variant]int{}
	for _, in := range s.Instances {
		per[in.Variant]++
	}
	var parts []string
	for _, v := range s.Options.Variants {
		parts = append(parts, fmt.Sprintf("%s %d", v, per[v]))
	}
	draws, na := 0, 0
	for _, e := range s.Excluded {
		if e.Draw == 0 {
			na++
		} else {
			draws++
		}
	}
	skipped := ""
	if len(s.Skipped) > 0 {
		skipped = fmt.Sprintf("; %d templates skipped", len(s.Skipped))
	}
	return fmt.Sprintf("%d instances from %d templates (%s); %d rejected draws, %d not applicable, %d flagged no-op clauses%s",
		len(s.Instances), len(s.Templates), strings.Join(parts, ", "), draws, na, len(s.Flagged), skipped)
}
