package results

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/fragility/fragility/probe/answer"
)

// csvTrials are trials with every column set, text that needs quoting and
// floats that only shortest round-trip formatting keeps exact.
func csvTrials() []Trial {
	tr := func(template, variant string, inst int, correct bool) Trial {
		return Trial{ItemID: fmt.Sprintf("m0/%s/%s/%d", template, variant, inst), ModelPath: "m.gguf", ModelName: "M", Quantization: "Q4_K_M",
			TemplateID: template, Variant: variant, Instance: inst, Correct: correct, Tokens: 10, Steps: 2, Relation: "sum"}
	}
	ts := []Trial{
		tr("A", "base", 0, true), tr("A", "base", 1, true), tr("B", "base", 0, true), tr("B", "base", 1, false),
		tr("A", "noop", 0, true), tr("A", "noop", 1, false), tr("B", "noop", 0, false), tr("B", "noop", 1, true),
	}
	ts[len(ts)-1].SkipReason = "prompt too long"
	tenth, fifth := 0.1, 0.2 // variables: constant arithmetic would be exact
	for i := range ts {
		t := &ts[i]
		t.ModelFamily = "m"
		t.Seed = -42
		t.Level = "p1"
		t.Question = `Ava has 3 "red" apples, and 4,000 pears.` + "\nHow many?"
		t.Expected = "4003"
		t.Response = "Step 1: 3 + 4,000 = 4003\n\nFinal answer: 4003\n\t“quoted”, 🍎"
		t.Extracted = "4003"
		t.Rule = answer.RuleFinalAnswer
		t.ExpectedAnywhere = i%2 == 0
		t.StopReason = "eos"
		t.PromptTokens = 123 + i
		t.EntropyMean = 1.0 / 3
		t.EntropyP95 = 1e-300
		t.BranchingMedian = math.Pow(2, 0.1)
		t.AnswerEntropyMean = tenth + fifth
		t.AnswerEntropyP95 = math.Copysign(0, -1)
		t.AnswerBranching = math.MaxFloat64
		t.DDCTop, t.DDCRunnerUp = "500", "300"
		t.DDCMargin = 0.0123456789012345678
		t.Seconds = 12.5
	}
	return ts
}

func TestResultsCSVRoundTrip(t *testing.T) {
	in := csvTrials()
	var buf bytes.Buffer
	if err := WriteCSV(&buf, in); err != nil {
		t.Fatal(err)
	}
	first := buf.String()
	out, err := ReadCSV(strings.NewReader(first))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(in, out) {
		for i := range in {
			if !reflect.DeepEqual(in[i], out[i]) {
				t.Fatalf("row %d differs:\n in %+v\nout %+v", i, in[i], out[i])
			}
		}
		t.Fatalf("%d trials in, %d out", len(in), len(out))
	}
	var again bytes.Buffer
	if err := WriteCSV(&again, out); err != nil {
		t.Fatal(err)
	}
	if again.String() != first {
		t.Fatal("rewriting the read trials changed the file")
	}
	// The header is the json tags of Trial in field order.
	header := strings.SplitN(first, "\n", 2)[0]
	if !strings.HasPrefix(header, "item_id,model_path,model_name,") || !strings.Contains(header, ",ddc_margin,seconds,score_rule,f1,not_stated,passages,") ||
		!strings.HasSuffix(header, ",condition,calc_calls,cut_marker,effort_tokens,effort_source,think_tokens,think_entropy_mean_bits,reply_tokens,reply_entropy_mean_bits,reference,id_orig,error_kind,alt_answer,original_answer,answer_scored,answer_logprob,answer_logprob_tokens,own_answer_logprob,own_answer_logprob_tokens,answer_logprob_margin,answer_first_logprob,answer_first_logprob_tokens") {
		t.Errorf("header %q", header)
	}
	if !strings.Contains(first, ",0.30000000000000004,") || !strings.Contains(first, ",0.3333333333333333,") {
		t.Error("floats are not in shortest round-trip form")
	}
}

