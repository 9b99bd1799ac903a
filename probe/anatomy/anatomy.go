// Package anatomy classifies a wrong answer by what went wrong (error
// anatomy): the answer was cut by the budget, none was given, an
// arithmetic slip carried into it, the irrelevant clause's quantity was
// applied, the original problem's answer was recalled, or something else
// (a relation or reading error). The rules are ordered and versioned like
// the extraction rules (Version); the first that fires names the kind.
//
// It owns the rules and nothing else: it reads one trial's response and
// answers, and must not load a model, compute a statistic or read files.
package anatomy

import (
	"math/big"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/fragility/fragility/probe/answer"
	"github.com/fragility/fragility/templates"
)

// Version names the rules below; it is recorded in the manifest beside the
// extraction rules, and a change of any rule changes it.
//
// errors/2 reads operands written with a currency sign or a unit word
// ("$1750 + $27 = $1877", "1260 meters + 130 meters = 1490 meters"),
// which errors/1 missed (a hand check of 50 wrong answers of the default
// model found 4 such slips labelled other).
//
// errors/3 counts as clause_used an answer that follows from an operation
// taking one of the clause's own numbers as an operand ("11 - 3 = 8", the
// 3 drawn for the clause; Trial.ClauseNumbers), which errors/2 called
// other unless the answer was the clause's reviewed alternative answer
// exactly (most clauses have none, and a misapplication that goes on
// from the clause's number reaches another answer).
//
// errors/4 reads chains of equations and LaTeX fractions, two forms of
// the default model's that the round-4 new-user test found among the
// demo's answers labelled other: "180 - 20 * $10 = $180 - $200 = -$20"
// (the clause's 20; errors/3 read only a number right after the first
// "=", here an expression, so the final -20 was no operation's result)
// and "\frac{81}{7} = 12" (the clause's 81; errors/3 read no fraction).
// A chain's later links write its operation out, state its result, or go
// on from that result ("6 × 8 = 48 + 2 = 50", an operation of its own); a
// step of a chain is a slip where a link's exact value differs from the
// one before it. \frac{a}{b} (\dfrac, \tfrac) is a / b for both rules. An
// operation on a clause number is clause_used also where its exact value
// is the final answer (the stated result missing or wrong). Read this way,
// the rules also found: slips that errors/3 missed inside chains ("$155 *
// (1 - 0.25) = $155 * 0.75 = $111.25") and fractions ("\frac{344}{4} =
// 88"), and its false slips, a link written out taken for a stated result
// ("$5.50 + $0.75 * 4 = $5.50 + $3 = $8.50" read as 8.50 = 5.50) and a
// result rounded to the digits written ("50 / 6 = 8.33", "\frac{81}{7} =
// 12"), which errors/4 does not count as a slip; an approximate result
// ("≈", \approx) is none either. LaTeX text between the numbers
// ("60 \text{ grams} + 290 \text{ grams} = 350") is read as a unit, not a
// term; an operation that is the tail of a longer expression on its line
// ("4x + 3 \cdot 5 = 140", an equation in x) has no stated result: it is
// no slip, and an operation on a clause number there is clause_used when
// its value is the final answer or written again after it ("4x + 15").
// The rules are ordered: an answer with a slip carried into it is
// arithmetic even when it also applied the clause.
const Version = "errors/4"

// The kinds of wrong answer, in the order their rules are tried.
const (
	// Unfinished: the output budget (or the context) ended the response
	// before it gave a final answer: it stopped at max_tokens and no
	// final-answer marker rule (answer.RuleFinalAnswer, RuleHashes,
	// RuleAnswerIs, RuleBoxed) fired.
	Unfinished = "unfinished"
	// NoAnswer: the response finished and the extraction rules accepted no
	// number (answer.RuleNone).
	NoAnswer = "no_answer"
	// Arithmetic: the response writes an operation whose result it states
	// wrongly ("6 × 8 = 46", "\frac{344}{4} = 88", a step of a chain "3 × 4
	// + 2 = 12 + 2 = 15"; evaluated exactly by templates.EvalArithmetic; a
	// result rounded to the digits written, "50 / 6 = 8.33", or joined by
	// "≈" is not wrong) and the final answer follows from that slip: the
	// wrong result is the final answer or is used again after the slip.
	Arithmetic = "arithmetic"
	// ClauseUsed: a noop or noop-seeming item whose answer is the one the
	// problem would give if the clause's quantity were applied (the clause's
	// reviewed alternative answer, templates.Instance.AltAnswer), or whose
	// answer follows from a written operation that takes one of the
	// clause's own numbers as an operand (Trial.ClauseNumbers; errors/3):
	// the operation's stated result, or the last of its chain ("180 - 20 *
	// $10 = $180 - $200 = -$20"; errors/4), is the final answer or is used
	// again after it, or its exact value is the final answer (errors/4).
	ClauseUsed = "clause_used"
	// OriginalRecalled: an item with re-drawn numbers whose answer is the
	// original problem's answer.
	OriginalRecalled = "original_recalled"
	// Other: none of the above (a relation or reading error).
	Other = "other"
)

