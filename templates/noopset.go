package templates

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"
	"sync"

	"gopkg.in/yaml.v3"
)

// The GSM-NoOp clause set: noop-seeming clauses (Mirzadeh et al., 2024,
// §4.4) written for this project for the published GSM-Symbolic templates,
// shipped as data in noopset/*.yaml and attached at import to a template of
// level symbolic whose id_shuffled they name. The files hold only our
// sentences and references (ids, variable names, positions); Apple's text is
// read at run time from the user's own copy of the folder. A clause is
// guarded by the SHA-256 of the template's question_annotated field (the
// decoded JSON string's UTF-8 bytes): a file that differs from the version
// the clauses were written for keeps importing, without them, and says so in
// one warning. Only clauses whose second reader's verdict is ok or reworded
// are used. See noopset/README.md for the format.

//go:embed noopset/*.yaml
var noopSetFS embed.FS

// noopSetSource is the embedded folder as the package names it in messages.
const noopSetSource = "templates/noopset"

// noopSetUnreviewed makes attachNoopSet use clauses that have no review
// verdict yet. Tests set it to check clauses before their review; the
// product never does.
var noopSetUnreviewed = false

// noopSetEntry is one template's entry in the clause set.
type noopSetEntry struct {
	id      int
	guard   string
	file    string // e.g. "gsm_symbolic_noop_a.yaml"
	line    int
	clauses []noopSetClause
}

// noopSetClause is one clause as written in the set.
type noopSetClause struct {
	line       int
	text       string
	position   string
	vars       [][2]string // name, expression, in file order
	varLines   []int
	conditions []string
	reason     string
	alt        string
	reader     string
	verdict    string // "", ok, reworded or dropped
}

// usedVerdict reports whether a review verdict lets the clause be used.
func usedVerdict(v string) bool { return v == "ok" || v == "reworded" }

type noopSet struct {
	entries map[int]*noopSetEntry
	errs    []string // file:line: what is wrong (a bad entry is left out)
}

var (
	noopSetOnce   sync.Once
	noopSetLoaded *noopSet
)

// loadedNoopSet reads the embedded clause set once.
func loadedNoopSet() *noopSet {
	noopSetOnce.Do(func() {
		noopSetLoaded = readNoopSet(noopSetFS, "noopset")
	})
	return noopSetLoaded
}

// readNoopSet reads every *.yaml of dir in fsys, in name order. An entry
// whose id appears in an earlier file or entry is left out with an error.
func readNoopSet(fsys fs.FS, dir string) *noopSet {
	s := &noopSet{entries: map[int]*noopSetEntry{}}
	names, err := fs.Glob(fsys, path.Join(dir, "*.yaml"))
	if err != nil {
		s.errs = append(s.errs, fmt.Sprintf("%s: %v", noopSetSource, err))
		return s
	}
	sort.Strings(names)
	for _, name := range names {
		data, err := fs.ReadFile(fsys, name)
		if err != nil {
			s.errs = append(s.errs, fmt.Sprintf("%s: %v", name, err))
			continue
		}
		entries, errs := parseNoopSetFile(path.Base(name), data)
		s.errs = append(s.errs, errs...)
		for _, e := range entries {
			if prev, ok := s.entries[e.id]; ok {
				s.errs = append(s.errs, fmt.Sprintf("%s:%d: template id %d already has an entry at %s:%d; this one is left out",
					e.file, e.line, e.id, prev.file, prev.line))
				continue
			}
			s.entries[e.id] = e
		}
	}
	return s
}

// yamlKeys checks that a mapping node has only the allowed keys and returns
// them by name.
func yamlKeys(file string, n *yaml.Node, what string, allowed ...string) (map[string]*yaml.Node, error) {
	if n.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("%s:%d: %s must be a mapping", file, n.Line, what)
	}
	out := map[string]*yaml.Node{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i].Value
		ok := false
		for _, a := range allowed {
			ok = ok || a == k
		}
		if !ok {
			return nil, fmt.Errorf("%s:%d: %s: unknown field %q (known: %s)", file, n.Content[i].Line, what, k, strings.Join(allowed, ", "))
		}
		if _, dup := out[k]; dup {
			return nil, fmt.Errorf("%s:%d: %s: field %q given twice", file, n.Content[i].Line, what, k)
		}
		out[k] = n.Content[i+1]
	}
	return out, nil
}

