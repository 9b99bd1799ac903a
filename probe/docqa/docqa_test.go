package docqa

import (
	"errors"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/fragility/fragility/templates"
)

const good = `{"id":"mill","passages":[{"id":"p1","text":"The tide mill at Elsworth was built in 1791 by Ann Carrow."},{"id":"p2","text":"It ground grain until 1923."}],"question":"Who built the tide mill?","paraphrases":["Which person built the Elsworth tide mill?","The tide mill was built by whom?"],"answer":["Ann Carrow","Carrow"],"distractors":[{"id":"d1","text":"A windmill at Elsworth was built by Tom Reed."}],"relation":"person","difficulty":"lookup"}
# a comment line
{"id":"bell","passages":[{"id":"a","text":"The bell weighs 1,250 kilograms."}],"question":"How heavy is the bell?","paraphrases":[],"answer":1250.0}
{"id":"lake","passages":[{"id":"a","text":"Lake Orme is 14 km long."},{"id":"b","text":"Lake Orme freezes most winters."}],"question":"How long is Lake Orme?","answer":"14"}
`

func TestReadGood(t *testing.T) {
	items, err := Read(strings.NewReader(good), "f.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != 3 {
		t.Fatalf("%d items, want 3", len(items))
	}
	if got := items[0].Accepted; !reflect.DeepEqual(got, []string{"Ann Carrow", "Carrow"}) {
		t.Errorf("accepted %q", got)
	}
	if got := items[1].Accepted; !reflect.DeepEqual(got, []string{"1250"}) || !items[1].Numeric() {
		t.Errorf("number answer read as %q (numeric %v), want 1250", got, items[1].Numeric())
	}
	if items[0].Numeric() {
		t.Error("a name is not numeric")
	}
	if items[2].Source != "f.jsonl:4" || items[0].Difficulty != "lookup" || items[0].Relation != "person" {
		t.Errorf("source %q, labels %q %q", items[2].Source, items[0].Relation, items[0].Difficulty)
	}
}

func TestReadBadOneLineEach(t *testing.T) {
	in := strings.Join([]string{
		`{"id":"ok","passages":[{"id":"p","text":"x is 3"}],"question":"x?","answer":3}`,
		`{"id":"ok","passages":[{"id":"p","text":"x is 3"}],"question":"x?","answer":3}`,
		`{"id":"a/b","passages":[{"id":"p","text":"t"}],"question":"q","answer":1}`,
		`{"id":"np","passages":[],"question":"q","answer":1}`,
		`{"id":"nq","passages":[{"id":"p","text":"t"}],"answer":1}`,
		`{"id":"na","passages":[{"id":"p","text":"t"}],"question":"q"}`,
		`{"id":"ns","passages":[{"id":"p","text":"t"}],"question":"q","answer":"Not stated."}`,
		`{"id":"dup","passages":[{"id":"p","text":"t"},{"id":"p","text":"u"}],"question":"q","answer":1}`,
		`{"id":"para","passages":[{"id":"p","text":"t"}],"question":"Who is it?","paraphrases":["who is it"],"answer":1}`,
		`{"id":"unk","passages":[{"id":"p","text":"t"}],"question":"q","answer":1,"answers":2}`,
		`{"id":"dist","passages":[{"id":"p","text":"t"}],"question":"q","answer":1,"distractors":[{"id":"d","text":"T."}]}`,
		`not json`,
		`{"id":"art","passages":[{"id":"p","text":"t"}],"question":"q","answer":"The"}`,
		`{"id":"typ","passages":"t","question":"q","answer":1}`,
	}, "\n")
	_, err := Read(strings.NewReader(in), "x.jsonl")
	var es *Errors
	if !errors.As(err, &es) {
		t.Fatalf("want *Errors, got %v", err)
	}
	want := []string{
		"x.jsonl:2: id: ", "x.jsonl:3: id: ", "x.jsonl:4: passages: ", "x.jsonl:5: question: ", "x.jsonl:6: answer: missing",
		"x.jsonl:7: answer: ", "x.jsonl:8: passages[1].id: ", "x.jsonl:9: paraphrases[0]: ", "x.jsonl:10: answers: unknown field",
		"x.jsonl:11: distractors[0]: ", "x.jsonl:12: line: ", "x.jsonl:13: answer: ", "x.jsonl:14: passages: must be",
	}
	if len(es.Lines) != len(want) {
		t.Fatalf("%d lines, want %d:\n%s", len(es.Lines), len(want), es)
	}
	for i, w := range want {
		if !strings.HasPrefix(es.Lines[i], w) || strings.Contains(es.Lines[i], "\n") {
			t.Errorf("line %d = %q, want prefix %q", i, es.Lines[i], w)
		}
	}
	if !strings.Contains(es.Lines[0], "line 1") {
		t.Errorf("duplicate id does not name the first line: %q", es.Lines[0])
	}
	if _, err := Read(strings.NewReader("\n# only a comment\n"), "e.jsonl"); err == nil || !strings.Contains(err.Error(), "e.jsonl: no items") {
		t.Errorf("empty file: %v", err)
	}
}