// Kinds lists every kind in rule order.
var Kinds = []string{Unfinished, NoAnswer, Arithmetic, ClauseUsed, OriginalRecalled, Other}

// Trial is what the rules read of one scored trial.
type Trial struct {
	Correct    bool
	Response   string // the response as scored (a run-on cut already applied)
	Extracted  string // the extracted answer, normalised; "" when none
	Rule       string // the extraction rule that fired (answer.Rule*)
	StopReason string // "eos", "stop", "max_tokens"
	Expected   string // the item's answer
	// AltAnswer is the clause's alternative answer (noop-seeming items whose
	// clause has an alt_answer: the GSM-NoOp clause set's, and built-in
	// clauses where a natural misapplication exists); "" when there is none.
	AltAnswer string
	// OriginalAnswer is the original problem's answer when the item's
	// numbers were re-drawn and its answer differs from it; "" otherwise.
	OriginalAnswer string
	// ClauseNumbers are the numbers the item's no-op clause brings into
	// the problem, normalised (answer.NormalizeNumber; see ClauseNumbers);
	// nil for an item without a clause.
	ClauseNumbers []string
}

// Classify returns the kind of a wrong answer ("" for a right one): the
// first rule, in the order of Kinds, that fires.
func Classify(t Trial) string {
	switch {
	case t.Correct:
		return ""
	case t.StopReason == "max_tokens" && !markerRule(t.Rule):
		return Unfinished
	case t.Rule == answer.RuleNone || t.Extracted == "":
		return NoAnswer
	case arithmeticSlip(t.Response, t.Extracted):
		return Arithmetic
	case t.AltAnswer != "" && answer.AnswerMatches(t.Extracted, t.AltAnswer),
		clauseOperand(t.Response, t.Extracted, t.ClauseNumbers):
		return ClauseUsed
	case t.OriginalAnswer != "" && !answer.AnswerMatches(t.OriginalAnswer, t.Expected) && answer.AnswerMatches(t.Extracted, t.OriginalAnswer):
		return OriginalRecalled
	}
	return Other
}

// markerRule reports whether an extraction rule reads an explicit
// final-answer marker (not the last number of the text).
func markerRule(rule string) bool {
	switch rule {
	case answer.RuleFinalAnswer, answer.RuleHashes, answer.RuleAnswerIs, answer.RuleBoxed:
		return true
	}
	return false
}

// The written operations the arithmetic and clause rules read: a chain of
// links joined by "=" (or by "≈", "\approx": an approximate result), whose
// first link is an operation and each later one a number (a stated result)
// or an operation ("180 - 20 * $10 = $180 - $200 = -$20" is one chain of
// three links). An operation is two or more terms joined by + − × ÷ * / x
// (parentheses allowed, LaTeX operators read too) or a LaTeX fraction
// (\frac{a}{b}, \dfrac, \tfrac: a / b); a term is an operand or such a
// fraction.
const (
	// operandRE is one operand: a number (or an opening bracket), with an
	// optional currency sign before it and an optional unit word after it.
	operandRE = `\$?[0-9(][0-9.,()]*(?:[ \t]+[A-Za-z]+)?`
	// opRE is an operator between two terms.
	opRE = `[ \t]*(?:[-+*/×÷x−–·]|\\times|\\cdot|\\div)[ \t]*`
	// sumRE is an operand or an operation without fractions (a fraction's
	// numerator or denominator).
	sumRE = operandRE + `(?:` + opRE + operandRE + `)*`
	// fracRE is a LaTeX fraction.
	fracRE = `\\[dt]?frac[ \t]*\{[ \t]*` + sumRE + `[ \t]*\}[ \t]*\{[ \t]*` + sumRE + `[ \t]*\}`
	// linkRE is one link: terms joined by operators.
	linkRE = `(?:` + fracRE + `|` + operandRE + `)(?:` + opRE + `(?:` + fracRE + `|` + operandRE + `))*`
	// signRE is what a later link may start with before its first term: a
	// minus sign, before or after a currency sign ("-$20", "$-20", "$ 46").
	signRE = `(?:\$?[ \t]*[-−][ \t]*)?(?:\$[ \t]*)?`
	// sepRE joins two links.
	sepRE = `[ \t]*(?:=|≈|\\approx)[ \t]*`
)