// yamlString reads a scalar field; "" when absent or null.
func yamlString(file string, n *yaml.Node, what string) (string, error) {
	if n == nil || n.Tag == "!!null" {
		return "", nil
	}
	if n.Kind != yaml.ScalarNode {
		return "", fmt.Errorf("%s:%d: %s must be a single value", file, n.Line, what)
	}
	return n.Value, nil
}

// parseNoopSetFile reads one clause-set file. A malformed entry or clause is
// reported and left out; the rest is kept.
func parseNoopSetFile(file string, data []byte) ([]*noopSetEntry, []string) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, []string{fmt.Sprintf("%s: YAML: %v", file, err)}
	}
	if len(doc.Content) == 0 {
		return nil, []string{fmt.Sprintf("%s: empty file", file)}
	}
	top, err := yamlKeys(file, doc.Content[0], "clause set", "version", "templates")
	if err != nil {
		return nil, []string{err.Error()}
	}
	if v, _ := yamlString(file, top["version"], "version"); v != "1" {
		return nil, []string{fmt.Sprintf("%s: version %q: this fragility reads clause-set version 1", file, v)}
	}
	ts := top["templates"]
	if ts == nil || ts.Kind != yaml.SequenceNode {
		return nil, []string{fmt.Sprintf("%s: templates must be a list", file)}
	}
	var out []*noopSetEntry
	var errs []string
	for _, tn := range ts.Content {
		e, err := parseNoopSetEntry(file, tn)
		if err != nil {
			errs = append(errs, err.Error())
			continue
		}
		out = append(out, e)
	}
	return out, errs
}

func parseNoopSetEntry(file string, n *yaml.Node) (*noopSetEntry, error) {
	f, err := yamlKeys(file, n, "template entry", "id", "guard", "clauses")
	if err != nil {
		return nil, err
	}
	e := &noopSetEntry{file: file, line: n.Line}
	ids, _ := yamlString(file, f["id"], "id")
	if e.id, err = strconv.Atoi(ids); err != nil || e.id < 0 {
		return nil, fmt.Errorf("%s:%d: template entry: id %q must be a template's id_shuffled (an integer ≥ 0)", file, n.Line, ids)
	}
	e.guard, _ = yamlString(file, f["guard"], "guard")
	if _, err := hex.DecodeString(e.guard); err != nil || len(e.guard) != 64 {
		return nil, fmt.Errorf("%s:%d: template %d: guard must be the SHA-256 (64 hex digits) of question_annotated", file, n.Line, e.id)
	}
	e.guard = strings.ToLower(e.guard)
	cs := f["clauses"]
	if cs == nil || cs.Kind != yaml.SequenceNode || len(cs.Content) == 0 {
		return nil, fmt.Errorf("%s:%d: template %d: clauses must be a non-empty list", file, n.Line, e.id)
	}
	for _, cn := range cs.Content {
		c, err := parseNoopSetClause(file, cn)
		if err != nil {
			return nil, fmt.Errorf("%v (template %d)", err, e.id)
		}
		e.clauses = append(e.clauses, c)
	}
	return e, nil
}

