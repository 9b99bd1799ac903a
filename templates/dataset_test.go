package templates

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fragility/fragility/templates/fixtures"
)

// writeDataset writes content as dir/config/test.jsonl, as a dataset
// config's file lies, and returns its path.
func writeDataset(t *testing.T, dir, config, content string) string {
	t.Helper()
	p := filepath.Join(dir, config, "test.jsonl")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// fixtureFile is a DatasetFile of our fixture at config, its level from
// its folder.
func fixtureFile(t *testing.T, dir, config string, templates, instances int) DatasetFile {
	t.Helper()
	p := writeDataset(t, dir, config, fixtures.Dataset(config, templates, instances))
	lv, err := DatasetFileLevel(p, "")
	if err != nil {
		t.Fatal(err)
	}
	return DatasetFile{Name: p, Path: p, Level: lv}
}

// TestDatasetSet: the released instances of two levels (2 templates × 3
// instances each, the same two originals) become one base item per
// original (level symbolic, instance 0, the original's question and
// answer) and one symbolic item per released instance at its file's
// level, its instance index the dataset index, paired by id_orig; in
// template (level, then id), index, variant order.
func TestDatasetSet(t *testing.T) {
	dir := t.TempDir()
	main, p1 := fixtureFile(t, dir, "main", 2, 3), fixtureFile(t, dir, "p1", 2, 3)
	if main.Level != LevelSymbolic || p1.Level != LevelP1 {
		t.Fatalf("levels %q %q", main.Level, p1.Level)
	}
	d, err := ReadDataset([]DatasetFile{p1, main})
	if err != nil {
		t.Fatal(err)
	}
	if n := d.Instances(); n != 3 {
		t.Errorf("instances %d, want 3", n)
	}
	if nt, no := d.Counts(); nt != 4 || no != 2 {
		t.Errorf("counts %d templates %d originals, want 4 and 2", nt, no)
	}
	if l := d.Levels(); strings.Join(l, ",") != "symbolic,p1" {
		t.Errorf("levels %v", l)
	}
	set, err := d.Set(DatasetOptions{Variants: []Variant{VariantBase, VariantSymbolic}, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, in := range set.Instances {
		ids = append(ids, in.ID)
	}
	want := "gsms-0000/base/0 gsms-0000/symbolic/0 gsms-0000/symbolic/1 gsms-0000/symbolic/2 gsms-0001/base/0 gsms-0001/symbolic/0 gsms-0001/symbolic/1 gsms-0001/symbolic/2 " +
		"gsms-p1-0000/symbolic/0 gsms-p1-0000/symbolic/1 gsms-p1-0000/symbolic/2 gsms-p1-0001/symbolic/0 gsms-p1-0001/symbolic/1 gsms-p1-0001/symbolic/2"
	if got := strings.Join(ids, " "); got != want {
		t.Fatalf("instances:\n%s\nwant\n%s", got, want)
	}
	rows := map[string]fixtures.DatasetRow{}
	for _, r := range fixtures.DatasetRows("main", 2, 3) {
		rows[fmt.Sprintf("gsms-%04d/%d", r.ID, r.Instance)] = r
	}
	for _, r := range fixtures.DatasetRows("p1", 2, 3) {
		rows[fmt.Sprintf("gsms-p1-%04d/%d", r.ID, r.Instance)] = r
	}
	for _, in := range set.Instances {
		k := int(in.TemplateID[len(in.TemplateID)-1] - '0')
		orig := fmt.Sprint(fixtures.DatasetAnswer("main", k, -1))
		if in.IDOrig != fmt.Sprint(9201+k) || in.OriginalAnswer != orig || in.Relation != "gsm-symbolic" || in.Values == nil {
			t.Errorf("%s: id_orig %q original answer %q (want %s) relation %q", in.ID, in.IDOrig, in.OriginalAnswer, orig, in.Relation)
		}
		switch in.Variant {
		case VariantBase:
			r := rows[fmt.Sprintf("gsms-%04d/0", k)]
			if in.Level != LevelSymbolic || in.Index != 0 || in.Question != r.OriginalQuestion || in.Answer != orig {
				t.Errorf("%s: level %q index %d answer %q question %q", in.ID, in.Level, in.Index, in.Answer, in.Question)
			}
		case VariantSymbolic:
			r := rows[in.TemplateID+"/"+fmt.Sprint(in.Index)]
			lv := LevelSymbolic
			if strings.HasPrefix(in.TemplateID, "gsms-p1-") {
				lv = LevelP1
			}
			if in.Level != lv || in.Question != r.Question || in.Answer != fmt.Sprint(fixtures.DatasetAnswer(map[string]string{LevelSymbolic: "main", LevelP1: "p1"}[lv], k, in.Index)) {
				t.Errorf("%s: level %q answer %q question %q", in.ID, in.Level, in.Answer, in.Question)
			}
		}
	}
	if len(set.Templates) != 4 || set.Templates[2].ID != "gsms-p1-0000" || set.Templates[2].Format != DatasetFormat || set.Templates[2].Level != LevelP1 ||
		set.Templates[2].Source != p1.Path || set.Templates[0].IDOrig != "9201" || set.Templates[0].Steps != 1 || set.Templates[2].Steps != 2 {
		t.Errorf("templates: %+v", set.Templates)
	}
	if set.Seed != 7 || set.Options.Instances != 3 || len(set.Options.Variants) != 2 {
		t.Errorf("set seed %d options %+v", set.Seed, set.Options)
	}
	// The set file round-trips as any set does.
	var b strings.Builder
	if err := set.WriteJSONL(&b); err != nil {
		t.Fatal(err)
	}
	back, err := ReadSet(strings.NewReader(b.String()))
	if err != nil || len(back.Instances) != len(set.Instances) {
		t.Fatalf("set file: %v", err)
	}

	// Parts of it: the first datasets, some templates, base alone.
	part, err := d.Set(DatasetOptions{Variants: []Variant{VariantSymbolic}, Instances: 2, IDs: []string{"gsms-p1-0001"}})
	if err != nil {
		t.Fatal(err)
	}
	ids = ids[:0]
	for _, in := range part.Instances {
		ids = append(ids, in.ID)
	}
	// The original of a p1 template whose level-symbolic template is not
	// in the set is asked at the p1 template, still at level symbolic.
	if got := strings.Join(ids, " "); got != "gsms-p1-0001/base/0 gsms-p1-0001/symbolic/0 gsms-p1-0001/symbolic/1" || part.Instances[0].Level != LevelSymbolic {
		t.Errorf("part: %s", got)
	}
	if s, err := d.Set(DatasetOptions{Variants: []Variant{VariantBase}, Limit: 1}); err != nil || len(s.Instances) != 1 || s.Instances[0].ID != "gsms-0000/base/0" {
		t.Errorf("base alone, --limit 1: %v %+v", err, s)
	}
	for _, tc := range []struct {
		opt  DatasetOptions
		want string
	}{
		{DatasetOptions{Variants: []Variant{VariantNoopSeeming}}, "--variants noop-seeming: the released instances are base (the originals) and symbolic (the instances); no other variant is drawn for them"},
		{DatasetOptions{Instances: 4}, "--instances 4: the dataset holds instances 0 to 2 (3 datasets)"},
		{DatasetOptions{IDs: []string{"gsms-0009"}}, "--template-ids: gsms-0009 not in the dataset"},
	} {
		if _, err := d.Set(tc.opt); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.opt, err, tc.want)
		}
	}
}

// TestDatasetFileLevel: a file's level is --level, else its folder's name
// (main is symbolic), else symbolic; DatasetLevel reads config names.
func TestDatasetFileLevel(t *testing.T) {
	for _, tc := range [][3]string{
		{"x/main/test.jsonl", "", "symbolic"}, {"x/P1/test.jsonl", "", "p1"}, {"x/p2/test.jsonl", "", "p2"},
		{"x/symbolic/test.jsonl", "", "symbolic"}, {"gsm.jsonl", "", "symbolic"}, {"x/main/test.jsonl", "p2", "p2"},
	} {
		if got, err := DatasetFileLevel(tc[0], tc[1]); err != nil || got != tc[2] {
			t.Errorf("%s --level %q: %q %v, want %q", tc[0], tc[1], got, err, tc[2])
		}
	}
	if _, err := DatasetFileLevel("a.jsonl", "p3"); err == nil {
		t.Error("--level p3 accepted")
	}
	if DatasetLevel("other") != "" || DatasetLevel("Main") != LevelSymbolic {
		t.Error("DatasetLevel")
	}
}

// TestDatasetBadInput: every kind of bad input is one error naming the
// file and line (both lines for a pair given twice): a file of another
// shape, answers without "#### N", instance indices that are not whole
// numbers from 0, a duplicate (id, instance) in one file and across two
// files of one level, a template naming two originals, an original with
// two answers or two wordings in one template, and an empty file. A
// dataset file given to --templates is refused as GSM8K rows.
func TestDatasetBadInput(t *testing.T) {
	good := fixtures.DatasetRows("main", 2, 3)
	with := func(i int, f func(r *fixtures.DatasetRow)) string {
		rs := append([]fixtures.DatasetRow(nil), good...)
		f(&rs[i])
		return fixtures.DatasetJSONL(rs)
	}
	lines := strings.Split(strings.TrimSuffix(fixtures.Dataset("main", 2, 3), "\n"), "\n")
	replaced := func(i int, s string) string {
		ls := append([]string(nil), lines...)
		ls[i] = s
		return strings.Join(ls, "\n") + "\n"
	}
	for _, tc := range []struct {
		name, content string
		line          int
		want          string
	}{
		{"gsm8k", `{"question": "Two plus two?", "answer": "2+2=4\n#### 4"}` + "\n", 1, "a GSM8K row (question and answer only), not a released GSM-Symbolic instance"},
		{"set", `{"format":"fragility-set","version":1}` + "\n", 1, "this is a generated item set"},
		{"other", replaced(2, `{"id": 0, "instance": 2, "prompt": "x", "target": 3}`), 3, "not a released GSM-Symbolic instance: no question, answer, original_id, original_question, original_answer"},
		{"not json", replaced(1, `{"id": 0,`), 2, "not a released GSM-Symbolic instance: "},
		{"list", "[1, 2]\n", 1, "not a released GSM-Symbolic instance: the JSON is a list, want an object"},
		{"answer", with(4, func(r *fixtures.DatasetRow) { r.Answer = "She has 9 shells." }), 5, `answer does not end with "#### N"`},
		{"answer number", with(4, func(r *fixtures.DatasetRow) { r.Answer = "#### nine" }), 5, `answer "nine" after #### is not a number`},
		{"original answer", with(0, func(r *fixtures.DatasetRow) { r.OriginalAnswer = "It is 7." }), 1, `original_answer does not end with "#### N"`},
		{"instance", with(1, func(r *fixtures.DatasetRow) { r.Instance = -1 }), 2, "instance: want a whole number from 0, got -1"},
		{"instance fraction", replaced(1, strings.Replace(lines[1], `"instance":1`, `"instance":1.5`, 1)), 2, "instance: want a whole number from 0, got 1.5"},
		{"duplicate", with(2, func(r *fixtures.DatasetRow) { r.Instance = 0 }), 3, "template 0, instance 0 given twice at level symbolic (first at line 1)"},
		{"two originals", with(2, func(r *fixtures.DatasetRow) { r.OriginalID = 9300 }), 3, "template 0 names original_id 9300, its line 1 names 9201"},
		{"original answers", with(3, func(r *fixtures.DatasetRow) {
			r.ID, r.OriginalAnswer = 5, strings.Replace(good[0].OriginalAnswer, "#### 7", "#### 8", 1)
			r.OriginalID = 9201
		}), 4, "original 9201 has the answer 8 here and 7 at line 1"},
		{"original wording", with(1, func(r *fixtures.DatasetRow) { r.OriginalQuestion += " Explain." }), 2, "template 0 gives its original_question in other words than at its line 1"},
		{"empty question", with(1, func(r *fixtures.DatasetRow) { r.Question = " " }), 2, "empty question"},
		{"empty", "\n\n", 0, "no lines: not a released GSM-Symbolic instances file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := writeDataset(t, t.TempDir(), "main", tc.content)
			_, err := ReadDataset([]DatasetFile{{Name: p, Path: p, Level: LevelSymbolic}})
			prefix := fmt.Sprintf("%s:%d: ", p, tc.line)
			if tc.line == 0 {
				prefix = p + ": "
			}
			if err == nil || !strings.HasPrefix(err.Error(), prefix) || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("error %v\nwant one line %q…%q", err, prefix, tc.want)
			}
		})
	}

	// A pair given twice across two files of one level names both.
	dir := t.TempDir()
	a := writeDataset(t, dir, "main", fixtures.Dataset("main", 1, 2))
	b := writeDataset(t, filepath.Join(dir, "copy"), "main", fixtures.Dataset("main", 1, 1))
	_, err := ReadDataset([]DatasetFile{{Name: a, Path: a, Level: LevelSymbolic}, {Name: b, Path: b, Level: LevelSymbolic}})
	if want := fmt.Sprintf("%s:1: template 0, instance 0 given twice at level symbolic (first at %s:1)", b, a); err == nil || err.Error() != want {
		t.Errorf("across files: %v\nwant %s", err, want)
	}
	// The same pair at two levels is two templates.
	c := writeDataset(t, dir, "p2", fixtures.Dataset("p2", 1, 2))
	if _, err := ReadDataset([]DatasetFile{{Name: a, Path: a, Level: LevelSymbolic}, {Name: c, Path: c, Level: LevelP2}}); err != nil {
		t.Errorf("two levels: %v", err)
	}
	if _, err := ReadDataset([]DatasetFile{{Name: "gone.jsonl", Path: filepath.Join(dir, "gone.jsonl"), Level: LevelSymbolic}}); err == nil || !strings.Contains(err.Error(), "gone.jsonl: no such file") {
		t.Errorf("missing file: %v", err)
	}

	// --templates on a dataset file: refused, pointing to --dataset.
	if _, err := Load(a); err == nil || !strings.Contains(err.Error(), a+":1: released GSM-Symbolic instances (instance, original_id), not GSM8K rows: read them with --dataset") {
		t.Errorf("Load of a dataset file: %v", err)
	}
	var row map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &row); err != nil || row["canary"] == nil {
		t.Errorf("fixture line: %v %v", err, row)
	}
}
