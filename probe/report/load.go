package report

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/fragility/fragility/internal/jsonerr"
	"github.com/fragility/fragility/probe/compare"
	"github.com/fragility/fragility/probe/results"
	"github.com/fragility/fragility/probe/rundir"
	"github.com/fragility/fragility/probe/summary"
)

// FileHTML is the name of the HTML report inside a run directory.
const FileHTML = "report.html"

// Run is what the report reads from a run directory. Everything in it comes
// from the run's files as written by `fragility run`, `fragility report` and
// `fragility compare`; nothing is recomputed.
type Run struct {
	Dir       string
	Manifest  *rundir.Manifest    // manifest.json; nil when the file is absent
	Trials    []results.Trial     // results.csv, in file order
	Summary   *summary.Summary    // summary.json
	Narrative string              // narrative.md (Markdown); "" when absent
	Traces    map[string]*Trace   // traces.jsonl by item ID; nil when the file is absent
	Compare   *compare.Comparison // compare.json; nil when absent
}

// Trace is the part of one traces.jsonl line the report shows: the rendered
// prompt and every generated token with its entropy in bits.
type Trace struct {
	Prompt string
	Tokens []Token
}

// Token is one generated token: its text piece and the entropy (bits, over
// the full vocabulary) of the distribution it was chosen from.
type Token struct {
	Piece       string
	EntropyBits float64
}

// Load reads the run directory dir. results.csv and summary.json must exist
// (`fragility report DIR` writes the summary from results.csv);
// manifest.json, narrative.md, traces.jsonl and compare.json are read when
// present. Errors name the file and what is wrong with it.
func Load(dir string) (*Run, error) {
	if err := rundir.CheckRunDir(dir); err != nil {
		return nil, err
	}
	r := &Run{Dir: dir}
	if _, err := os.Stat(filepath.Join(dir, rundir.FileManifest)); err == nil {
		m, err := rundir.ReadManifest(dir)
		if err != nil {
			return nil, err
		}
		r.Manifest = m
	}
	var err error
	r.Trials, err = rundir.ReadResults(filepath.Join(dir, rundir.FileResults))
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%s: no %s: not a run directory", dir, rundir.FileResults)
	}
	if err != nil {
		return nil, err
	}
	sumPath := filepath.Join(dir, rundir.FileSummary)
	data, err := os.ReadFile(sumPath)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("%s: no %s (fragility report %s computes it from %s)", dir, rundir.FileSummary, dir, rundir.FileResults)
		}
		return nil, err
	}
	r.Summary = new(summary.Summary)
	if err := json.Unmarshal(data, r.Summary); err != nil {
		return nil, fmt.Errorf("%s: %s", sumPath, jsonerr.Text(data, err))
	}
	if data, err := os.ReadFile(filepath.Join(dir, rundir.FileNarrative)); err == nil {
		r.Narrative = string(data)
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	if r.Traces, err = readTraces(filepath.Join(dir, rundir.FileTraces)); err != nil {
		return nil, err
	}
	cmpPath := filepath.Join(dir, rundir.FileCompareJSON)
	if data, err := os.ReadFile(cmpPath); err == nil {
		r.Compare = new(compare.Comparison)
		if err := json.Unmarshal(data, r.Compare); err != nil {
			return nil, fmt.Errorf("%s: %s", cmpPath, jsonerr.Text(data, err))
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	return r, nil
}

// readTraces streams traces.jsonl, keeping only the prompt and the tokens'
// pieces and entropies (prompt token ids and log-probabilities are dropped,
// so a large run does not hold them in memory). A missing file gives nil.
func readTraces(path string) (map[string]*Trace, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	type line struct {
		ItemID string `json:"item_id"`
		Prompt string `json:"prompt"`
		Tokens []struct {
			Piece       string  `json:"piece"`
			EntropyBits float64 `json:"entropy_bits"`
		} `json:"tokens"`
	}
	out := map[string]*Trace{}
	dec := json.NewDecoder(bufio.NewReaderSize(f, 1<<20))
	for n := 1; ; n++ {
		var l line
		if err := dec.Decode(&l); err == io.EOF {
			break
		} else if err != nil {
			return nil, fmt.Errorf("%s: record %d: %w", path, n, err)
		}
		if l.ItemID == "" {
			return nil, fmt.Errorf("%s: record %d: no item_id", path, n)
		}
		t := &Trace{Prompt: l.Prompt, Tokens: make([]Token, len(l.Tokens))}
		for i, tok := range l.Tokens {
			t.Tokens[i] = Token{Piece: tok.Piece, EntropyBits: tok.EntropyBits}
		}
		out[l.ItemID] = t
	}
	return out, nil
}
