package templates

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
)

// withNoopSet replaces the embedded clause set by the files of fsys (folder
// "noopset") for one test, and lets unreviewed clauses be used when
// unreviewed is true.
func withNoopSet(t *testing.T, fsys fstest.MapFS, unreviewed bool) *noopSet {
	t.Helper()
	loadedNoopSet()
	saved, savedU := noopSetLoaded, noopSetUnreviewed
	s := noopSetLoaded
	if fsys != nil {
		s = readNoopSet(fsys, "noopset")
	}
	noopSetLoaded, noopSetUnreviewed = s, unreviewed
	t.Cleanup(func() { noopSetLoaded, noopSetUnreviewed = saved, savedU })
	return s
}

// A problem written for this test, in the GSM-Symbolic syntax.
const setProblem = `{
  "question": "Ana packs 4 crates of 6 jars each. How many jars does Ana pack?",
  "answer": "4 * 6 = 24\n#### 24",
  "id_orig": 1,
  "id_shuffled": 7,
  "question_annotated": "{name,Ana} packs {c,4} crates of {j,6} jars each. How many jars does {name,Ana} pack?\n\n#init:\n- name = sample([\"Ana\", \"Bo\", \"Cy\"])\n- $c = range(2, 9)\n- $j = range(3, 12)\n\n#answer: c * j"
}`

func guardOf(t *testing.T, doc string) string {
	t.Helper()
	var f struct {
		QA string `json:"question_annotated"`
	}
	if err := json.Unmarshal([]byte(doc), &f); err != nil {
		t.Fatal(err)
	}
	h := sha256.Sum256([]byte(f.QA))
	return hex.EncodeToString(h[:])
}

func setYAML(guard, verdict string) string {
	review := ""
	if verdict != "" {
		review = "\n        review:\n          reader: tester\n          verdict: " + verdict
	}
	return `version: 1
templates:
  - id: 7
    guard: ` + guard + `
    clauses:
      - text: "{k} of the jars had blue lids."
        position: after-sentence-1
        vars:
          k: range(2, 30)
        conditions:
          - k < c * j
        reason: "Lid colour does not change how many jars are packed."
        alt_answer: c * j - k` + review + "\n"
}

