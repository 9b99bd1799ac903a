package results

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strconv"
	"strings"
)

// trialColumns lists, in field order, the json tag and field index of every
// exported field of Trial; it is the header of results.csv.
var trialColumns = func() []struct {
	name  string
	index int
} {
	var cols []struct {
		name  string
		index int
	}
	rt := reflect.TypeFor[Trial]()
	for i := range rt.NumField() {
		f := rt.Field(i)
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" || name == "-" {
			panic("probe: Trial field " + f.Name + " has no json tag") // caught by every test
		}
		switch f.Type.Kind() {
		case reflect.String, reflect.Int, reflect.Int64, reflect.Bool, reflect.Float64:
		default:
			panic("probe: Trial field " + f.Name + " has a type results.csv cannot hold")
		}
		cols = append(cols, struct {
			name  string
			index int
		}{name, i})
	}
	return cols
}()

// csvHeader returns the column names of results.csv: the json tags of
// Trial's fields, in field order.
func Header() []string {
	h := make([]string, len(trialColumns))
	for i, c := range trialColumns {
		h[i] = c.name
	}
	return h
}

// csvRecord returns t as one results.csv record, in csvHeader order. Floats
// are in shortest round-trip form (strconv 'g', -1), booleans "true"/"false".
func (t *Trial) Record() []string {
	v := reflect.ValueOf(t).Elem()
	rec := make([]string, len(trialColumns))
	for i, c := range trialColumns {
		f := v.Field(c.index)
		switch f.Kind() {
		case reflect.String:
			rec[i] = f.String()
		case reflect.Int, reflect.Int64:
			rec[i] = strconv.FormatInt(f.Int(), 10)
		case reflect.Bool:
			rec[i] = strconv.FormatBool(f.Bool())
		case reflect.Float64:
			rec[i] = strconv.FormatFloat(f.Float(), 'g', -1, 64)
		}
	}
	return rec
}

// trialFromRecord parses one results.csv record in csvHeader order. The
// error names the column.
func FromRecord(rec []string) (Trial, error) {
	if len(rec) != len(trialColumns) {
		return Trial{}, fmt.Errorf("%d fields, want %d", len(rec), len(trialColumns))
	}
	return trialFromColumns(rec, identityColumns())
}

// identityColumns maps record field i to trialColumns[i].
func identityColumns() []int {
	cols := make([]int, len(trialColumns))
	for i := range cols {
		cols[i] = i
	}
	return cols
}

// trialFromColumns parses one record whose field i holds the column
// trialColumns[cols[i]]; columns not named in cols keep their zero value.
// The error names the column.
func trialFromColumns(rec []string, cols []int) (Trial, error) {
	var t Trial
	v := reflect.ValueOf(&t).Elem()
	for i, ci := range cols {
		c := trialColumns[ci]
		f := v.Field(c.index)
		s := rec[i]
		switch f.Kind() {
		case reflect.String:
			f.SetString(s)
		case reflect.Int, reflect.Int64:
			n, err := strconv.ParseInt(s, 10, f.Type().Bits())
			if err != nil {
				return t, fmt.Errorf("column %s: %s", c.name, badValue(s, "a whole number", err))
			}
			f.SetInt(n)
		case reflect.Bool:
			b, err := strconv.ParseBool(s)
			if err != nil {
				return t, fmt.Errorf("column %s: %s", c.name, badValue(s, "true or false", err))
			}
			f.SetBool(b)
		case reflect.Float64:
			x, err := strconv.ParseFloat(s, 64)
			if err != nil {
				return t, fmt.Errorf("column %s: %s", c.name, badValue(s, "a number", err))
			}
			f.SetFloat(x)
		}
	}
	return t, nil
}

// badValue words a field that did not parse as what a column holds (want:
// "a number", "a whole number", "true or false") without Go's parser names:
// the value quoted, and whether it is no such value or one out of range.
func badValue(s, want string, err error) string {
	if errors.Is(err, strconv.ErrRange) {
		return fmt.Sprintf("%q is out of range", s)
	}
	return fmt.Sprintf("%q is not %s", s, want)
}

// headerColumns maps a results.csv header to indices of trialColumns. The
// header may lack columns that later versions added (they read as zero
// values: an older run directory can be re-rendered), in any order, but an
// unknown or repeated column is an error.
func headerColumns(header []string) ([]int, error) {
	byName := make(map[string]int, len(trialColumns))
	for i, c := range trialColumns {
		byName[c.name] = i
	}
	cols := make([]int, len(header))
	seen := make(map[string]bool, len(header))
	for i, h := range header {
		ci, ok := byName[h]
		if !ok {
			return nil, fmt.Errorf("column %d is %q, which this version does not know (file from another version?)", i+1, h)
		}
		if seen[h] {
			return nil, fmt.Errorf("column %q appears twice", h)
		}
		seen[h] = true
		cols[i] = ci
	}
	return cols, nil
}

// WriteCSV writes trials as results.csv: a header row of the json tags
// of Trial's fields in field order, then one row per trial. Floats are written
// in shortest round-trip form (strconv.FormatFloat(f, 'g', -1, 64), so NaN is
// "NaN"), integers in decimal, booleans as "true"/"false". With no trials only
// the header is written. It returns the first write error.
func WriteCSV(w io.Writer, trials []Trial) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(Header()); err != nil {
		return err
	}
	for i := range trials {
		if err := cw.Write(trials[i].Record()); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// ReadCSV reads a results.csv written by WriteCSV and returns
// its trials in file order; writing a current-version file again gives the
// same bytes. Columns are matched by name: a file from an older version that
// lacks columns added since reads them as zero values, but a column this
// version does not know is refused rather than half read. Errors name the line
// of the file (lines count from 1 and include newlines inside quoted fields)
// and the column, not the file (the caller names it). A UTF-8 byte-order
// mark before the header is ignored.
//
// encoding/csv reads "\r\n" inside a quoted field back as "\n"; no other
// byte of a text field changes.
func ReadCSV(r io.Reader) ([]Trial, error) {
	cr := csv.NewReader(r)
	cr.ReuseRecord = true
	header, err := cr.Read()
	if err == io.EOF {
		return nil, errors.New("empty file, no header")
	}
	if err != nil {
		return nil, err
	}
	if len(header) > 0 {
		header[0] = strings.TrimPrefix(header[0], "\ufeff")
	}
	cols, err := headerColumns(header)
	if err != nil {
		return nil, fmt.Errorf("line 1: %w", err)
	}
	var trials []Trial
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			return trials, nil
		}
		if err != nil {
			return nil, err // *csv.ParseError names the line
		}
		line, _ := cr.FieldPos(0)
		t, err := trialFromColumns(rec, cols)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", line, err)
		}
		trials = append(trials, t)
	}
}