func parseNoopSetClause(file string, n *yaml.Node) (noopSetClause, error) {
	c := noopSetClause{line: n.Line}
	f, err := yamlKeys(file, n, "clause", "text", "position", "vars", "conditions", "reason", "alt_answer", "review")
	if err != nil {
		return c, err
	}
	for _, s := range []struct {
		key string
		dst *string
	}{{"text", &c.text}, {"position", &c.position}, {"reason", &c.reason}, {"alt_answer", &c.alt}} {
		if *s.dst, err = yamlString(file, f[s.key], s.key); err != nil {
			return c, err
		}
		*s.dst = strings.TrimSpace(*s.dst)
	}
	for _, req := range []struct{ key, val string }{{"text", c.text}, {"reason", c.reason}, {"alt_answer", c.alt}} {
		if req.val == "" {
			return c, fmt.Errorf("%s:%d: clause: %s is required", file, n.Line, req.key)
		}
	}
	if strings.ContainsAny(c.reason, "\n\r{}") {
		return c, fmt.Errorf("%s:%d: clause: reason must be one line of plain text (it is not filled in)", file, n.Line)
	}
	if v := f["vars"]; v != nil && v.Tag != "!!null" {
		if v.Kind != yaml.MappingNode {
			return c, fmt.Errorf("%s:%d: clause: vars must map names to expressions", file, v.Line)
		}
		for i := 0; i+1 < len(v.Content); i += 2 {
			val, err := yamlString(file, v.Content[i+1], "vars."+v.Content[i].Value)
			if err != nil {
				return c, err
			}
			c.vars = append(c.vars, [2]string{v.Content[i].Value, val})
			c.varLines = append(c.varLines, v.Content[i].Line)
		}
	}
	if v := f["conditions"]; v != nil && v.Tag != "!!null" {
		if v.Kind != yaml.SequenceNode {
			return c, fmt.Errorf("%s:%d: clause: conditions must be a list", file, v.Line)
		}
		for _, x := range v.Content {
			s, err := yamlString(file, x, "condition")
			if err != nil {
				return c, err
			}
			c.conditions = append(c.conditions, s)
		}
	}
	if v := f["review"]; v != nil && v.Tag != "!!null" {
		rf, err := yamlKeys(file, v, "review", "reader", "verdict", "note")
		if err != nil {
			return c, err
		}
		c.reader, _ = yamlString(file, rf["reader"], "reader")
		c.verdict, _ = yamlString(file, rf["verdict"], "verdict")
		switch c.verdict {
		case "", "ok", "reworded", "dropped":
		default:
			return c, fmt.Errorf("%s:%d: review verdict %q: ok, reworded or dropped", file, v.Line, c.verdict)
		}
		if c.verdict != "" && c.reader == "" {
			return c, fmt.Errorf("%s:%d: review: a verdict needs the reader who gave it", file, v.Line)
		}
	}
	return c, nil
}

// NoopSetStatus says what the GSM-NoOp clause set gave one imported
// template (see noopset/README.md).
type NoopSetStatus struct {
	Keyed    bool     // the set has an entry for the template's id_shuffled
	GuardOK  bool     // the template's question_annotated has the SHA-256 the entry was written for
	Clauses  int      // clauses in the entry
	Used     int      // of which attached: reviewed (ok or reworded) and well-formed for this template
	Pending  int      // of which not yet reviewed
	Dropped  int      // of which dropped by the reviewer
	Refused  []string // of which refused for this template: "file:line: why"
	Location string   // the entry, as "file:line"
}

// NoopSetStatus returns what the GSM-NoOp clause set gave the template; nil
// for a template that is not a GSM-Symbolic import of level symbolic.
func (t *Template) NoopSetStatus() *NoopSetStatus { return t.noopSet }

// noopSetPositions are the accepted insertion points besides after-sentence-N.
const (
	posBeforeQuestion = "before-question"
	posStart          = "start"
	posAfterSentence  = "after-sentence-"
)