func TestResultsCSVNaN(t *testing.T) {
	in := []Trial{{ItemID: "x", EntropyMean: math.NaN(), Seconds: math.Inf(1)}}
	var buf bytes.Buffer
	if err := WriteCSV(&buf, in); err != nil {
		t.Fatal(err)
	}
	out, err := ReadCSV(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if !math.IsNaN(out[0].EntropyMean) || !math.IsInf(out[0].Seconds, 1) {
		t.Fatalf("%+v", out[0])
	}
}

func TestResultsCSVEmptyAndBOM(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteCSV(&buf, nil); err != nil {
		t.Fatal(err)
	}
	out, err := ReadCSV(strings.NewReader("\ufeff" + buf.String()))
	if err != nil || len(out) != 0 {
		t.Fatalf("%v %v", out, err)
	}
}

func TestResultsCSVErrorsNameTheLine(t *testing.T) {
	var buf bytes.Buffer
	ts := csvTrials()[:3]
	if err := WriteCSV(&buf, ts); err != nil {
		t.Fatal(err)
	}
	good := buf.String()
	// Records span several lines (question and response hold newlines).
	perRecord := 1 + strings.Count(ts[0].Question, "\n") + strings.Count(ts[0].Response, "\n")
	wantLine := 2 + 2*perRecord
	// Corrupt only the third record's "correct" column.
	at := strings.Index(good, ts[2].ItemID)
	old := ",4003,true," + answer.RuleFinalAnswer
	j := strings.Index(good[at:], old)
	if !ts[2].Correct || at < 0 || j < 0 {
		t.Fatal("unexpected layout")
	}
	bad := good[:at+j] + ",4003,maybe," + answer.RuleFinalAnswer + good[at+j+len(old):]
	_, err := ReadCSV(strings.NewReader(bad))
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("line %d:", wantLine)) || !strings.Contains(err.Error(), "column correct") {
		t.Fatalf("error %v, want one naming line %d and column correct", err, wantLine)
	}
	lines := strings.Split(good, "\n")
	// A header from another version.
	_, err = ReadCSV(strings.NewReader(strings.Replace(good, "item_id", "id", 1)))
	if err == nil || !strings.Contains(err.Error(), "line 1") {
		t.Fatalf("error %v, want one naming line 1", err)
	}
	// A file from an older version, without the level column: it reads,
	// with Level empty, and every other field as written.
	older := ts[0]
	older.Level = ""
	var ob bytes.Buffer
	cw := csv.NewWriter(&ob)
	rec := older.Record()
	for i, name := range Header() {
		if name == "level" {
			cw.Write(slices.Delete(Header(), i, i+1))
			cw.Write(slices.Delete(rec, i, i+1))
		}
	}
	cw.Flush()
	got, err := ReadCSV(&ob)
	if err != nil || len(got) != 1 || !reflect.DeepEqual(got[0], older) {
		t.Fatalf("older file without level: %v %+v", err, got)
	}
	// A repeated column.
	_, err = ReadCSV(strings.NewReader(strings.Replace(good, "model_name,", "model_path,", 1)))
	if err == nil || !strings.Contains(err.Error(), "twice") {
		t.Fatalf("error %v, want one naming a repeated column", err)
	}
	// A short record.
	_, err = ReadCSV(strings.NewReader(lines[0] + "\na,b,c\n"))
	if err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Fatalf("error %v, want one naming line 2", err)
	}
	if _, err := ReadCSV(strings.NewReader("")); err == nil {
		t.Fatal("empty file accepted")
	}
}

// TestResultsCSVBadValuesWorded: a field that is not what its column holds
// is named by line, column and value, in words, never by Go's parser
// (strconv.ParseFloat, invalid syntax).
func TestResultsCSVBadValuesWorded(t *testing.T) {
	for _, c := range []struct{ column, value, want string }{
		{"seconds", "abc", `line 2: column seconds: "abc" is not a number`},
		{"seconds", "1e999", `line 2: column seconds: "1e999" is out of range`},
		{"instance", "1.5", `line 2: column instance: "1.5" is not a whole number`},
		{"instance", "99999999999999999999", `line 2: column instance: "99999999999999999999" is out of range`},
		{"correct", "maybe", `line 2: column correct: "maybe" is not true or false`},
	} {
		_, err := ReadCSV(strings.NewReader(withField(t, c.column, c.value)))
		if err == nil || err.Error() != c.want || strings.Contains(err.Error(), "strconv") || strings.Contains(err.Error(), "syntax") {
			t.Errorf("%s=%s: error %v, want %q", c.column, c.value, err, c.want)
		}
	}
}

// withField returns a results.csv of one trial (csvTrials' first) whose
// column holds value.
func withField(t *testing.T, column, value string) string {
	t.Helper()
	tr := csvTrials()[0]
	rec := tr.Record()
	i := slices.Index(Header(), column)
	if i < 0 {
		t.Fatalf("no column %s", column)
	}
	rec[i] = value
	var b bytes.Buffer
	cw := csv.NewWriter(&b)
	cw.Write(Header())
	cw.Write(rec)
	cw.Flush()
	return b.String()
}

