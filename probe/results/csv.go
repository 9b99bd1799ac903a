package results

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
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
// the value quoted (Quote), and whether it is no such value or one out of
// range.
func badValue(s, want string, err error) string {
	if errors.Is(err, strconv.ErrRange) {
		return fmt.Sprintf("%s is out of range", Quote(s))
	}
	return fmt.Sprintf("%s is not %s", Quote(s), want)
}

// QuoteLimit is the most characters, between its quotes and escapes
// included, of a value read from a file that an error message quotes
// (Quote).
const QuoteLimit = 60

// Quote returns s as a Go-quoted string (strconv.Quote: bytes that are not
// UTF-8 and control characters as escapes), cut after the longest prefix
// whose quoted text is at most QuoteLimit characters, with "…" after the
// closing quote when s is longer: a field of a damaged file (a line of
// random bytes) is named without flooding the message.
func Quote(s string) string {
	q := strconv.Quote(s)
	if utf8.RuneCountInString(q)-2 <= QuoteLimit {
		return q
	}
	cut, width := 0, 0
	for cut < len(s) {
		_, size := utf8.DecodeRuneInString(s[cut:]) // an invalid byte is one step, quoted as \xNN
		w := utf8.RuneCountInString(strconv.Quote(s[cut:cut+size])) - 2
		if width+w > QuoteLimit {
			break
		}
		cut += size
		width += w
	}
	return strconv.Quote(s[:cut]) + "…"
}

// requiredColumns are the columns of the first results.csv format. Every
// version since writes them, so a file that lacks one was edited: it is
// refused rather than read with the column's zero values (a missing
// correct column would read as every answer wrong).
var requiredColumns = []string{"item_id", "model_path", "model_name", "model_family", "quantization",
	"template", "relation", "steps", "variant", "instance", "seed", "question", "expected", "response",
	"extracted", "correct", "rule", "expected_anywhere", "tokens", "stop_reason", "skip_reason", "prompt_tokens",
	"entropy_mean_bits", "entropy_p95_bits", "branching_median", "answer_entropy_mean_bits", "answer_entropy_p95_bits",
	"answer_branching_median", "ddc_top", "ddc_runner_up", "ddc_margin", "seconds"}

// headerColumns maps a results.csv header to indices of trialColumns. The
// header may lack columns that later versions added (they read as zero
// values: an older run directory can be re-rendered), in any order, but an
// unknown or repeated column is an error, named with line 1. Its columns
// are not checked against requiredColumns (missingColumns).
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
			return nil, fmt.Errorf("column %d is %s, which this version does not know (file from another version?)", i+1, Quote(h))
		}
		if seen[h] {
			return nil, fmt.Errorf("column %s appears twice", Quote(h))
		}
		seen[h] = true
		cols[i] = ci
	}
	return cols, nil
}

// missingColumns refuses a header (known columns only, headerColumns) that
// lacks one of requiredColumns, naming those it lacks.
func missingColumns(header []string) error {
	var missing []string
	for _, c := range requiredColumns {
		if !slices.Contains(header, c) {
			missing = append(missing, c)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	return fmt.Errorf("lacks the column(s) %s, which every results.csv has: the file was edited", strings.Join(missing, ", "))
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
// version does not know is refused rather than half read, and so is a file
// without one of the columns every version writes (requiredColumns; the
// error names them, not a line). Errors name the line
// of the file (lines count from 1 and include newlines inside quoted fields)
// and the column, not the file (the caller names it); a row that is not a
// whole record (a torn write, an edited line) is a *TornRowError. A UTF-8
// byte-order mark before the header is ignored.
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
	width := len(header) // header's array is reused by the next Read
	cols, err := headerColumns(header)
	if err != nil {
		return nil, fmt.Errorf("line 1: %w", err)
	}
	if err := missingColumns(header); err != nil {
		return nil, err
	}
	var trials []Trial
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			return trials, nil
		}
		var pe *csv.ParseError
		if errors.As(err, &pe) && (errors.Is(err, csv.ErrFieldCount) || errors.Is(err, csv.ErrQuote) || errors.Is(err, csv.ErrBareQuote)) {
			return nil, &TornRowError{Line: pe.StartLine, Fields: len(rec), Want: width, Quote: !errors.Is(err, csv.ErrFieldCount)}
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

// TornRowError is a results.csv row that is not a whole record: it has
// another number of fields than the header, or a quoted field that does
// not close (or a stray quote), as a write cut short or an edit leaves.
type TornRowError struct {
	Line   int  // the row's first line in the file (from 1)
	Fields int  // fields the row has (Quote false)
	Want   int  // fields the header has
	Quote  bool // a quote is out of place, not the number of fields
	// Dir is the run directory, named in the advice; "" says "RUN_DIR".
	Dir string
}

func (e *TornRowError) Error() string {
	dir := e.Dir
	if dir == "" {
		dir = "RUN_DIR"
	}
	return fmt.Sprintf("%s: a write was cut short or the file was edited; restore the file from a copy, or, if the run was interrupted, finish it with `fragility run --resume %s` (it keeps the whole rows before this one and runs the rest again)",
		e.Where(), dir)
}

// Where is the row and what is wrong with it, without the advice of
// Error: "line N: a torn or ragged row (...)".
func (e *TornRowError) Where() string {
	what := fmt.Sprintf("%d fields where the header has %d", e.Fields, e.Want)
	if e.Quote {
		what = "a quoted field that does not close, or a stray quote"
	}
	return fmt.Sprintf("line %d: a torn or ragged row (%s)", e.Line, what)
}

// NonFinite returns the first column of t, in header order, that holds a
// float that is NaN or ±Inf, and its value; "" when every float column is
// finite. No run writes one (a measure that could not be taken is recorded
// as 0 with its count 0, a DDC margin without an embedder as 0 with ddc_top
// empty), so a reader refuses it as an edit.
func (t *Trial) NonFinite() (column string, value float64) {
	v := reflect.ValueOf(t).Elem()
	for _, c := range trialColumns {
		f := v.Field(c.index)
		if f.Kind() == reflect.Float64 && (math.IsNaN(f.Float()) || math.IsInf(f.Float(), 0)) {
			return c.name, f.Float()
		}
	}
	return "", 0
}
