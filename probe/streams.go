package probe

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// streams appends finished trials to results.csv and traces.jsonl, with an
// fsync after every batch, so an interrupted run keeps all it finished.
type streams struct {
	res, tr *os.File
	trials  []Trial
	done    map[string]bool
}

func (s *streams) has(id string) bool { return s.done[id] }

// openStreams opens the result streams of dir. Without resume they are
// created empty (results.csv with its header). With resume the finished
// trials are read back: only items present in both files, and only whole
// batches (a batch cut short by an interruption is run again, as llama.cpp is
// not batch-invariant); both files are rewritten atomically with those and
// then appended to.
func openStreams(dir string, resume bool) (*streams, error) {
	resPath, trPath := filepath.Join(dir, FileResults), filepath.Join(dir, FileTraces)
	s := &streams{done: map[string]bool{}}
	if resume {
		trials, traces, err := readFinished(resPath, trPath)
		if err != nil {
			return nil, err
		}
		var rb bytes.Buffer
		if err := WriteResultsCSV(&rb, trials); err != nil {
			return nil, err
		}
		if err := writeAtomic(resPath, rb.Bytes()); err != nil {
			return nil, err
		}
		var tb bytes.Buffer
		for _, t := range traces {
			line, _ := json.Marshal(t)
			tb.Write(append(line, '\n'))
		}
		if err := writeAtomic(trPath, tb.Bytes()); err != nil {
			return nil, err
		}
		s.trials = trials
		for _, t := range trials {
			s.done[t.ItemID] = true
		}
	} else {
		var rb bytes.Buffer
		if err := WriteResultsCSV(&rb, nil); err != nil {
			return nil, err
		}
		if err := writeAtomic(resPath, rb.Bytes()); err != nil {
			return nil, err
		}
		if err := writeAtomic(trPath, nil); err != nil {
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

// append writes one batch of trials and their traces and fsyncs both files.
func (s *streams) append(trials []Trial, traces []Trace) error {
	var tb bytes.Buffer
	for _, t := range traces {
		line, err := json.Marshal(t)
		if err != nil {
			return err
		}
		tb.Write(append(line, '\n'))
	}
	if _, err := s.tr.Write(tb.Bytes()); err != nil {
		return fmt.Errorf("%s: %w", s.tr.Name(), err)
	}
	if err := s.tr.Sync(); err != nil {
		return fmt.Errorf("%s: %w", s.tr.Name(), err)
	}
	var rb bytes.Buffer
	w := csv.NewWriter(&rb)
	for i := range trials {
		if err := w.Write(trials[i].csvRecord()); err != nil {
			return err
		}
	}
	w.Flush()
	if _, err := s.res.Write(rb.Bytes()); err != nil {
		return fmt.Errorf("%s: %w", s.res.Name(), err)
	}
	if err := s.res.Sync(); err != nil {
		return fmt.Errorf("%s: %w", s.res.Name(), err)
	}
	for _, t := range trials {
		s.done[t.ItemID] = true
		s.trials = append(s.trials, t)
	}
	return nil
}

func (s *streams) close() {
	if s.res != nil {
		s.res.Close()
	}
	if s.tr != nil {
		s.tr.Close()
	}
}

// readFinished reads what an interrupted run left: complete CSV records and
// complete trace lines, keeping items present in both and belonging to a
// complete batch, in results.csv order.
func readFinished(resPath, trPath string) ([]Trial, []Trace, error) {
	data, err := os.ReadFile(resPath)
	if err != nil {
		return nil, nil, fmt.Errorf("cannot resume: %w", err)
	}
	trials, err := readCSVPrefix(data)
	if err != nil {
		return nil, nil, fmt.Errorf("cannot resume: %s: %w", resPath, err)
	}
	tdata, err := os.ReadFile(trPath)
	if err != nil {
		return nil, nil, fmt.Errorf("cannot resume: %w", err)
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
			return nil, nil, fmt.Errorf("cannot resume: %s:%d: %w", trPath, i+1, err)
		}
		traceOf[t.ItemID] = t
	}
	// Whole batches only: count the members of each batch (keyed by its
	// first item) that made it into both files.
	var keep []Trial
	var traces []Trace
	for i := 0; i < len(trials); {
		tr, ok := traceOf[trials[i].ItemID]
		size := max(tr.BatchSize, 1)
		if !ok || i+size > len(trials) {
			break
		}
		whole := true
		for j := i; j < i+size; j++ {
			if _, ok := traceOf[trials[j].ItemID]; !ok {
				whole = false
			}
		}
		if !whole {
			break
		}
		for j := i; j < i+size; j++ {
			keep = append(keep, trials[j])
			traces = append(traces, traceOf[trials[j].ItemID])
		}
		i += size
	}
	return keep, traces, nil
}

// readCSVPrefix parses results.csv, keeping every complete record before a
// record cut short by an interruption.
func readCSVPrefix(data []byte) ([]Trial, error) {
	r := csv.NewReader(bytes.NewReader(data))
	header, err := r.Read()
	if err != nil {
		return nil, fmt.Errorf("no header: %w", err)
	}
	if strings.Join(header, ",") != strings.Join(csvHeader(), ",") {
		return nil, fmt.Errorf("header does not match this version's columns")
	}
	var out []Trial
	for {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			break // a cut-off last record
		}
		t, err := trialFromRecord(rec)
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