func TestParseVariants(t *testing.T) {
	vs, err := ParseVariants(" base, paraphrase,distractor, distractor-2,shuffle,distractor-shuffle,paraphrase-2")
	if err != nil {
		t.Fatal(err)
	}
	want := []templates.Variant{"base", "paraphrase", "distractor-1", "distractor-2", "shuffle", "distractor-shuffle", "paraphrase-2"}
	if !reflect.DeepEqual(vs, want) {
		t.Errorf("got %q, want %q", vs, want)
	}
	for _, bad := range []string{"noop", "paraphrase-0", "distractor-x", "paraphrase-01", "", "base,", "base,,shuffle", "base,shuffle,base", "distractor,distractor-1"} {
		if _, err := ParseVariants(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func genSet(t *testing.T, variants string, n int, seed int64) *templates.Set {
	t.Helper()
	items, err := Read(strings.NewReader(good), "f.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	vs, err := ParseVariants(variants)
	if err != nil {
		t.Fatal(err)
	}
	set, err := Generate(items, templates.Options{Variants: vs, Instances: n, Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	return set
}

func find(set *templates.Set, id string) *templates.Instance {
	for i := range set.Instances {
		if set.Instances[i].ID == id {
			return &set.Instances[i]
		}
	}
	return nil
}

func TestGenerate(t *testing.T) {
	set := genSet(t, "paraphrase,distractor,distractor-2,shuffle,distractor-shuffle,paraphrase-3", 1, 7)
	base := find(set, "mill/base/0")
	if base == nil || PassageList(base) != "mill/p1 mill/p2" || base.Answer != "Ann Carrow" {
		t.Fatalf("base: %+v", base)
	}
	p2 := find(set, "mill/paraphrase-2/0")
	if p2 == nil || p2.Question != "The tide mill was built by whom?" || PassageList(p2) != PassageList(base) {
		t.Errorf("paraphrase-2: %+v", p2)
	}
	// The item's own distractor comes first; the second is another item's passage.
	d1, d2 := find(set, "mill/distractor-1/0"), find(set, "mill/distractor-2/0")
	if d1 == nil || PassageList(d1) != "mill/p1 mill/p2 +mill/d1" {
		t.Errorf("distractor-1: %v", PassageList(d1))
	}
	if d2 == nil || len(d2.Passages) != 4 || !strings.HasPrefix(PassageList(d2), "mill/p1 mill/p2 +mill/d1 +") ||
		d2.Passages[3].Item == "mill" || !d2.Passages[3].Distractor {
		t.Errorf("distractor-2: %v", PassageList(d2))
	}
	// bell has no distractors of its own: both are drawn from other items.
	if b := find(set, "bell/distractor-1/0"); b == nil || b.Passages[1].Item == "bell" {
		t.Errorf("bell distractor-1: %+v", b)
	}
	sh := find(set, "mill/shuffle/0")
	if sh == nil || PassageList(sh) != "mill/p2 mill/p1" {
		t.Errorf("shuffle of two passages must swap them: %v", PassageList(sh))
	}
	ds := find(set, "mill/distractor-shuffle/0")
	if ds == nil || PassageList(ds) == PassageList(d1) {
		t.Fatalf("distractor-shuffle: %+v", ds)
	}
	a, b := strings.Fields(PassageList(ds)), strings.Fields(PassageList(d1))
	slices.Sort(a)
	slices.Sort(b)
	if !slices.Equal(a, b) {
		t.Errorf("distractor-shuffle %v is not a permutation of distractor-1 %v", a, b)
	}
	// Not applicable: bell has no paraphrase and one passage; nobody has 3 paraphrases.
	reasons := map[string]string{}
	for _, e := range set.Excluded {
		reasons[e.Template+"/"+string(e.Variant)] = e.Reason
	}
	for _, k := range []string{"bell/paraphrase", "bell/shuffle", "mill/paraphrase-3", "lake/paraphrase"} {
		if reasons[k] == "" {
			t.Errorf("%s not excluded (%v)", k, reasons)
		}
	}
	for _, in := range set.Instances {
		if in.Answer != in.Accepted[0] || in.TemplateID == "" || len(in.Passages) == 0 {
			t.Errorf("%s: answer %q accepted %q", in.ID, in.Answer, in.Accepted)
		}
	}
	// Deterministic, and the seed matters for drawn distractors.
	again := genSet(t, "paraphrase,distractor,distractor-2,shuffle,distractor-shuffle,paraphrase-3", 1, 7)
	if !reflect.DeepEqual(set, again) {
		t.Error("the same items and options gave different sets")
	}
	differs := false
	for s := int64(1); s < 20 && !differs; s++ {
		other := genSet(t, "distractor-2", 1, s)
		differs = PassageList(find(other, "mill/distractor-2/0")) != PassageList(d2)
	}
	if !differs {
		t.Error("the drawn distractor never changes with the seed")
	}
}

func TestBody(t *testing.T) {
	set := genSet(t, "base", 1, 1)
	got := Body(find(set, "lake/base/0"))
	want := "Passages:\n[1] Lake Orme is 14 km long.\n\n[2] Lake Orme freezes most winters.\n\nQuestion: How long is Lake Orme?"
	if got != want {
		t.Errorf("Body:\n%q\nwant\n%q", got, want)
	}
}

func TestScoreText(t *testing.T) {
	acc := []string{"Ann Carrow", "Carrow"}
	cases := []struct {
		resp        string
		correct, ns bool
		rule, value string
		f1          float64
		anywhere    bool
	}{
		{"The passage says so.\nAnswer: **Ann Carrow.**", true, false, RuleAnswerLine, "Ann Carrow", 1, true},
		{"answer: the carrow", true, false, RuleAnswerLine, "the carrow", 1, true},
		{"Ann Carrow built it.", false, false, RuleFirstLine, "Ann Carrow built it", 2 * (2.0 / 4) * 1 / (2.0/4 + 1), true},
		{"Answer: Not stated in the passages.", false, true, RuleAnswerLine, "Not stated in the passages", 0, false},
		{"Answer: Tom Reed", false, false, RuleAnswerLine, "Tom Reed", 0, false},
		{"", false, false, "none", "", 0, false},
	}
	for _, c := range cases {
		s := ScoreResponse(c.resp, acc)
		if s.ScoreRule != ScoreExactMatch || s.Correct != c.correct || s.NotStated != c.ns || s.Rule != c.rule || s.Value != c.value ||
			math.Abs(s.F1-c.f1) > 1e-12 || s.Anywhere != c.anywhere {
			t.Errorf("%q: %+v", c.resp, s)
		}
		if s.Start >= 0 && c.resp[s.Start:s.End] != s.Value {
			t.Errorf("%q: span %d..%d is not the value", c.resp, s.Start, s.End)
		}
	}
}

func TestScoreNumber(t *testing.T) {
	acc := []string{"1250"}
	for resp, want := range map[string]bool{
		"Answer: 1,250 kilograms": true, "It weighs 1250 kg.\nAnswer: 1250": true, "Answer: 125": false, "The answer is 1250.": true,
	} {
		s := ScoreResponse(resp, acc)
		if s.ScoreRule != ScoreNumber || s.Correct != want || (s.F1 == 1) != want {
			t.Errorf("%q: %+v", resp, s)
		}
	}
	s := ScoreResponse("The bell weighs 1250 kg.\nAnswer: not stated", acc)
	if !s.NotStated || s.Correct || !s.Anywhere {
		t.Errorf("not stated with the number elsewhere: %+v", s)
	}
}

func TestTokenF1(t *testing.T) {
	// pred {carrow, built, it}, gold {ann, carrow}: c = 1, p = 1/3, r = 1/2, F1 = 0.4.
	if got := TokenF1("Carrow built it", "Ann Carrow"); math.Abs(got-0.4) > 1e-12 {
		t.Errorf("F1 = %v, want 0.4", got)
	}
	// Repeated words count once per occurrence: pred {x, x}, gold {x}: c = 1, p = 1/2, r = 1 → 2/3.
	if got := TokenF1("x x", "x"); math.Abs(got-2.0/3) > 1e-12 {
		t.Errorf("F1 = %v, want 2/3", got)
	}
	if TokenF1("The", "an") != 1 || TokenF1("a b", "c") != 0 {
		t.Error("empty or disjoint")
	}
	if NormalizeAnswer("  The Well-Known, U.S. mill!") != "well known u s mill" {
		t.Errorf("normalised %q", NormalizeAnswer("  The Well-Known, U.S. mill!"))
	}
}