var (
	// chainRE matches a chain of two or more links.
	chainRE = regexp.MustCompile(linkRE + `(?:` + sepRE + signRE + linkRE + `)+`)
	// sepREx finds the joins of a chain.
	sepREx = regexp.MustCompile(sepRE)
	// numberLinkRE matches a link that is one number.
	numberLinkRE = regexp.MustCompile(`^` + signRE + operandRE + `$`)
	// signStartRE matches the sign a link starts with.
	signStartRE = regexp.MustCompile(`^` + signRE)
	// fracArgsRE matches a fraction with its numerator and denominator.
	fracArgsRE = regexp.MustCompile(`\\[dt]?frac[ \t]*\{([^{}]*)\}[ \t]*\{([^{}]*)\}`)
	// operandNoise matches what EvalArithmetic does not read in an operand:
	// a currency sign, or a unit word after a number.
	operandNoise = regexp.MustCompile(`\$|([0-9)])[ \t]+[A-Za-z]+`)
)

// link is one side of a written equation.
type link struct {
	text   string // as written
	end    int    // where it ends in the response
	num    bool   // one number: a stated result
	approx bool   // joined to the link before by "≈" rather than "="
	// partial: the chain's first link, when the chain is the tail of a
	// longer expression (partialLeft); its later links are not results.
	partial bool
	value   *big.Rat // its exact value; nil when it does not evaluate
	first   *big.Rat // the plain number it starts with; nil when none
	raw     string   // that number as written (its digits)
}

// chains returns the written equations of response in order, each from
// its first operation on (a number before it is not a result of it);
// a chain has two links or more.
func chains(response string) [][]link {
	var out [][]link
	response = blankLatexText(response)
	for _, m := range chainRE.FindAllStringIndex(response, -1) {
		partial := partialLeft(response[:m[0]])
		var c []link
		pos, approx := m[0], false
		seps := sepREx.FindAllStringIndex(response[m[0]:m[1]], -1)
		for i := 0; i <= len(seps); i++ {
			end := m[1]
			if i < len(seps) {
				end = m[0] + seps[i][0]
			}
			if l := readLink(response[pos:end], end, approx); len(c) > 0 || !l.num {
				c = append(c, l)
			}
			if i < len(seps) {
				pos = m[0] + seps[i][1]
				approx = !strings.Contains(response[end:pos], "=")
			}
		}
		if len(c) >= 2 {
			c[0].partial = partial
			out = append(out, c)
		}
	}
	return out
}

// latexTextRE matches LaTeX text in a formula (\text{ grams}, \mathrm{km},
// \textrm, \textbf): a unit or a label between the numbers, not a term.
var latexTextRE = regexp.MustCompile(`\\(?:text|textrm|textbf|mathrm)[ \t]*\{[^{}]*\}`)

// blankLatexText returns response with its LaTeX text (latexTextRE)
// replaced by as many spaces, so that "60 \text{ grams} + 290 \text{
// grams} = 350" reads as an operation and every offset stays that of the
// response.
func blankLatexText(response string) string {
	return latexTextRE.ReplaceAllStringFunc(response, func(m string) string { return strings.Repeat(" ", len(m)) })
}

// partialLeftRE matches the end of a line's text before a chain whose
// left side goes on to the left: a term (a letter, a digit or a closing
// bracket) and an operator ("4x + " before "3 \cdot 5 = 140").
var partialLeftRE = regexp.MustCompile(`[0-9A-Za-z)}][ \t]*(?:[-+*/×÷−–·]|\\times|\\cdot|\\div)[ \t]*$`)

// partialLeft reports whether before, the response's text before a
// chain, ends (on the chain's line) with a term and an operator: the chain
// is then the tail of a longer expression ("4x + 3 \cdot 5 = 140" is an
// equation in x, not the operation 3 × 5 = 140): its first link is an
// operation without a stated result (link.partial) and no slip is read.
func partialLeft(before string) bool {
	if i := strings.LastIndexByte(before, '\n'); i >= 0 {
		before = before[i+1:]
	}
	return partialLeftRE.MatchString(before)
}