func TestNoopSetAttachAndGenerate(t *testing.T) {
	withNoopSet(t, fstest.MapFS{"noopset/x.yaml": {Data: []byte(setYAML(guardOf(t, setProblem), "ok"))}}, false)
	ts, err := ParseGSMSymbolic("p/symbolic/0007.json", []byte(setProblem))
	if err != nil {
		t.Fatal(err)
	}
	tp := ts[0]
	st := tp.NoopSetStatus()
	if st == nil || !st.Keyed || !st.GuardOK || st.Used != 1 || st.Pending != 0 {
		t.Fatalf("status %+v", st)
	}
	set, err := Generate(ts, Options{Variants: []Variant{VariantNoopSeeming}, Instances: 20, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, in := range set.Instances {
		if in.Variant != VariantNoopSeeming {
			continue
		}
		n++
		if in.Answer != "24" {
			t.Errorf("%s: answer %s, want 24 (the clause must not change it)", in.ID, in.Answer)
		}
		want := "Ana packs 4 crates of 6 jars each. " + in.NoopClause + " How many jars does Ana pack?"
		if in.Question != want {
			t.Errorf("%s: question %q, want %q", in.ID, in.Question, want)
		}
		k := in.NoopValues["k"]
		if in.NoopClause != k+" of the jars had blue lids." {
			t.Errorf("%s: clause %q", in.ID, in.NoopClause)
		}
		var kv int
		fmt.Sscan(k, &kv)
		if in.AltAnswer != fmt.Sprint(24-kv) {
			t.Errorf("%s: alt_answer %s, want 24 - %d", in.ID, in.AltAnswer, kv)
		}
		if in.NoopSource != "noopset" || in.NoopKind != NoopSeeming || in.NoopReason == "" {
			t.Errorf("%s: source %q kind %q reason %q", in.ID, in.NoopSource, in.NoopKind, in.NoopReason)
		}
	}
	if n != 20 {
		t.Errorf("%d noop-seeming instances, want 20", n)
	}
	if !strings.Contains(tp.Describe(), "alt_answer c * j - k") {
		t.Errorf("Describe does not list the clause:\n%s", tp.Describe())
	}
}

func TestNoopSetGuardMismatchRefusesClausesByName(t *testing.T) {
	withNoopSet(t, fstest.MapFS{"noopset/x.yaml": {Data: []byte(setYAML(strings.Repeat("ab", 32), "ok"))}}, false)
	ts, err := ParseGSMSymbolic("p/symbolic/0007.json", []byte(setProblem))
	if err != nil {
		t.Fatalf("the template must still import: %v", err)
	}
	tp := ts[0]
	var got []string
	for _, w := range tp.Warnings {
		if strings.HasPrefix(w, "GSM-NoOp clause set:") {
			got = append(got, w)
		}
	}
	if len(got) != 1 || !strings.Contains(got[0], "p/symbolic/0007.json") || !strings.Contains(got[0], "not the version") {
		t.Errorf("want one warning naming the file, got %q", got)
	}
	if ok, why := tp.Supports(VariantNoopSeeming); ok || !strings.Contains(why, "not the version") {
		t.Errorf("noop-seeming supported=%v (%s)", ok, why)
	}
	if ok, _ := tp.Supports(VariantNoop); !ok {
		t.Error("the generic noop variant should still apply")
	}
}

func TestNoopSetReviewVerdicts(t *testing.T) {
	g := guardOf(t, setProblem)
	for _, c := range []struct {
		verdict    string
		unreviewed bool
		used       bool
	}{{"", false, false}, {"", true, true}, {"dropped", true, false}, {"reworded", false, true}, {"ok", false, true}} {
		withNoopSet(t, fstest.MapFS{"noopset/x.yaml": {Data: []byte(setYAML(g, c.verdict))}}, c.unreviewed)
		ts, err := ParseGSMSymbolic("p/symbolic/0007.json", []byte(setProblem))
		if err != nil {
			t.Fatal(err)
		}
		ok, why := ts[0].Supports(VariantNoopSeeming)
		if ok != c.used {
			t.Errorf("verdict %q (test option %v): noop-seeming supported=%v, want %v (%s)", c.verdict, c.unreviewed, ok, c.used, why)
		}
	}
}

func TestNoopSetBadFiles(t *testing.T) {
	g := guardOf(t, setProblem)
	for _, c := range []struct{ name, yaml, want string }{
		{"unknown field", strings.Replace(setYAML(g, ""), "reason:", "reasn:", 1), `unknown field "reasn"`},
		{"bad guard", setYAML("12", ""), "guard must be the SHA-256"},
		{"no alt", strings.Replace(setYAML(g, ""), "alt_answer: c * j - k", "", 1), "alt_answer is required"},
		{"bad verdict", setYAML(g, "fine"), `verdict "fine"`},
		{"version", strings.Replace(setYAML(g, ""), "version: 1", "version: 2", 1), "version 1"},
		{"syntax", "version: 1\ntemplates: [", "YAML"},
	} {
		s := readNoopSet(fstest.MapFS{"noopset/x.yaml": {Data: []byte(c.yaml)}}, "noopset")
		if len(s.errs) != 1 || !strings.Contains(s.errs[0], c.want) || !strings.HasPrefix(s.errs[0], "x.yaml") {
			t.Errorf("%s: errors %q, want one naming x.yaml with %q", c.name, s.errs, c.want)
		}
	}
	// A clause that does not fit the template is refused with a warning; the
	// template imports.
	for _, c := range []struct{ old, new, want string }{
		{"{k} of the jars", "{q} of the jars", "unknown variable {q}"},
		{"after-sentence-1", "after-sentence-2", "after-sentence-N takes N from 1 to 1"},
		{"k: range(2, 30)", "c: range(2, 30)", "already a variable"},
		{"alt_answer: c * j - k", "alt_answer: c * (", "alt_answer"},
	} {
		withNoopSet(t, fstest.MapFS{"noopset/x.yaml": {Data: []byte(strings.Replace(setYAML(g, "ok"), c.old, c.new, 1))}}, false)
		ts, err := ParseGSMSymbolic("p/symbolic/0007.json", []byte(setProblem))
		if err != nil {
			t.Fatal(err)
		}
		st := ts[0].NoopSetStatus()
		if st.Used != 0 || len(st.Refused) != 1 || !strings.Contains(st.Refused[0], c.want) || !strings.Contains(st.Refused[0], "templates/noopset/x.yaml:") {
			t.Errorf("%s → %s: status %+v %q, want one refusal naming x.yaml with %q", c.old, c.new, st, st.Refused, c.want)
		}
	}
}

func TestNoopSetEmbedded(t *testing.T) {
	s := loadedNoopSet()
	if len(s.errs) > 0 {
		t.Errorf("embedded clause set: %s", strings.Join(s.errs, "\n"))
	}
	if len(s.entries) == 0 {
		t.Fatal("the embedded clause set is empty")
	}
	for id, e := range s.entries {
		if id > 99 {
			t.Errorf("%s:%d: id %d is not a published template's id_shuffled (0-99)", e.file, e.line, id)
		}
		for _, c := range e.clauses {
			if c.verdict == "" && c.reader != "" {
				t.Errorf("%s:%d: a review needs a verdict", e.file, c.line)
			}
		}
	}
}

// clauseDrawStats are the automated checks of one clause over many draws.
type clauseDrawStats struct {
	draws, valid, condFail, sameAlt int
	firstFail                       string
}

// checkClauseDraws draws up to n valid symbolic instances of t (names and
// numbers re-rolled; the base values first; at most 25n tries) and, for each
// valid one, the clause's
// own variables (up to 50 tries for its conditions), and checks that the
// instance stays valid with the clause's values present, that the answer is
// the same with and without them, that the rendered clause and question are
// complete, and whether alt_answer differs from the answer.
func checkClauseDraws(t *Template, c *noopClause, n int, seed int64) clauseDrawStats {
	var st clauseDrawStats
	r := newRand(seed)
	for i := 0; st.draws < n && i < 25*n; i++ {
		vals := t.baseValues()
		if i > 0 {
			var reason string
			vals, reason = t.draw(r, true, true)
			if reason != "" {
				continue
			}
		}
		out := t.evaluate(vals, false)
		if out.reason != "" {
			continue
		}
		st.draws++
		var all map[string]value
		alt := ""
		var err error
		for try := 0; try < 50; try++ {
			var cv map[string]value
			cv, err = drawClause(c, vals, r)
			if err != nil {
				continue
			}
			all = map[string]value{}
			for k, v := range vals {
				all[k] = v
			}
			for k, v := range cv {
				all[k] = v
			}
			if alt, err = c.checkDraw(all); err == nil {
				break
			}
		}
		if err != nil {
			st.condFail++
			if st.firstFail == "" {
				st.firstFail = err.Error()
			}
			continue
		}
		with := t.evaluate(all, false)
		fail := ""
		extra := map[string]*variable{}
		for _, x := range c.vars {
			extra[x.names[0]] = x
		}
		text := t.render(c.text, all, extra)
		q := c.insert(t.render(t.question, vals, nil), text)
		switch {
		case with.reason != "":
			fail = "invalid with the clause's values: " + with.reason
		case with.answer.n.Cmp(out.answer.n) != 0:
			fail = fmt.Sprintf("answer %s with the clause's values, %s without", with.answer, out.answer)
		case strings.ContainsAny(text, "{}") || !strings.Contains(q, text):
			fail = fmt.Sprintf("clause %q not rendered into the question", text)
		}
		if fail != "" {
			if st.firstFail == "" {
				st.firstFail = fail
			}
			continue
		}
		st.valid++
		if s, _ := formatRat(out.answer.n); s == alt {
			st.sameAlt++
		}
	}
	return st
}

// TestNoopSetDevSet runs the automated checks of every clause of the set on
// the GSM-Symbolic development set (200 draws per clause; unreviewed clauses
// included, so that a clause is checked before its review), and generates
// the noop-seeming variant of every template that has clauses.
func TestNoopSetDevSet(t *testing.T) {
	dir := filepath.Join(sharedDir(t), "gsm_symbolic", "symbolic")
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("%s not found (Apple's GSM-Symbolic templates are not part of this repository)", dir)
	}
	draws := 200
	if testing.Short() {
		draws = 20
	}
	withNoopSet(t, nil, true)
	ts, skipped, err := LoadSkipping(dir, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	keyed, withClauses, clauses := 0, 0, 0
	var generated []*Template
	for _, tp := range ts {
		st := tp.NoopSetStatus()
		if st == nil || !st.Keyed {
			continue
		}
		keyed++
		if !st.GuardOK {
			t.Errorf("%s: %s", tp.ID, st)
			continue
		}
		for _, ref := range st.Refused {
			t.Errorf("%s: clause refused: %s", tp.ID, ref)
		}
		any := false
		for _, c := range tp.noops {
			if c.setFile == "" {
				continue
			}
			any = true
			clauses++
			s := checkClauseDraws(tp, c, draws, 11)
			loc := fmt.Sprintf("%s %s:%d", tp.ID, c.setFile, c.line)
			t.Logf("%-34s %3d draws: %3d valid with clause, %3d clause-condition failures, alt_answer = answer on %d", loc, s.draws, s.valid, s.condFail, s.sameAlt)
			switch {
			case s.valid == 0:
				t.Errorf("%s: no valid draw with the clause (%s)", loc, s.firstFail)
			case s.valid+s.condFail < s.draws:
				t.Errorf("%s: %d of %d draws break with the clause: %s", loc, s.draws-s.valid-s.condFail, s.draws, s.firstFail)
			case s.condFail*10 > s.draws:
				t.Errorf("%s: the clause's conditions fail on %d of %d draws (%s)", loc, s.condFail, s.draws, s.firstFail)
			case s.sameAlt*20 > s.valid:
				t.Errorf("%s: alt_answer equals the answer on %d of %d draws", loc, s.sameAlt, s.valid)
			}
		}
		if any {
			withClauses++
			generated = append(generated, tp)
		}
	}
	set, err := Generate(generated, Options{Variants: []Variant{VariantNoopSeeming}, Instances: 3, Seed: 5})
	if err != nil {
		t.Fatalf("noop-seeming on the templates with clauses: %v", err)
	}
	items := map[string]bool{}
	for _, in := range set.Instances {
		if in.Variant == VariantNoopSeeming {
			items[in.TemplateID] = true
			if in.AltAnswer == "" || in.AltAnswer == in.Answer {
				t.Errorf("%s: alt_answer %q, answer %s", in.ID, in.AltAnswer, in.Answer)
			}
		}
	}
	if len(items) != withClauses {
		t.Errorf("noop-seeming items for %d templates, want %d", len(items), withClauses)
	}
	t.Logf("%d templates imported (%d refused), %d keyed in the clause set, %d with clauses (%d clauses), noop-seeming items for %d",
		len(ts), len(skipped), keyed, withClauses, clauses, len(items))
}

// TestNoopSetNoCopiedText checks that no clause repeats a run of eight words
// of its template's question: the set holds our sentences only.
func TestNoopSetNoCopiedText(t *testing.T) {
	dir := filepath.Join(sharedDir(t), "gsm_symbolic", "symbolic")
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("%s not found", dir)
	}
	words := func(s string) []string {
		return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !('a' <= r && r <= 'z' || '0' <= r && r <= '9') })
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	qa := map[int]string{}
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		var f struct {
			ID *int   `json:"id_shuffled"`
			QA string `json:"question_annotated"`
		}
		if json.Unmarshal(data, &f) == nil && f.ID != nil {
			qa[*f.ID] = f.QA
		}
	}
	for id, e := range loadedNoopSet().entries {
		if _, ok := qa[id]; !ok {
			continue
		}
		q := " " + strings.Join(words(qa[id]), " ") + " "
		for _, c := range e.clauses {
			w := words(c.text)
			for i := 0; i+8 <= len(w); i++ {
				if run := " " + strings.Join(w[i:i+8], " ") + " "; strings.Contains(q, run) {
					t.Errorf("%s:%d: clause repeats the template's words %q", e.file, c.line, strings.TrimSpace(run))
					break
				}
			}
		}
	}
}