// attachNoopSet attaches the set's clauses for the template with the given
// id_shuffled, when its question_annotated (annotated) has the entry's
// guard. Problems are recorded in the status and, for a guard mismatch or a
// clause that does not fit the template, as one warning line each; the
// template itself always imports.
func attachNoopSet(t *Template, idShuffled, annotated string) {
	st := &NoopSetStatus{}
	t.noopSet = st
	id, err := strconv.Atoi(strings.TrimSpace(idShuffled))
	if err != nil {
		return
	}
	set := loadedNoopSet()
	e := set.entries[id]
	if e == nil {
		return
	}
	st.Keyed, st.Clauses, st.Location = true, len(e.clauses), fmt.Sprintf("%s/%s:%d", noopSetSource, e.file, e.line)
	sum := sha256.Sum256([]byte(annotated))
	if got := hex.EncodeToString(sum[:]); got != e.guard {
		t.Warnings = append(t.Warnings, fmt.Sprintf(
			"GSM-NoOp clause set: %s is not the version its clauses were written for (question_annotated SHA-256 %.12s…, %s expects %.12s…); its %d clause(s) are not used",
			t.Source, got, st.Location, e.guard, len(e.clauses)))
		return
	}
	st.GuardOK = true
	for _, sc := range e.clauses {
		switch {
		case sc.verdict == "dropped":
			st.Dropped++
			continue
		case sc.verdict == "":
			st.Pending++
			if !noopSetUnreviewed {
				continue
			}
		}
		c, err := t.compileSetClause(e.file, sc)
		if err != nil {
			st.Refused = append(st.Refused, err.Error())
			t.Warnings = append(t.Warnings, "GSM-NoOp clause set: "+err.Error()+"; the clause is not used")
			continue
		}
		t.noops = append(t.noops, c)
		st.Used++
	}
}

// compileSetClause builds the noop-seeming clause sc for template t: its
// text, own variables (names must not be the template's), conditions and
// alternative answer, checked against the template's variables and its base
// question.
func (t *Template) compileSetClause(file string, sc noopSetClause) (*noopClause, error) {
	loc := fmt.Sprintf("%s/%s:%d", noopSetSource, file, sc.line)
	tx, err := parseText(sc.text)
	if err != nil {
		return nil, fmt.Errorf("%s: text: %v", loc, err)
	}
	if s := strings.TrimSpace(sc.text); !strings.ContainsAny(s[len(s)-1:], ".!") {
		return nil, fmt.Errorf("%s: text must be a sentence ending in '.' or '!'", loc)
	}
	c := &noopClause{text: tx, kind: NoopSeeming, reason: sc.reason, reviewed: true, line: sc.line,
		flag: flagWord(tx.literal()), position: sc.position, setFile: file}
	own := map[string]bool{}
	for i, v := range sc.vars {
		name, src := v[0], v[1]
		if !identRE.MatchString(name) {
			return nil, fmt.Errorf("%s/%s:%d: vars: %q is not a variable name", noopSetSource, file, sc.varLines[i], name)
		}
		if t.variable(name) != nil || own[name] {
			return nil, fmt.Errorf("%s/%s:%d: vars: %s is already a variable of the template", noopSetSource, file, sc.varLines[i], name)
		}
		e, err := compileExpr(src)
		if err != nil {
			return nil, fmt.Errorf("%s/%s:%d: vars: %s = %s: %v", noopSetSource, file, sc.varLines[i], name, src, err)
		}
		own[name] = true
		c.vars = append(c.vars, &variable{names: []string{name}, draw: e, factor: factorNone, decimals: -1, line: sc.varLines[i], desc: src})
	}
	for _, ph := range tx.placeholders() {
		if !own[ph] && t.variable(ph) == nil {
			return nil, fmt.Errorf("%s: text: unknown variable {%s}", loc, ph)
		}
	}
	for _, s := range sc.conditions {
		e, err := compileExpr(s)
		if err != nil {
			return nil, fmt.Errorf("%s: condition %q: %v", loc, s, err)
		}
		c.conds = append(c.conds, e)
	}
	if c.alt, err = compileExpr(sc.alt); err != nil {
		return nil, fmt.Errorf("%s: alt_answer %q: %v", loc, sc.alt, err)
	}
	if _, err := clauseInsert(t.BaseQuestion(), "X.", sc.position); err != nil {
		return nil, fmt.Errorf("%s: %v", loc, err)
	}
	return c, nil
}

