package templates

import (
	"fmt"
	"sort"
	"strings"
)

// gsmsRecord is the GSM8K original of a GSM-Symbolic p1/p2 template, as its
// file gives it: question, final answer and each placeholder's default text.
// It is kept for the record (templates show) and used for nothing else: the
// added clauses change the problem, so the original's values are not an
// instance of it.
type gsmsRecord struct {
	question string
	answer   string            // the text after "####"; "" when absent
	defaults map[string]string // variable → first default text in the annotation
}

// anchorTries bounds the draws tried for the base assignment of a template
// whose authored values are not an instance of it; checkDraws is the number
// of valid draws on which its two answer expressions are compared, tried
// for in at most checkTries draws (a draw of a template with wide domains
// and many conditions costs milliseconds, and every load does this).
const (
	anchorTries = DefaultMaxDraws
	checkDraws  = 50
	checkTries  = 4 * checkDraws
)

// finishDrawn sets the base assignment of a template whose authored values
// are for the record only (GSM-Symbolic p1/p2): the first draw, from a seed
// fixed by the template ID, that satisfies every condition and every validity
// rule (answer not negative, integral when the answer type says so, derived
// values within their rules), with no two name variables equal. When the
// answer type is integer and only the integrality of the answer keeps every
// draw out, the answer type becomes decimal, with a warning. The variants
// pair with this assignment as they pair with authored base values elsewhere.
// Divisions are not required to stay exact (no authored values say which
// are). It refuses a template whose answer reads a variable the question
// never states and its conditions do not fix (checkDetermined), and one
// with no valid draw in anchorTries draws (naming the most frequent reason).
func (t *Template) finishDrawn() error {
	t.determined = nil
	ds, err := t.statedCheck()
	if err != nil {
		return err
	}
	if err := t.searchDrawnBase(); err != nil {
		return err
	}
	if ds != nil {
		return t.checkDetermined(ds)
	}
	return nil
}

// searchDrawnBase is finishDrawn's search for the base assignment, with
// the answer type's fallback to decimal.
func (t *Template) searchDrawnBase() error {
	err := t.searchBase()
	if err != nil && t.AnswerType == "integer" {
		// No valid draw gives a whole number although the original's
		// answer is one: when draws valid but for that exist, the added
		// clauses ask for a quantity that is not whole (a price with
		// cents), so the answer is a decimal.
		t.AnswerType = "decimal"
		if err2 := t.searchBase(); err2 == nil {
			t.Warnings = append(t.Warnings, fmt.Sprintf("no draw in %d gives a whole-number answer, as the original's does; answers are decimals", anchorTries))
			return nil
		}
		t.AnswerType = "integer"
	}
	return err
}

// searchBase is finishDrawn's search for the base assignment.
func (t *Template) searchBase() error {
	t.base = map[string]value{} // no draw equals an empty base: every one counts as changed
	r := newRand(deriveSeed(0, t.ID, "anchor", 0))
	counts := map[string]int{}
	for d := 0; d < anchorTries; d++ {
		vals, reason := t.draw(r, true, true)
		var out outcome
		if reason == "" {
			out = t.evaluate(vals, true)
			reason = out.reason
		}
		if reason == "" {
			reason = sameNames(t, vals)
		}
		if reason != "" {
			counts[reason]++
			continue
		}
		t.base, t.baseAnswer, t.baseDivs = vals, out.answer, map[divKey]bool{}
		for _, x := range t.vars {
			x.base = x.base[:0]
			for _, n := range x.names {
				x.base = append(x.base, vals[n])
			}
			x.baseText = nil // the original's words; the drawn values are written as drawn
		}
		t.checkNoopUnits()
		return nil
	}
	reason, n := mostFrequent(counts)
	return fmt.Errorf("no draw satisfies the conditions and validity rules in %d tries; most frequent reason (%d times): %s", anchorTries, n, reason)
}

// sameNames rejects an assignment in which two name or entity variables have
// the same text: later draws tell a collision from an intended repeat by the
// base assignment, so the base assignment has none.
func sameNames(t *Template, vals map[string]value) string {
	seen := map[string]string{}
	for _, x := range t.vars {
		if x.factor != factorNames {
			continue
		}
		for _, n := range x.names {
			v := vals[n]
			if v.k != kStr {
				continue
			}
			k := strings.ToLower(v.s)
			if other, ok := seen[k]; ok {
				return fmt.Sprintf("%s and %s are both %q", other, n, v.s)
			}
			seen[k] = n
		}
	}
	return ""
}

// compareOnDraws evaluates a second answer expression (answer_annotated's
// final "#### {expr}") at the base assignment and on valid symbolic draws
// (at most checkDraws of them, seeded by the template ID) and compares it
// with #answer. It returns a description of the first valid draw on which
// the two differ ("" when none does), and separately the first evaluation
// error of the second expression.
func (t *Template) compareOnDraws(e *expression) (disagree string, evalErr error) {
	r := newRand(deriveSeed(0, t.ID, "answer_annotated", 0))
	try := func(vals map[string]value, ans value) bool {
		got, err := e.eval(&env{vars: vals})
		if err == nil && got.k != kNum {
			err = fmt.Errorf("it is a %s", got.kindName())
		}
		if err != nil {
			if evalErr == nil {
				evalErr = fmt.Errorf("at %s: %w", t.valuesText(vals), err)
			}
			return false
		}
		if got.n.Cmp(ans.n) != 0 {
			disagree = fmt.Sprintf("gives %s where #answer %q gives %s, at %s", numV(got.n), t.answer.src, ans, t.valuesText(vals))
			return true
		}
		return false
	}
	if try(t.baseValues(), t.baseAnswer) {
		return disagree, evalErr
	}
	valid := 0
	for d := 0; d < checkTries && valid < checkDraws; d++ {
		vals, reason := t.draw(r, true, true)
		if reason != "" {
			continue
		}
		out := t.evaluate(vals, false)
		if out.reason != "" {
			continue
		}
		valid++
		if try(vals, out.answer) {
			return disagree, evalErr
		}
	}
	return "", evalErr
}

// valuesText lists the drawn (not derived) values of an assignment as
// "a=3, b=7, name=Ines", in declaration order.
func (t *Template) valuesText(vals map[string]value) string {
	var parts []string
	for _, x := range t.vars {
		if x.derived != nil {
			continue
		}
		for _, n := range x.names {
			if v, ok := vals[n]; ok && v.k != 0 {
				parts = append(parts, n+"="+t.renderVar(n, vals, nil))
			}
		}
	}
	return strings.Join(parts, ", ")
}

// describeRecord is the templates show block of the original a p1/p2
// template was made from.
func (r *gsmsRecord) describe() string {
	var b strings.Builder
	b.WriteString("original (GSM8K; for the record only, not an instance of this level):\n")
	fmt.Fprintf(&b, "  %s\n", r.question)
	if r.answer != "" {
		fmt.Fprintf(&b, "  answer: %s\n", r.answer)
	}
	if len(r.defaults) > 0 {
		names := make([]string, 0, len(r.defaults))
		for n := range r.defaults {
			names = append(names, n)
		}
		sort.Strings(names)
		parts := make([]string, len(names))
		for i, n := range names {
			parts[i] = fmt.Sprintf("%s=%q", n, r.defaults[n])
		}
		fmt.Fprintf(&b, "  defaults: %s\n", strings.Join(parts, ", "))
	}
	return b.String()
}