// TestResultsCSVMissingColumn: a file without a column every version writes
// (correct, say) is refused naming the column, not read with the zero value
// (every answer wrong); one without a column added later (level) reads.
// Every required column is a column of this version.
func TestResultsCSVMissingColumn(t *testing.T) {
	for _, c := range requiredColumns {
		if !slices.Contains(Header(), c) {
			t.Errorf("required column %s is not in the header", c)
		}
	}
	drop := func(names ...string) string {
		tr := csvTrials()[0]
		h, rec := Header(), tr.Record()
		var b bytes.Buffer
		cw := csv.NewWriter(&b)
		var hh, rr []string
		for i := range h {
			if !slices.Contains(names, h[i]) {
				hh, rr = append(hh, h[i]), append(rr, rec[i])
			}
		}
		cw.Write(hh)
		cw.Write(rr)
		cw.Flush()
		return b.String()
	}
	_, err := ReadCSV(strings.NewReader(drop("correct")))
	if want := "lacks the column(s) correct, which every results.csv has: the file was edited"; err == nil || err.Error() != want {
		t.Errorf("without correct: %v, want %q", err, want)
	}
	_, err = ReadCSV(strings.NewReader(drop("seconds", "item_id")))
	if err == nil || !strings.Contains(err.Error(), "lacks the column(s) item_id, seconds,") {
		t.Errorf("without item_id and seconds: %v", err)
	}
	if got, err := ReadCSV(strings.NewReader(drop("level", "error_kind"))); err != nil || len(got) != 1 {
		t.Errorf("without level and error_kind (added later): %v", err)
	}
}

// TestResultsCSVQuoteCapped: a long value or header name from the file is
// quoted to its first QuoteLimit characters, then "…", so a file of random
// bytes gives a short message.
func TestResultsCSVQuoteCapped(t *testing.T) {
	long := strings.Repeat("é", 500)
	if q := Quote(long); q != strconv.Quote(strings.Repeat("é", QuoteLimit))+"…" {
		t.Errorf("Quote of 500 runes: %s", q)
	}
	if q := Quote("abc"); q != `"abc"` {
		t.Errorf("Quote(abc) = %s", q)
	}
	// Bytes that are not UTF-8 are quoted as \xNN, not replaced.
	if q := Quote(strings.Repeat("\xff", 100)); q != strconv.Quote(strings.Repeat("\xff", QuoteLimit/4))+"…" || !strings.Contains(q, `\xff`) {
		t.Errorf("Quote of 100 bytes 0xff: %s", q)
	}
	if q := Quote(strings.Repeat("x", QuoteLimit)); q != strconv.Quote(strings.Repeat("x", QuoteLimit)) {
		t.Errorf("Quote of %d characters is cut: %s", QuoteLimit, q)
	}
	_, err := ReadCSV(strings.NewReader(withField(t, "seconds", strings.Repeat("x", 700))))
	if err == nil || len(err.Error()) > 150 || !strings.Contains(err.Error(), `"…`) {
		t.Errorf("a 700-character value: %d characters: %v", len(err.Error()), err)
	}
	_, err = ReadCSV(strings.NewReader(strings.Repeat("junk ", 200) + "\n"))
	if err == nil || len(err.Error()) > 150 || !strings.Contains(err.Error(), "line 1: column 1 is") {
		t.Errorf("a 1000-character header: %d characters: %v", len(err.Error()), err)
	}
}

// TestTrialNonFinite: the first float column holding NaN or ±Inf is named
// with its value; a trial of finite values has none.
func TestTrialNonFinite(t *testing.T) {
	tr := csvTrials()[0]
	if c, _ := tr.NonFinite(); c != "" {
		t.Errorf("a finite trial: %s", c)
	}
	tr.DDCMargin, tr.Seconds = math.NaN(), math.Inf(-1)
	if c, x := tr.NonFinite(); c != "ddc_margin" || !math.IsNaN(x) {
		t.Errorf("NaN margin: %s %v", c, x)
	}
	tr.DDCMargin = 0
	if c, x := tr.NonFinite(); c != "seconds" || !math.IsInf(x, -1) {
		t.Errorf("-Inf seconds: %s %v", c, x)
	}
}