// checkDraw applies the clause's conditions to all (the template's values
// and the clause's own) and returns its alternative answer there as an exact
// decimal ("p/q" when it has none); "" when the clause has none (an
// irrelevant clause, or an own template's seeming clause without alt_answer).
func (c *noopClause) checkDraw(all map[string]value) (string, error) {
	en := &env{vars: all}
	for _, e := range c.conds {
		ok, err := e.evalBool(en)
		if err != nil {
			return "", fmt.Errorf("condition %q: %v", e.src, err)
		}
		if !ok {
			return "", fmt.Errorf("condition %q is false", e.src)
		}
	}
	if c.alt == nil {
		return "", nil
	}
	v, err := c.alt.eval(en)
	if err != nil {
		return "", fmt.Errorf("alt_answer %q: %v", c.alt.src, err)
	}
	if v.k != kNum {
		return "", fmt.Errorf("alt_answer %q is a %s, not a number", c.alt.src, v.kindName())
	}
	if s, ok := formatRat(v.n); ok {
		return s, nil
	}
	return v.n.RatString(), nil
}

// sentenceEnds returns the byte offsets just after each sentence of q: a
// '.', '!' or '?' followed by white space (a period ending a title such as
// "Mr." or "Dr." does not end a sentence), and the end of the text.
func sentenceEnds(q string) []int {
	end := len(strings.TrimRight(q, " \n"))
	var out []int
	for i := 0; i < end-1; i++ {
		c := q[i]
		if (c == '.' || c == '!' || c == '?') && (q[i+1] == ' ' || q[i+1] == '\n') {
			if c == '.' && isTitle(q[:i]) {
				continue
			}
			out = append(out, i+1)
		}
	}
	return append(out, end)
}

// isTitle reports whether s ends with a title written with a period (Mr, Mrs,
// Ms, Dr, St) as a word of its own.
func isTitle(s string) bool {
	for _, t := range []string{"Mr", "Mrs", "Ms", "Dr", "St"} {
		if strings.HasSuffix(s, t) && (len(s) == len(t) || !isLetter(s[len(s)-len(t)-1])) {
			return true
		}
	}
	return false
}

func isLetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

// clauseInsert puts clause into q at position: "before-question" (or "":
// before the final sentence; in front of a one-sentence question), "start",
// or "after-sentence-N"
// (after the N-th sentence, 1-based, which must not be the last: the question
// stays last).
func clauseInsert(q, clause, position string) (string, error) {
	switch {
	case position == "" || position == posBeforeQuestion:
		ends := sentenceEnds(q)
		if len(ends) == 1 {
			return clause + " " + strings.TrimLeft(q, " \n"), nil
		}
		return clauseInsert(q, clause, fmt.Sprintf("%s%d", posAfterSentence, len(ends)-1))
	case position == posStart:
		return clause + " " + strings.TrimLeft(q, " \n"), nil
	case strings.HasPrefix(position, posAfterSentence):
		n, err := strconv.Atoi(strings.TrimPrefix(position, posAfterSentence))
		ends := sentenceEnds(q)
		if err != nil || n < 1 || n >= len(ends) {
			return "", fmt.Errorf("position %q: the question has %d sentences; after-sentence-N takes N from 1 to %d", position, len(ends), len(ends)-1)
		}
		cut := ends[n-1]
		rest := strings.TrimLeft(q[cut:], " ")
		sep := q[cut : len(q)-len(rest)]
		if sep == "" {
			sep = " "
		}
		return q[:cut] + " " + clause + sep + rest, nil
	}
	return "", fmt.Errorf("position %q: before-question, start or after-sentence-N", position)
}

// insert puts the rendered clause into q at the clause's position; a
// clause of an own template or of the generic pool goes before the final
// sentence as insertNoop puts it (unchanged, so their sets stay the same).
func (c *noopClause) insert(q, clause string) string {
	if c.setFile == "" {
		return insertNoop(q, clause)
	}
	out, err := clauseInsert(q, clause, c.position)
	if err != nil {
		return insertNoop(q, clause) // positions are checked when the clause is attached
	}
	return out
}

