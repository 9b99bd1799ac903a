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
const Version = "errors/3"

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
	// wrongly ("6 × 8 = 46", evaluated exactly by templates.EvalArithmetic)
	// and the final answer follows from that slip: the wrong result is the
	// final answer or is used again after the slip.
	Arithmetic = "arithmetic"
	// ClauseUsed: a noop or noop-seeming item whose answer is the one the
	// problem would give if the clause's quantity were applied (the clause's
	// reviewed alternative answer, templates.Instance.AltAnswer), or whose
	// answer follows from a written operation that takes one of the
	// clause's own numbers as an operand (Trial.ClauseNumbers; errors/3):
	// the operation's stated result is the final answer or is used again
	// after it.
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

// equationRE matches a written operation and its stated result: two or
// more numbers joined by + − × ÷ * / x (parentheses allowed), "=", and a
// number. LaTeX operators are read too.
var equationRE = regexp.MustCompile(`(` + operandRE + `(?:[ \t]*(?:[-+*/×÷x−–·]|\\times|\\cdot|\\div)[ \t]*` + operandRE + `)+)[ \t]*=[ \t]*\$?[ \t]*(-?[0-9][0-9,]*(?:\.[0-9]+)?)`)

// operandRE is one operand of a written operation: a number (or an opening
// bracket), with an optional currency sign before it and an optional unit
// word after it.
const operandRE = `\$?[0-9(][0-9.,()]*(?:[ \t]+[A-Za-z]+)?`

// operandNoise matches what EvalArithmetic does not read in an operand: a
// currency sign, or a unit word after a number.
var operandNoise = regexp.MustCompile(`\$|([0-9)])[ \t]+[A-Za-z]+`)

// arithmeticSlip reports whether response states the result of an
// operation wrongly and that wrong result is the final answer (extracted)
// or appears again after the slip.
func arithmeticSlip(response, extracted string) bool {
	for _, m := range equationRE.FindAllStringSubmatchIndex(response, -1) {
		expr, stated := response[m[2]:m[3]], response[m[4]:m[5]]
		expr = operandNoise.ReplaceAllString(expr, "$1")
		v, err := templates.EvalArithmetic(strings.TrimSpace(expr))
		if err != nil {
			// An opening bracket of the text around it ("\(12 × 3 = 38\)").
			if v, err = templates.EvalArithmetic(strings.TrimLeft(expr, "( ")); err != nil {
				continue
			}
		}
		s, ok := answer.NormalizeNumber(stated)
		if !ok {
			continue
		}
		want := new(big.Rat)
		if _, ok := want.SetString(s); !ok || want.Cmp(v) == 0 {
			continue
		}
		if answer.AnswerMatches(extracted, s) || strings.Contains(response[m[1]:], stated) {
			return true
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
// one of the clause's numbers as an operand and whose stated result
// carries into the answer: it is the final answer (extracted) or is
// written again after the operation. A clause number that an earlier
// operation of the response stated as its result is the model's own
// intermediate value, not the clause's, and does not count.
func clauseOperand(response, extracted string, clause []string) bool {
	if len(clause) == 0 {
		return false
	}
	ms := equationRE.FindAllStringSubmatchIndex(response, -1)
	var results []string // the stated results so far
	for _, m := range ms {
		expr, stated := response[m[2]:m[3]], response[m[4]:m[5]]
		s, ok := answer.NormalizeNumber(stated)
		if !ok {
			continue
		}
		carried := answer.AnswerMatches(extracted, s) || slices.Contains(numbersIn(response[m[1]:]), s)
		if carried {
			for _, op := range numbersIn(expr) {
				if slices.Contains(clause, op) && !slices.Contains(results, op) {
					return true
				}
			}
		}
		results = append(results, s)
	}
	return false
}
