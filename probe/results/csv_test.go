package results

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"math"
	"reflect"
	"slices"
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
		!strings.HasSuffix(header, ",condition,calc_calls,cut_marker,effort_tokens,effort_source,think_tokens,think_entropy_mean_bits,reply_tokens,reply_entropy_mean_bits,reference,id_orig,error_kind,alt_answer,original_answer,answer_scored,answer_logprob,answer_logprob_tokens,own_answer_logprob,own_answer_logprob_tokens,answer_logprob_margin") {
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
		_, err := ReadCSV(strings.NewReader("item_id," + c.column + "\nm0/A/base/0," + c.value + "\n"))
		if err == nil || err.Error() != c.want || strings.Contains(err.Error(), "strconv") || strings.Contains(err.Error(), "syntax") {
			t.Errorf("%s=%s: error %v, want %q", c.column, c.value, err, c.want)
		}
	}
}