// noopSetReason says why a GSM-Symbolic template has no noop-seeming clause.
func (t *Template) noopSetReason() string {
	st := t.noopSet
	switch {
	case st == nil || !st.Keyed:
		return "the GSM-NoOp clause set has no clause for this template"
	case !st.GuardOK:
		return "the template file is not the version the GSM-NoOp clause set was written for (see its warning)"
	case st.Pending > 0 && st.Used == 0 && len(st.Refused) == 0:
		return fmt.Sprintf("the GSM-NoOp clause set's %d clause(s) for this template are not yet reviewed", st.Pending)
	}
	return fmt.Sprintf("no clause of the GSM-NoOp clause set for this template is usable (%d dropped, %d not reviewed, %d refused)",
		st.Dropped, st.Pending, len(st.Refused))
}

// String is a short account: "3 clauses, 2 used, 1 not reviewed".
func (s *NoopSetStatus) String() string {
	switch {
	case s == nil || !s.Keyed:
		return "no GSM-NoOp clauses"
	case !s.GuardOK:
		return fmt.Sprintf("GSM-NoOp clauses refused (file differs from %s)", s.Location)
	}
	out := fmt.Sprintf("GSM-NoOp: %d clause(s), %d used", s.Clauses, s.Used)
	if s.Pending > 0 {
		out += fmt.Sprintf(", %d not reviewed", s.Pending)
	}
	if s.Dropped > 0 {
		out += fmt.Sprintf(", %d dropped", s.Dropped)
	}
	if len(s.Refused) > 0 {
		out += fmt.Sprintf(", %d refused", len(s.Refused))
	}
	return out
}

// NoopSetSummary is the clause-set line of a check: of the GSM-Symbolic
// templates of level symbolic checked, how many have clauses in the set, how
// many of those use at least one, and how many were refused by the guard;
// "" when none of the checked templates has an entry in the set.
func NoopSetSummary(rs []CheckResult) string {
	var n, keyed, used, guard, clauses, pending int
	for _, r := range rs {
		if r.NoopSet == nil {
			continue
		}
		n++
		if r.NoopSet.Keyed {
			keyed++
			if !r.NoopSet.GuardOK {
				guard++
			}
		}
		if r.NoopSet.Used > 0 {
			used++
		}
		clauses += r.NoopSet.Used
		pending += r.NoopSet.Pending
	}
	if keyed == 0 {
		return "" // no template of the set was checked
	}
	s := fmt.Sprintf("GSM-NoOp clause set: %d of %d symbolic templates have clauses, %d use them (%d clauses for noop-seeming)", keyed, n, used, clauses)
	if guard > 0 {
		s += fmt.Sprintf("; %d refused: file differs from the version the clauses were written for", guard)
	}
	if pending > 0 {
		s += fmt.Sprintf("; %d clauses await review", pending)
	}
	if errs := loadedNoopSet().errs; len(errs) > 0 {
		s += "; clause-set errors: " + strings.Join(errs, "; ")
	}
	return s
}

// describeNoopSet lists the clause-set clauses attached to the template, for
// Describe; "" when none.
func (t *Template) describeNoopSet() string {
	var b strings.Builder
	if t.noopSet != nil && t.noopSet.Keyed {
		fmt.Fprintf(&b, "GSM-NoOp clause set (%s): %s\n", t.noopSet.Location, t.noopSet)
	}
	for _, c := range t.noops {
		if c.setFile == "" {
			continue
		}
		pos := c.position
		if pos == "" {
			pos = posBeforeQuestion
		}
		fmt.Fprintf(&b, "  seeming    %s  [%s; %s/%s:%d; alt_answer %s; reviewed: %s]\n", c.text.source(), pos, noopSetSource, c.setFile, c.line, c.alt.src, c.reason)
	}
	return b.String()
}