// readLink reads one link of a chain, text, which ends at end in the
// response.
func readLink(text string, end int, approx bool) link {
	l := link{text: text, end: end, approx: approx, num: numberLinkRE.MatchString(text)}
	l.first, l.raw = firstNumber(text)
	if l.num {
		l.value = l.first
		return l
	}
	expr := fracArgsRE.ReplaceAllString(text, "($1)/($2)")
	expr = operandNoise.ReplaceAllString(expr, "$1")
	v, err := templates.EvalArithmetic(strings.TrimSpace(expr))
	if err != nil {
		// An opening bracket of the text around it ("\(12 × 3 = 38\)").
		if v, err = templates.EvalArithmetic(strings.TrimLeft(expr, "( ")); err != nil {
			return l
		}
	}
	l.value = v
	return l
}

// firstNumber returns the plain number a link starts with (after its sign
// and currency sign; not a bracket or a fraction) and its digits as
// written; nil when it starts otherwise.
func firstNumber(text string) (*big.Rat, string) {
	sign := signStartRE.FindString(text)
	rest := strings.TrimPrefix(text[len(sign):], "$")
	loc := numberRE.FindStringIndex(rest)
	if loc == nil || loc[0] != 0 {
		return nil, ""
	}
	raw := strings.TrimRight(rest[:loc[1]], ",")
	v := ratOf(raw)
	if v != nil && strings.ContainsAny(sign, "-−") {
		v.Neg(v)
	}
	return v, raw
}

// ratOf returns the value of a number written as AnswerMatches reads it;
// nil when s is not one number.
func ratOf(s string) *big.Rat {
	n, ok := answer.NormalizeNumber(s)
	if !ok {
		return nil
	}
	v, ok := new(big.Rat).SetString(n)
	if !ok {
		return nil
	}
	return v
}

// equal reports whether two values are known and equal.
func equal(a, b *big.Rat) bool { return a != nil && b != nil && a.Cmp(b) == 0 }

// rounded reports whether stated, written as raw, is the exact value v
// rounded up or down to the decimals raw writes, where v has more ("81 / 7
// = 12", "50 / 6 = 8.33", "76 / 7 = 10.857142857142857"): fewer digits
// written, not a slip.
func rounded(v, stated *big.Rat, raw string) bool {
	d := int64(0)
	if i := strings.Index(raw, "."); i >= 0 {
		d = int64(len(raw) - i - 1)
	}
	scale := new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(d), nil))
	x, s := new(big.Rat).Mul(v, scale), new(big.Rat).Mul(stated, scale)
	if x.IsInt() || !s.IsInt() {
		return false
	}
	floor := new(big.Int).Div(x.Num(), x.Denom()) // Euclidean: the floor, as the denominator is positive
	if s.Num().Cmp(floor) == 0 {
		return true
	}
	return s.Num().Cmp(floor.Add(floor, big.NewInt(1))) == 0
}

// arithmeticSlip reports whether response writes a wrong step in a chain
// (a link whose value differs from the link before it, joined by "=") and
// that wrong result carries into the answer: a stated number that is the
// final answer (extracted) or appears again after the slip, or an
// operation whose value, or a later link's, is the final answer or whose
// chain's stated result appears again after it. A later operation that
// starts from the value before it ("6 × 8 = 48 + 2 = 50") goes on from
// that value and is no slip.
func arithmeticSlip(response, extracted string) bool {
	for _, c := range chains(response) {
		if c[0].partial {
			continue // an expression's tail: no stated result to check
		}
		for i := 0; i+1 < len(c); i++ {
			a, b := c[i], c[i+1]
			if b.approx || a.value == nil || b.value == nil || equal(a.value, b.value) {
				continue
			}
			if b.num {
				if rounded(a.value, b.value, b.raw) {
					continue
				}
				if equal(ratOf(extracted), b.value) || strings.Contains(response[b.end:], b.raw) {
					return true
				}
				continue
			}
			if !equal(b.first, a.value) && carried(c[i+1:], extracted, response[c[len(c)-1].end:]) {
				return true
			}
		}
	}
	return false
}

