package rundir

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/fragility/fragility/internal/jsonerr"
	"github.com/fragility/fragility/probe/results"
	"github.com/fragility/fragility/templates"
)

// Streams appends finished trials to results.csv and traces.jsonl, with an
// fsync after every batch, so an interrupted run keeps all it finished.
//
// A batch cut short by an interruption leaves its finished items at the end
// of both files. A resumed run holds them (held): it decodes that batch
// whole again, as llama.cpp is not batch-invariant, and when the batch is
// done it cuts the files back to where the held items start (cut) and writes
// the batch in order, the held items as they were recorded and the others
// as decoded now. The files are then what an uninterrupted run writes.
type Streams struct {
	res, tr *os.File
	// Trials are the trials finished, in results.csv order: those read
	// back on a resume (held items not included) and those appended since.
	Trials []results.Trial
	done   map[string]bool
	held   map[string]HeldItem
	cut    [2]int64 // sizes of results.csv and traces.jsonl before the held items
}

// HeldItem is a finished item of a batch cut short by an interruption.
type HeldItem struct {
	Trial results.Trial
	Trace Trace
}

// Has reports whether the item id is finished (written, not held).
func (s *Streams) Has(id string) bool { return s.done[id] }

// Held returns the recorded result of a held item, and whether id is one.
func (s *Streams) Held(id string) (HeldItem, bool) {
	h, ok := s.held[id]
	return h, ok
}

// OpenStreams opens the result streams of dir. Without resume they are
// created empty (results.csv with its header). With resume the finished
// trials are read back: only items present in both files, whole batches as
// done, and the finished items of a batch cut short as held (see Streams);
// both files are rewritten atomically with those and then appended to.
func OpenStreams(dir string, resume bool) (*Streams, error) {
	resPath, trPath := filepath.Join(dir, FileResults), filepath.Join(dir, FileTraces)
	s := &Streams{done: map[string]bool{}, held: map[string]HeldItem{}}
	if resume && !streamsStarted(resPath, trPath) {
		resume = false // killed before its first batch was written: start them afresh
	}
	if resume {
		trials, traces, nHeld, err := readFinished(resPath, trPath)
		if err != nil {
			return nil, err
		}
		nDone := len(trials) - nHeld
		var rb bytes.Buffer
		if err := results.WriteCSV(&rb, trials[:nDone]); err != nil {
			return nil, err
		}
		s.cut[0] = int64(rb.Len())
		if err := writeCSVRecords(&rb, trials[nDone:]); err != nil {
			return nil, err
		}
		if err := WriteFileAtomic(resPath, rb.Bytes()); err != nil {
			return nil, err
		}
		var tb bytes.Buffer
		for i, t := range traces {
			if i == nDone {
				s.cut[1] = int64(tb.Len())
			}
			line, _ := json.Marshal(t)
			tb.Write(append(line, '\n'))
		}
		if nHeld == 0 {
			s.cut[1] = int64(tb.Len())
		}
		if err := WriteFileAtomic(trPath, tb.Bytes()); err != nil {
			return nil, err
		}
		s.Trials = trials[:nDone]
		for _, t := range s.Trials {
			s.done[t.ItemID] = true
		}
		for i := nDone; i < len(trials); i++ {
			s.held[trials[i].ItemID] = HeldItem{Trial: trials[i], Trace: traces[i]}
		}
	} else {
		var rb bytes.Buffer
		if err := results.WriteCSV(&rb, nil); err != nil {
			return nil, err
		}
		if err := WriteFileAtomic(resPath, rb.Bytes()); err != nil {
			return nil, err
		}
		if err := WriteFileAtomic(trPath, nil); err != nil {
			return nil, err
		}
	}
	var err error
	if s.res, err = os.OpenFile(resPath, os.O_WRONLY|os.O_APPEND, 0); err != nil {
		return nil, err
	}
	if s.tr, err = os.OpenFile(trPath, os.O_WRONLY|os.O_APPEND, 0); err != nil {
		s.res.Close()
		return nil, err
	}
	return s, nil
}

// streamsStarted reports whether an earlier process of the run appended
// anything to its streams: traces.jsonl not empty or results.csv holding
// more than its header (a missing file holds nothing).
func streamsStarted(resPath, trPath string) bool {
	if fi, err := os.Stat(trPath); err == nil && fi.Size() > 0 {
		return true
	}
	data, err := os.ReadFile(resPath)
	return err == nil && bytes.Count(data, []byte("\n")) > 1
}

