package templates

import (
	"errors"
	"fmt"
	"math/big"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Template is a parametric word problem: variables with domains and base
// (as-authored) values, conditions, an answer expression, the question text
// and, optionally, a paraphrase and no-op clauses. A Template is immutable
// once loaded and safe for concurrent use.
type Template struct {
	ID         string // unique within a load; letters, digits, '_', '-', '.'
	Title      string // short human title
	Relation   string // relation type for stratification, e.g. "two-rate-sale"
	Steps      int    // number of reasoning steps (GSM8K/GSM-Symbolic: calculator annotations in the solution)
	Level      string // difficulty level: "symbolic", "p1" or "p2" for GSM-Symbolic imports; "" for own templates and GSM8K rows
	IDOrig     string // GSM-Symbolic: id_orig, the GSM8K test question the template was made from; "" when not given
	Source     string // file path, or "builtin" (with the file name: "builtin/baker.yaml")
	Line       int    // 1-based line in Source where the template starts; 0 when not known
	Format     string // "own", "gsm-symbolic" or "gsm8k"
	AnswerType string // "integer" or "decimal"

	// AnswerSource is where the answer expression comes from: "" for the
	// template's own (#answer, answer:), AnswerFromAnnotated when a
	// GSM-Symbolic template's #answer misses the original's answer at the
	// base values and answer_annotated's final "#### {expr}", which gives
	// it, is used instead (with a warning in Warnings).
	AnswerSource string

	// Warnings are deviations recorded at import that do not make the
	// template wrong (the check command prints them after "warn"): text that
	// differs from the original question, base values outside a condition,
	// one placeholder written in different words.
	Warnings []string

	vars        []*variable // declaration order; derived values are variables with expr set
	order       []*variable // draw order: each after what it reads (nil: vars)
	conds       []*condition
	answer      *expression
	answerLine  int
	question    *text
	paraphrase  *text
	noops       []*noopClause
	genericNoop bool // noop draws from the generic clause pool (imported templates)
	// genericClash: position in the generic pool → why that clause shares a
	// unit or counted word with this template's question (excluded here).
	genericClash map[int]string
	noopSet      *NoopSetStatus // GSM-Symbolic level symbolic: what the GSM-NoOp clause set gave (noopset.go)
	maxAbs       *big.Rat
	answerSign   string // "positive", "nonnegative" or "any"

	lenientBase  bool                // base values outside a condition give a warning, not an error (GSM-Symbolic)
	baseBroken   map[*condition]bool // conditions the base values break (lenientBase)
	filterDraws  bool                // apply conditions while drawing, in dependency order (GSM-Symbolic)
	origQuestion string              // GSM-Symbolic level symbolic: the original question, which is the base instance
	drawnBase    bool                // the base assignment is a valid draw, not the authored values (GSM-Symbolic p1/p2)
	record       *gsmsRecord         // GSM-Symbolic p1/p2: the original the clauses were added to, kept for the record only

	fixed       bool   // a GSM8K row: only base applies
	fixedAnswer string // its answer, exact decimal

	base       map[string]value // base values of every variable
	baseAnswer value
	baseDivs   map[divKey]bool // exactness of each division at base values

	// determined: the answer reads values the question never states that
	// its conditions fix (determined.go); a draw that leaves them free is
	// invalid. nil for every other template.
	determined *determinedSet
}

// AnswerFromAnnotated is Template.AnswerSource (and TemplateInfo's
// answer_source) for a GSM-Symbolic template whose answer is
// answer_annotated's final "#### {expr}" instead of its #answer.
const AnswerFromAnnotated = "answer_annotated"

// factor is what a variant may re-roll for a variable.
type factor uint8

const (
	factorNone    factor = iota // never changes (fixed by the author)
	factorNames                 // names and entities: the names variant
	factorNumbers               // numbers: the numbers variant
)

func (f factor) String() string {
	switch f {
	case factorNames:
		return "names"
	case factorNumbers:
		return "numbers"
	}
	return "fixed"
}

// variable is one init line or variable spec: one or more names drawn
// together (without repeats), or a derived value computed from earlier ones.
type variable struct {
	names       []string
	draw        *expression // sampled: evaluated with an rng (a domain is sampled once)
	sampler     func(en *env) ([]value, error)
	choices     []value     // own format: the pool or choices drawn from; nil otherwise
	derived     *expression // derived: computed, never drawn
	solve       *expression // drawn variable fixed by an equality condition: computed from the others, kept when in its domain
	solveLine   int         // line of that condition
	dependents  []*variable // computed variables this drawn one completes (drawn in dependency order; see planLocal)
	local       []*conjunct // condition parts this drawn one completes
	pending     []*conjunct // condition parts it takes part in that a later one completes
	factor      factor
	numeric     bool
	base        []value
	baseText    []string // verbatim base text in the question (GSM-Symbolic); "" means format
	decimals    int      // -1: shortest exact decimal; otherwise fixed places
	minDecimals int      // GSM-Symbolic: decimal places of the base text ("1.50": 2); drawn values get as many when exact
	sign        string   // derived numbers: "positive", "nonnegative" or "any"
	integral    bool     // derived number the question states as a whole number (GSM-Symbolic p1/p2): must be an integer
	line        int
	desc        string // domain as written, for templates show

	// span is, in the own format, the range drawn from (min/max/step) at
	// en; nil otherwise.
	span func(en *env) (*domain, error)
}

type condition struct {
	e    *expression
	line int
}

type divKey struct {
	e   *expression
	pos int
}

// text is question text split into literal parts and placeholders.
type text struct {
	parts []textPart
}

type textPart struct {
	lit  string
	ph   string // variable name; "" for a literal
	base string // GSM-Symbolic: this placeholder's verbatim base text
	gsms bool   // GSM-Symbolic placeholder: base text per place, case follows the text
}

// render fills the placeholders. A value equal to its base value is written
// with the verbatim base text when there is one, so that the base instance of
// an imported template reproduces the original question exactly.
//
// A GSM-Symbolic placeholder keeps its own base text (one variable may be
// written "Oats" in one place and "oats" in another), and a drawn value takes
// the case of the place: capitalised where the base text is, or at the start
// of a sentence.
func (t *Template) render(tx *text, vals map[string]value, extra map[string]*variable) string {
	var b strings.Builder
	for _, p := range tx.parts {
		if p.ph == "" {
			b.WriteString(p.lit)
			continue
		}
		s := t.renderVar(p.ph, vals, extra)
		if p.gsms {
			if base, ok := t.base[p.ph]; ok && p.base != "" && !t.drawnBase && sameAsBase(vals[p.ph], base) {
				s = p.base
			} else {
				if startsUpper(p.base) && !isNumeric(vals[p.ph]) {
					s = capitalize(s)
				}
				if prev := b.String(); !sentenceStart(prev) {
					if fixed := fixArticle(prev, s); fixed != prev {
						b.Reset()
						b.WriteString(fixed)
					}
				}
			}
			if sentenceStart(b.String()) {
				s = capitalize(s)
			}
		}
		b.WriteString(s)
	}
	return b.String()
}

// sameAsBase reports whether a drawn value is its variable's base value:
// numbers by exact value, texts in any case ("dad" is the base "Dad"). A
// worded number drawn from a pool is the base only in the same words: the
// base text "three" and the drawn "three times" are different texts.
func sameAsBase(v, base value) bool {
	if v.k == kStr && base.k == kStr {
		return strings.EqualFold(v.s, base.s)
	}
	if v.k == kNum && v.form != "" && !strings.EqualFold(v.form, base.form) {
		return false
	}
	return v.equal(base)
}

// fixArticle makes an article "a"/"an" that ends prev agree with the drawn
// text that follows it ("a 8-sided die" becomes "an 8-sided die").
func fixArticle(prev, next string) string {
	var art string
	switch {
	case strings.HasSuffix(prev, " a ") || prev == "a " || strings.HasSuffix(prev, " A ") || prev == "A ":
		art = prev[len(prev)-2 : len(prev)-1]
	case strings.HasSuffix(prev, " an ") || prev == "an " || strings.HasSuffix(prev, " An ") || prev == "An ":
		art = prev[len(prev)-3 : len(prev)-1]
	default:
		return prev
	}
	want := "a"
	if anBefore(next) {
		want = "an"
	}
	if startsUpper(art) {
		want = capitalize(want)
	}
	return prev[:len(prev)-len(art)-1] + want + " "
}

// anBefore reports whether "an" (not "a") goes before s, by the sound of
// its first word: a vowel letter (not "uni-", "use", "one"), a silent h
// ("hour", "honest"), or a number said with a vowel sound (8, 11, 18, 80-89,
// 800-899, 8000...).
func anBefore(s string) bool {
	w := strings.ToLower(strings.TrimLeft(s, "\"'("))
	if w == "" {
		return false
	}
	if c := w[0]; c >= '0' && c <= '9' {
		digits := strings.FieldsFunc(w, func(r rune) bool { return !(r >= '0' && r <= '9' || r == ',') })[0]
		digits = strings.ReplaceAll(digits, ",", "")
		if digits[0] == '8' {
			return true
		}
		// 11 and 18, alone or leading a group of thousands (11,000; 18,500)
		for _, p := range []string{"11", "18"} {
			if strings.HasPrefix(digits, p) && (len(digits)-2)%3 == 0 {
				return true
			}
		}
		return false
	}
	for _, p := range []string{"uni", "use", "usu", "uti", "ure", "one", "once", "eu", "ewe"} {
		if strings.HasPrefix(w, p) {
			return false
		}
	}
	for _, p := range []string{"hour", "honest", "honor", "honour", "heir"} {
		if strings.HasPrefix(w, p) {
			return true
		}
	}
	return strings.ContainsRune("aeiou", rune(w[0]))
}

func isNumeric(v value) bool { return v.k == kNum && v.form == "" }

func startsUpper(s string) bool {
	for _, r := range s {
		return unicode.IsUpper(r)
	}
	return false
}

// capitalize upper-cases the first letter of s when s starts with a letter.
func capitalize(s string) string {
	for i, r := range s {
		if unicode.IsLower(r) {
			return s[:i] + string(unicode.ToUpper(r)) + s[i+utf8.RuneLen(r):]
		}
		return s
	}
	return s
}

// sentenceStart reports whether text written so far ends where a sentence
// begins: nothing yet, or ". ", "! ", "? " or a line break.
func sentenceStart(prev string) bool {
	p := strings.TrimRight(prev, " ")
	if p == "" {
		return true
	}
	if len(p) == len(prev) && !strings.HasSuffix(p, "\n") {
		return false // no space before the placeholder
	}
	switch p[len(p)-1] {
	case '.', '!', '?', '\n':
		return true
	}
	return false
}

func (t *Template) renderVar(name string, vals map[string]value, extra map[string]*variable) string {
	v := vals[name]
	vr := t.variable(name)
	if vr == nil {
		vr = extra[name]
	}
	if vr != nil {
		i := indexOf(vr.names, name)
		if i < len(vr.baseText) && vr.baseText[i] != "" && i < len(vr.base) && sameAsBase(v, vr.base[i]) {
			return vr.baseText[i]
		}
		if v.k == kNum && vr.decimals >= 0 {
			return formatFixed(v.n, vr.decimals)
		}
		if v.k == kNum && v.form == "" && vr.minDecimals > 0 {
			// as many decimal places as the base text ("$1.50"), when exact
			if s, ok := formatRat(v.n); ok && decimalPlaces(s) <= vr.minDecimals {
				return formatFixed(v.n, vr.minDecimals)
			}
		}
	}
	return v.String()
}

// decimalPlaces counts the digits after the point of a decimal string.
func decimalPlaces(s string) int {
	if _, frac, ok := strings.Cut(s, "."); ok {
		return len(frac)
	}
	return 0
}

func indexOf(names []string, n string) int {
	for i, x := range names {
		if x == n {
			return i
		}
	}
	return 0
}

func (t *Template) variable(name string) *variable {
	for _, v := range t.vars {
		for _, n := range v.names {
			if n == name {
				return v
			}
		}
	}
	return nil
}

// placeholders returns the distinct placeholder names of tx in order.
func (tx *text) placeholders() []string {
	var out []string
	seen := map[string]bool{}
	for _, p := range tx.parts {
		if p.ph != "" && !seen[p.ph] {
			seen[p.ph] = true
			out = append(out, p.ph)
		}
	}
	return out
}

func (tx *text) literal() string {
	var b strings.Builder
	for _, p := range tx.parts {
		b.WriteString(p.lit)
		b.WriteString(" ")
	}
	return b.String()
}

var placeholderRE = regexp.MustCompile(`\{([A-Za-z_][A-Za-z0-9_]*)\}`)

// parseText splits own-format text with {name} placeholders; "{{" and "}}"
// are literal braces. Any other brace is an error.
func parseText(s string) (*text, error) {
	tx := &text{}
	var lit strings.Builder
	for i := 0; i < len(s); {
		switch {
		case strings.HasPrefix(s[i:], "{{"):
			lit.WriteByte('{')
			i += 2
		case strings.HasPrefix(s[i:], "}}"):
			lit.WriteByte('}')
			i += 2
		case s[i] == '{':
			m := placeholderRE.FindStringSubmatchIndex(s[i:])
			if m == nil || m[0] != 0 {
				end := min(len(s), i+20)
				return nil, fmt.Errorf("bad placeholder at %q (write {name}, or {{ for a brace)", s[i:end])
			}
			if lit.Len() > 0 {
				tx.parts = append(tx.parts, textPart{lit: lit.String()})
				lit.Reset()
			}
			tx.parts = append(tx.parts, textPart{ph: s[i+m[2] : i+m[3]]})
			i += m[1]
		case s[i] == '}':
			return nil, errors.New(`unmatched "}" (write }} for a brace)`)
		default:
			lit.WriteByte(s[i])
			i++
		}
	}
	if lit.Len() > 0 {
		tx.parts = append(tx.parts, textPart{lit: lit.String()})
	}
	return tx, nil
}

// baseValues returns a fresh map of every variable's base value.
func (t *Template) baseValues() map[string]value {
	m := make(map[string]value, len(t.base))
	for k, v := range t.base {
		m[k] = v
	}
	return m
}

// outcome is the result of checking one full assignment of values.
type outcome struct {
	answer value
	divs   map[divKey]bool
	reason string // empty when valid
	field  string // the template field the reason is about ("answer"), or ""
}

// evaluate computes derived values (in place) and the answer, and applies
// every validity rule. base is true while computing the base assignment
// itself, when exact divisions are recorded rather than compared.
func (t *Template) evaluate(vals map[string]value, base bool) outcome {
	out := outcome{divs: map[divKey]bool{}}
	en := &env{vars: vals, divs: func(e *expression, pos int, exact bool) {
		k := divKey{e, pos}
		if prev, ok := out.divs[k]; ok {
			exact = exact && prev
		}
		out.divs[k] = exact
	}}
	if out.reason = t.derivedValues(en, vals); out.reason != "" {
		return out
	}
	if out.reason = t.conditionsReason(vals, base); out.reason != "" {
		return out
	}
	if !base && t.determined != nil {
		if out.reason = t.determinedReason(vals); out.reason != "" {
			return out
		}
	}
	ans, err := t.answer.eval(en)
	if err != nil {
		out.reason = fmt.Sprintf("answer: %v", err)
		out.field = "answer"
		return out
	}
	if ans.k != kNum {
		out.reason = fmt.Sprintf("answer %q is a %s, not a number", t.answer.src, ans.kindName())
		out.field = "answer"
		return out
	}
	out.answer = ans
	if t.AnswerType == "integer" && !ans.n.IsInt() {
		out.reason = fmt.Sprintf("answer %s is not an integer (answer type is integer)", ans)
		out.field = "answer"
		return out
	}
	if _, ok := formatRat(ans.n); !ok {
		out.reason = fmt.Sprintf("answer %s has no exact decimal form", ans.n.RatString())
		out.field = "answer"
		return out
	}
	if r := t.checkNumber("answer", ans.n, t.answerSign); r != "" {
		out.reason = r
		return out
	}
	if !base {
		for k, exact := range t.baseDivs {
			if now, ok := out.divs[k]; exact && ok && !now {
				out.reason = fmt.Sprintf("division in %q was exact at base values and is not exact here", k.e.src)
				return out
			}
		}
		if r := t.nameCollision(vals); r != "" {
			out.reason = r
			return out
		}
	}
	return out
}

// derivedValues computes the derived values in draw order into vals and
// checks each against its sign and, when the question states it as a whole
// number, integrality; it returns the first reason a value fails, or "".
func (t *Template) derivedValues(en *env, vals map[string]value) string {
	for _, v := range t.drawOrder() {
		if v.derived == nil {
			continue
		}
		x, err := v.derived.eval(en)
		if err != nil {
			return fmt.Sprintf("%s: %v", v.names[0], err)
		}
		vals[v.names[0]] = x
		if x.k == kNum {
			if r := t.checkNumber("derived value "+v.names[0], x.n, v.sign); r != "" {
				return r
			}
			if v.integral && !x.n.IsInt() {
				return fmt.Sprintf("derived value %s is %s; the question states it as a whole number", v.names[0], x)
			}
		}
	}
	return ""
}

// conditionsReason is the first condition that vals break (or cannot
// evaluate), or "". Exempt conditions are skipped for draws; while computing
// a lenient base assignment no condition is checked.
func (t *Template) conditionsReason(vals map[string]value, base bool) string {
	condEnv := &env{vars: vals} // conditions are not subject to the exact-division rule
	for _, c := range t.conds {
		if base && t.lenientBase {
			break // finish records conditions that the base values break
		}
		if !base && t.exempt(c, vals) {
			continue
		}
		ok, err := c.e.evalBool(condEnv)
		if err != nil {
			return fmt.Sprintf("condition %q (line %d): %v", c.e.src, c.line, err)
		}
		if !ok {
			return fmt.Sprintf("condition %q (line %d) is false", c.e.src, c.line)
		}
	}
	return ""
}

// checkNumber applies the sign and size rules to a quantity.
func (t *Template) checkNumber(what string, x *big.Rat, sign string) string {
	switch sign {
	case "positive", "":
		if x.Sign() <= 0 {
			return fmt.Sprintf("%s is %s; it must be positive", what, numV(x))
		}
	case "nonnegative":
		if x.Sign() < 0 {
			return fmt.Sprintf("%s is %s; it must not be negative", what, numV(x))
		}
	}
	if t.maxAbs != nil && new(big.Rat).Abs(x).Cmp(t.maxAbs) > 0 {
		return fmt.Sprintf("%s %s is larger than the template's limit %s", what, numV(x), numV(t.maxAbs))
	}
	return ""
}

// nameCollision rejects draws in which two names or entities that differ at
// base values became the same (two people both called Maria).
func (t *Template) nameCollision(vals map[string]value) string {
	seen := map[string]string{}
	for _, v := range t.vars {
		if v.factor != factorNames {
			continue
		}
		for i, n := range v.names {
			x := vals[n]
			if x.k != kStr {
				continue
			}
			if other, ok := seen[x.s]; ok && !t.base[other].equal(v.base[i]) {
				return fmt.Sprintf("%s and %s are both %q", other, n, x.s)
			}
			seen[x.s] = n
		}
	}
	return ""
}

// finish computes the base assignment and checks it: a template whose base
// values break a rule is an error. expect, when non-nil, is the answer the
// source states for the base values.
func (t *Template) finish(expect *big.Rat) error {
	t.base = map[string]value{}
	for _, v := range t.vars {
		for i, n := range v.names {
			if i < len(v.base) {
				t.base[n] = v.base[i]
			}
		}
	}
	t.determined = nil
	ds, err := t.statedCheck()
	if err != nil {
		return err
	}
	if ds != nil {
		// The base values first: a value they leave free is refused as
		// such, before the base answer it gives is judged.
		if alt, _, tooMany := t.otherFit(ds, t.baseValues()); alt != "" || tooMany {
			return t.checkDetermined(ds)
		}
	}
	vals := t.baseValues()
	out := t.evaluate(vals, true)
	if out.reason != "" {
		return &baseError{reason: out.reason, field: out.field}
	}
	t.base = vals
	t.baseAnswer = out.answer
	t.baseDivs = out.divs
	t.checkNoopUnits()
	if expect != nil && out.answer.n.Cmp(expect) != 0 {
		return &answerMismatch{src: t.answer.src, got: out.answer, want: numV(expect)}
	}
	if t.lenientBase {
		en := &env{vars: vals}
		for _, c := range t.conds {
			ok, err := c.e.evalBool(en)
			switch {
			case err != nil:
				if t.baseBroken == nil {
					t.baseBroken = map[*condition]bool{}
				}
				t.baseBroken[c] = true
				t.Warnings = append(t.Warnings, fmt.Sprintf("condition %q (line %d) cannot be evaluated at base values (%v); conditions constrain new draws only", c.e.src, c.line, err))
			case !ok:
				if t.baseBroken == nil {
					t.baseBroken = map[*condition]bool{}
				}
				t.baseBroken[c] = true
				t.Warnings = append(t.Warnings, fmt.Sprintf("base values are outside condition %q (line %d); conditions constrain new draws only", c.e.src, c.line))
			}
		}
	}
	if ds != nil {
		return t.checkDetermined(ds)
	}
	return nil
}

// baseError is finish's error for base values that break a rule; field is
// the template field it is about ("answer"), or "" (a loader then names
// the template).
type baseError struct {
	reason, field string
}

func (e *baseError) Error() string { return "at base values: " + e.reason }

// Field is the template field the error is about, or "".
func (e *baseError) Field() string { return e.field }

// answerMismatch is finish's error for an answer expression that does not
// give the stated answer at the base values.
type answerMismatch struct {
	src       string
	got, want value
}

// Field is "expect": the stated answer the expression does not give.
func (e *answerMismatch) Field() string { return "expect" }

func (e *answerMismatch) Error() string {
	return fmt.Sprintf("answer %q gives %s at base values, but the stated answer is %s", e.src, e.got, e.want)
}

// drawOrder is the order in which variables are drawn and computed.
func (t *Template) drawOrder() []*variable {
	if t.order != nil {
		return t.order
	}
	return t.vars
}

// BaseQuestion returns the question at base (as-authored) values: for a
// GSM-Symbolic template of level symbolic, the original question verbatim.
func (t *Template) BaseQuestion() string {
	if t.fixed {
		return t.question.parts[0].lit
	}
	if t.origQuestion != "" {
		return t.origQuestion
	}
	return t.render(t.question, t.base, nil)
}

// BaseAnswer returns the exact answer at base values as a decimal string.
func (t *Template) BaseAnswer() string {
	if t.fixed {
		return t.fixedAnswer
	}
	s, _ := formatRat(t.baseAnswer.n)
	return s
}

// Supports reports whether variant v can be generated from the template, and
// if not, why.
func (t *Template) Supports(v Variant) (bool, string) {
	if t.fixed && v != VariantBase {
		return false, fmt.Sprintf("not applicable: %s is a fixed %s item; only base applies", t.ID, t.Format)
	}
	var hasNames, hasNumbers bool
	for _, x := range t.vars {
		if x.derived != nil {
			continue
		}
		hasNames = hasNames || x.factor == factorNames
		hasNumbers = hasNumbers || x.factor == factorNumbers
	}
	switch v {
	case VariantNames:
		if !hasNames {
			return false, "not applicable: the template has no name or entity variable"
		}
	case VariantNumbers:
		if !hasNumbers {
			return false, "not applicable: the template has no number variable"
		}
	case VariantSymbolic:
		if !hasNames && !hasNumbers {
			return false, "not applicable: the template has no variable"
		}
	case VariantParaphrase:
		if t.paraphrase == nil {
			return false, "not applicable: the template has no paraphrase"
		}
	case VariantNoop, VariantNoopSeeming:
		if pool, _ := t.noopPool(v); len(pool) == 0 {
			return false, "not applicable: " + t.noNoopReason(v)
		}
	}
	return true, ""
}

var idRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$`)

// relationRE is the shape of a relation type: a lowercase slug.
var relationRE = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)