// ClauseNumbers returns the numbers a no-op clause brings into its
// question, normalised (answer.NormalizeNumber), in the order the clause
// writes them: the numbers written in the clause's text and the numeric
// values of its own variables (templates.Instance.NoopValues; a value the
// text writes in words, "five", is one of these), less every number the
// question also gives outside the clause (a clause that repeats one of the
// problem's quantities does not make that quantity the clause's). nil for
// an empty clause.
func ClauseNumbers(question, clause string, values map[string]string) []string {
	if clause == "" {
		return nil
	}
	// Outside the clause: the question's count of a number less the
	// clause's (the clause is inserted whole, but the text around it may
	// be joined differently, so it is not cut out by position).
	inQuestion, inClause := map[string]int{}, map[string]int{}
	for _, n := range numbersIn(question) {
		inQuestion[n]++
	}
	own := numbersIn(clause)
	for _, n := range own {
		inClause[n]++
	}
	keys := make([]string, 0, len(values))
	for k := range values {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if v, ok := answer.NormalizeNumber(values[k]); ok {
			own = append(own, v)
		}
	}
	var out []string
	for _, n := range own {
		if inQuestion[n] <= inClause[n] && !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

// numberRE matches a number written with digits (thousands separators
// and decimals allowed).
var numberRE = regexp.MustCompile(`[0-9][0-9,]*(?:\.[0-9]+)?`)

// numbersIn returns the numbers written with digits in s, normalised.
func numbersIn(s string) []string {
	var out []string
	for _, x := range numberRE.FindAllString(s, -1) {
		if v, ok := answer.NormalizeNumber(strings.TrimRight(x, ",")); ok {
			out = append(out, v)
		}
	}
	return out
}

// clauseOperand reports whether response writes an operation that takes
// one of the clause's numbers as an operand and whose result carries into
// the answer (carried): the operation, or a later link of its chain, has
// the final answer (extracted) as its value, or the chain's stated result
// is written again after it. An operation is a chain's first link or a
// later link that goes on from the value before it; a later link of the
// same value ("= $180 - $200") writes out the operation before it, and its
// numbers are the model's own. A clause number that is the value of an
// earlier link of the response is the model's own intermediate value, not
// the clause's, and does not count.
func clauseOperand(response, extracted string, clause []string) bool {
	if len(clause) == 0 {
		return false
	}
	var results []*big.Rat // the values so far
	for _, c := range chains(response) {
		if l := c[0]; l.partial {
			// An operation inside a longer expression ("4x + 3 \cdot 5"):
			// used when its value is the answer or written again after it.
			if clauseIn(l.text, clause, results) && (equal(l.value, ratOf(extracted)) || writtenAgain(l.value, response[l.end:])) {
				return true
			}
			continue
		}
		after := response[c[len(c)-1].end:]
		for i, l := range c {
			own := i == 0 || !l.num && !equal(l.value, c[i-1].value)
			if own && clauseIn(l.text, clause, results) && carried(c[i:], extracted, after) {
				return true
			}
			if l.value != nil {
				results = append(results, l.value)
			}
		}
	}
	return false
}

// clauseIn reports whether text writes one of the clause's numbers that
// is not one of the values so far (results).
func clauseIn(text string, clause []string, results []*big.Rat) bool {
	for _, n := range numbersIn(text) {
		if slices.Contains(clause, n) && !slices.ContainsFunc(results, func(r *big.Rat) bool { return equal(r, ratOf(n)) }) {
			return true
		}
	}
	return false
}

// carried reports whether the links of a chain from an operation on carry
// its result into the answer: the value of one of them is the final answer
// (extracted), or the chain ends in a stated result that is written again
// after it (in after; statedAgain).
func carried(links []link, extracted, after string) bool {
	want := ratOf(extracted)
	for _, l := range links {
		if equal(l.value, want) {
			return true
		}
	}
	return statedAgain(links[len(links)-1], after)
}

// fractionRE matches a fraction of two numbers ("\frac{4}{7}"): a result
// written as a fraction.
const fractionRE = `\\[dt]?frac[ \t]*\{[ \t]*([0-9][0-9,]*(?:\.[0-9]+)?)[ \t]*\}[ \t]*\{[ \t]*([0-9][0-9,]*(?:\.[0-9]+)?)[ \t]*\}`

var (
	// fractionsRE finds the fractions of two numbers in a text.
	fractionsRE = regexp.MustCompile(fractionRE)
	// fractionREx matches a link that is one fraction of two numbers.
	fractionREx = regexp.MustCompile(`^` + fractionRE + `$`)
)

// statedAgain reports whether the last link of a chain, l, is a stated
// result (a number, or a fraction of two numbers) whose value is written
// again in after, as a number or as such a fraction.
func statedAgain(l link, after string) bool {
	if !l.num && !fractionREx.MatchString(l.text) {
		return false
	}
	return writtenAgain(l.value, after)
}

// writtenAgain reports whether the value v (nil: false) is written in
// after, as a number or as a fraction of two numbers.
func writtenAgain(v *big.Rat, after string) bool {
	if v == nil {
		return false
	}
	for _, n := range numbersIn(after) {
		if equal(ratOf(n), v) {
			return true
		}
	}
	for _, m := range fractionsRE.FindAllStringSubmatch(after, -1) {
		if a, b := ratOf(m[1]), ratOf(m[2]); a != nil && b != nil && b.Sign() != 0 && equal(a.Quo(a, b), v) {
			return true
		}
	}
	return false
}