// TestNoopSetShow prints one noop-seeming question per template of the set
// at base values and at one symbolic draw, for a reader (FRAGILITY_NOOPSET_SHOW=1).
func TestNoopSetShow(t *testing.T) {
	if os.Getenv("FRAGILITY_NOOPSET_SHOW") == "" {
		t.Skip("set FRAGILITY_NOOPSET_SHOW=1 to print the clauses in their questions")
	}
	dir := filepath.Join(sharedDir(t), "gsm_symbolic", "symbolic")
	withNoopSet(t, nil, true)
	ts, _, err := LoadSkipping(dir, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tp := range ts {
		if ok, _ := tp.Supports(VariantNoopSeeming); !ok {
			continue
		}
		set, err := Generate([]*Template{tp}, Options{Variants: []Variant{VariantNoopSeeming}, Instances: 1, Seed: 9})
		if err != nil {
			t.Error(err)
			continue
		}
		for _, in := range set.Instances {
			if in.Variant == VariantNoopSeeming {
				fmt.Printf("%s  answer %s  alt %s\n  %s\n", in.ID, in.Answer, in.AltAnswer, in.Question)
			}
		}
		// the clauses at one symbolic draw
		r := newRand(9)
		for _, c := range tp.noops {
			if c.setFile == "" {
				continue
			}
			for try := 0; try < 100; try++ {
				vals, reason := tp.draw(r, true, true)
				if reason != "" || tp.evaluate(vals, false).reason != "" {
					continue
				}
				cv, err := drawClause(c, vals, r)
				if err != nil {
					continue
				}
				extra := map[string]*variable{}
				for _, x := range c.vars {
					extra[x.names[0]] = x
					vals[x.names[0]] = cv[x.names[0]]
				}
				if _, err := c.checkDraw(vals); err != nil {
					continue
				}
				fmt.Printf("  drawn: %s\n", tp.render(c.text, vals, extra))
				break
			}
		}
		fmt.Println()
	}
}

func TestClauseInsertPositions(t *testing.T) {
	q := "In Mr. Li's class, 4 sit. Dr. Ng has 3 pens. How many?"
	for _, c := range []struct{ pos, want string }{
		{"", "In Mr. Li's class, 4 sit. Dr. Ng has 3 pens. X. How many?"},
		{"before-question", "In Mr. Li's class, 4 sit. Dr. Ng has 3 pens. X. How many?"},
		{"after-sentence-1", "In Mr. Li's class, 4 sit. X. Dr. Ng has 3 pens. How many?"},
		{"start", "X. In Mr. Li's class, 4 sit. Dr. Ng has 3 pens. How many?"},
	} {
		if got, err := clauseInsert(q, "X.", c.pos); err != nil || got != c.want {
			t.Errorf("%q: got %q (%v), want %q", c.pos, got, err, c.want)
		}
	}
	if got, _ := clauseInsert("How many pens does Mrs. Ng have?", "X.", "before-question"); got != "X. How many pens does Mrs. Ng have?" {
		t.Errorf("one-sentence question: %q", got)
	}
	for _, bad := range []string{"after-sentence-3", "after-sentence-0", "middle"} {
		if _, err := clauseInsert(q, "X.", bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestNoopSetCheckSummary(t *testing.T) {
	g := guardOf(t, setProblem)
	dir := t.TempDir()
	other := strings.Replace(setProblem, `"id_shuffled": 7`, `"id_shuffled": 8`, 1)
	changed := strings.Replace(setProblem, `"id_shuffled": 7`, `"id_shuffled": 9`, 1)
	for name, doc := range map[string]string{"a.json": setProblem, "b.json": other, "c.json": changed} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	set := setYAML(g, "ok") + strings.Replace(strings.TrimPrefix(setYAML(strings.Repeat("0", 64), ""), "version: 1\ntemplates:\n"), "id: 7", "id: 9", 1)
	withNoopSet(t, fstest.MapFS{"noopset/x.yaml": {Data: []byte(set)}}, false)
	rs, err := CheckPath(dir, 20, 1)
	if err != nil {
		t.Fatal(err)
	}
	want := "GSM-NoOp clause set: 2 of 3 symbolic templates have clauses, 1 use them (1 clauses for noop-seeming); 1 refused: file differs from the version the clauses were written for"
	if got := NoopSetSummary(rs); got != want {
		t.Errorf("summary\n got %q\nwant %q", got, want)
	}
	for _, r := range rs {
		line := r.String()
		switch r.Template {
		case "gsms-a":
			if !strings.Contains(line, "GSM-NoOp: 1 clause(s), 1 used") || r.Status() != "ok" {
				t.Errorf("a: %s", line)
			}
		case "gsms-b":
			if strings.Contains(line, "GSM-NoOp") || !strings.Contains(line, "noop-seeming n/a") {
				t.Errorf("b: %s", line)
			}
		case "gsms-c":
			if r.Status() != "warn" || !strings.Contains(line, "c.json is not the version") {
				t.Errorf("c: %s", line)
			}
		}
	}
}