// Append writes one batch of trials and their traces and fsyncs both files.
func (s *Streams) Append(trials []results.Trial, traces []Trace) error {
	var tb bytes.Buffer
	for _, t := range traces {
		line, err := json.Marshal(t)
		if err != nil {
			return err
		}
		tb.Write(append(line, '\n'))
	}
	if err := writeSynced(s.tr, tb.Bytes(), "traces"); err != nil {
		return fmt.Errorf("%s: %w", s.tr.Name(), templates.BarePathError(err))
	}
	var rb bytes.Buffer
	if err := writeCSVRecords(&rb, trials); err != nil {
		return err
	}
	if err := writeSynced(s.res, rb.Bytes(), "results"); err != nil {
		return fmt.Errorf("%s: %w", s.res.Name(), templates.BarePathError(err))
	}
	for _, t := range trials {
		s.done[t.ItemID] = true
		s.Trials = append(s.Trials, t)
	}
	return nil
}

// writeCSVRecords writes the results.csv records of trials, without a header.
func writeCSVRecords(w io.Writer, trials []results.Trial) error {
	cw := csv.NewWriter(w)
	for i := range trials {
		if err := cw.Write(trials[i].Record()); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// CompleteHeld writes a batch that held items (see Streams): it cuts both
// files back to where the held items start and appends the whole batch in
// order. trials and traces are the batch's items in order, the held ones
// included.
func (s *Streams) CompleteHeld(trials []results.Trial, traces []Trace) error {
	if err := s.res.Truncate(s.cut[0]); err != nil {
		return fmt.Errorf("%s: %w", s.res.Name(), templates.BarePathError(err))
	}
	if err := s.tr.Truncate(s.cut[1]); err != nil {
		return fmt.Errorf("%s: %w", s.tr.Name(), templates.BarePathError(err))
	}
	for _, t := range trials {
		delete(s.held, t.ItemID)
	}
	return s.Append(trials, traces)
}

// Close closes both files.
func (s *Streams) Close() {
	if s.res != nil {
		s.res.Close()
	}
	if s.tr != nil {
		s.tr.Close()
	}
}

// readFinished reads what an interrupted run left: complete CSV records and
// complete trace lines, keeping items present in both, in results.csv order.
// Whole batches come first; the last nHeld trials are the finished items of
// a batch cut short by the interruption (only the last batch written can be).
func readFinished(resPath, trPath string) (trials []results.Trial, traces []Trace, nHeld int, err error) {
	data, err := os.ReadFile(resPath)
	if err != nil {
		return nil, nil, 0, fmt.Errorf("cannot resume: %w", err)
	}
	all, err := readCSVPrefix(data)
	if err != nil {
		return nil, nil, 0, fmt.Errorf("cannot resume: %s: %w", resPath, err)
	}
	tdata, err := os.ReadFile(trPath)
	if err != nil {
		return nil, nil, 0, fmt.Errorf("cannot resume: %w", err)
	}
	traceOf := map[string]Trace{}
	lines := strings.Split(string(tdata), "\n")
	for i, line := range lines {
		if strings.TrimSpace(line) == "" {
			continue
		}
		var t Trace
		if err := json.Unmarshal([]byte(line), &t); err != nil {
			if i == len(lines)-1 { // a cut-off last line
				break
			}
			return nil, nil, 0, fmt.Errorf("cannot resume: %s:%d: %s", trPath, i+1, jsonerr.Text([]byte(line), err))
		}
		traceOf[t.ItemID] = t
	}
	// Whole batches: count the members of each batch (keyed by its first
	// item) that made it into both files. What follows the last whole batch
	// in both files is the cut-short batch's finished items.
	for i := 0; i < len(all); {
		tr, ok := traceOf[all[i].ItemID]
		if !ok {
			break
		}
		size := max(tr.BatchSize, 1)
		n := 0
		for j := i; j < min(i+size, len(all)); j++ {
			u, ok := traceOf[all[j].ItemID]
			if !ok || max(u.BatchSize, 1) != size || u.SkipReason != "" && size > 1 {
				break
			}
			n++
		}
		for j := i; j < i+n; j++ {
			trials = append(trials, all[j])
			traces = append(traces, traceOf[all[j].ItemID])
		}
		if n < size {
			nHeld = n
			break
		}
		i += size
	}
	return trials, traces, nHeld, nil
}

// readCSVPrefix parses results.csv, keeping every complete record before a
// record cut short by an interruption.
func readCSVPrefix(data []byte) ([]results.Trial, error) {
	r := csv.NewReader(bytes.NewReader(data))
	header, err := r.Read()
	if err != nil {
		return nil, fmt.Errorf("no header: %w", err)
	}
	if strings.Join(header, ",") != strings.Join(results.Header(), ",") {
		return nil, fmt.Errorf("header does not match this version's columns")
	}
	var out []results.Trial
	for {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			break // a cut-off last record
		}
		t, err := results.FromRecord(rec)
		if err != nil {
			break
		}
		out = append(out, t)
	}
	// A record is complete only if the file goes on after it with a newline.
	if len(out) > 0 && !bytes.HasSuffix(data, []byte("\n")) {
		out = out[:len(out)-1]
	}
	return out, nil
}
