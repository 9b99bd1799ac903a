package probe

import (
	"errors"
	"fmt"
	"math/big"
	"regexp"
	"slices"
	"strings"

	"github.com/fragility/fragility/llm"
	"github.com/fragility/fragility/probe/anatomy"
	"github.com/fragility/fragility/probe/answer"
	"github.com/fragility/fragility/probe/docqa"
	"github.com/fragility/fragility/probe/results"
	"github.com/fragility/fragility/probe/rundir"
	"github.com/fragility/fragility/templates"
)

// DefaultCalcCalls is the calculator's call limit per item when
// --calc-calls is not given.
const DefaultCalcCalls = 10

// CalcProtocolVersion names the calculator protocol below (trigger,
// evaluation, result format, instruction note); it is recorded in the
// manifest and changes whenever any of them changes.
//
// The prompt adds CalcNote after the instruction, and the worked exemplars
// (--shots) show their calculations as calls (CalcSolution).
//
// The protocol: when the generated text ends in "<<EXPR=" (EXPR on one
// line, holding no "<<", ">>" or "="), generation pauses, EXPR is evaluated
// exactly by templates.EvalArithmetic, and "RESULT>>" is fed to the model as
// if it had written it (llm.GenerateOptions.Inject); then decoding goes on.
// RESULT is the exact value as an integer or finite decimal, or rounded
// half-even to CalcDecimals decimals when it has no finite decimal form;
// an expression that does not evaluate gets "error>>". Calls past the
// limit are recorded with the error "call limit reached" and get nothing:
// the model writes its own result.
const CalcProtocolVersion = "calc/2"

// CalcDecimals is the number of decimals of a calculator result that has
// no finite decimal form.
const CalcDecimals = 6

// calcNote is the instruction note of the calculator condition, with one
// example of the protocol; %d is the call limit.
const calcNote = "You have a calculator: do every calculation with it, not in your head. " +
	"Write << then the calculation with numbers and + - * / ( ) then =, and the calculator writes the exact result and >> for you; then go on writing. " +
	"Example: \"The tickets cost <<3*12.5=37.5>>37.5 dollars.\" You may use it up to %d times."

// CalcNote returns the instruction note of the calculator condition for a
// call limit; it follows the preset's instruction in every prompt of the
// condition.
func CalcNote(limit int) string { return fmt.Sprintf(calcNote, limit) }

// calcInfo is the manifest's calculator record of cfg; nil when the
// calculator does not run.
func calcInfo(cfg rundir.Config) *rundir.CalcInfo {
	if !slices.Contains(cfg.Conditions, results.ConditionCalculator) {
		return nil
	}
	return &rundir.CalcInfo{Protocol: CalcProtocolVersion, Calls: cfg.CalcCalls, Note: CalcNote(cfg.CalcCalls), Decimals: CalcDecimals}
}

// ParseConditions reads a --conditions list ("none,calculator").
func ParseConditions(csv string) ([]string, error) {
	var out []string
	for _, f := range strings.Split(csv, ",") {
		f = strings.TrimSpace(f)
		switch f {
		case results.ConditionNone, results.ConditionCalculator:
		case "":
			continue
		default:
			return nil, fmt.Errorf("unknown condition %q (known: %s, %s)", f, results.ConditionNone, results.ConditionCalculator)
		}
		if slices.Contains(out, f) {
			return nil, fmt.Errorf("condition %q given twice", f)
		}
		out = append(out, f)
	}
	if len(out) == 0 {
		return nil, errors.New("no condition given")
	}
	return out, nil
}

// validateConditions checks and normalises Conditions and CalcCalls: the
// condition none alone is stored as nil (so that such a run's plan is the
// plan of a run made before conditions existed).
func validateConditions(c *rundir.Config) error {
	for i, cond := range c.Conditions {
		if cond != results.ConditionNone && cond != results.ConditionCalculator {
			return fmt.Errorf("--conditions: unknown condition %q (known: %s, %s)", cond, results.ConditionNone, results.ConditionCalculator)
		}
		if slices.Contains(c.Conditions[:i], cond) {
			return fmt.Errorf("--conditions: %q given twice", cond)
		}
	}
	if len(c.Conditions) == 1 && c.Conditions[0] == results.ConditionNone {
		c.Conditions = nil
	}
	if c.CalcCalls < 0 {
		return fmt.Errorf("--calc-calls must be at least 1, got %d", c.CalcCalls)
	}
	if !slices.Contains(c.Conditions, results.ConditionCalculator) {
		c.CalcCalls = 0
		return nil
	}
	if c.Items != "" {
		return errors.New("--conditions calculator is for arithmetic items, not document questions (--items)")
	}
	if c.CalcCalls == 0 {
		c.CalcCalls = DefaultCalcCalls
	}
	return nil
}

// runConditions returns the conditions a run plans, in order.
func runConditions(cfg rundir.Config) []string {
	if len(cfg.Conditions) == 0 {
		return []string{results.ConditionNone}
	}
	return cfg.Conditions
}

// reCalcStep matches a worked calculation in an exemplar's solution:
// "4 * 9 = 36".
var reCalcStep = regexp.MustCompile(`(\d+(?:\.\d+)?(?:\s*[-+*/]\s*\d+(?:\.\d+)?)+)\s*=\s*(\d+(?:\.\d+)?)`)

// CalcSolution is a worked exemplar's solution as the calculator condition
// shows it: each calculation "4 * 9 = 36" written as a call,
// "4 * 9 = <<4*9=36>>36" (GSM8K's annotation), the rest unchanged.
func CalcSolution(s string) string {
	return reCalcStep.ReplaceAllStringFunc(s, func(m string) string {
		sub := reCalcStep.FindStringSubmatch(m)
		expr := strings.Join(strings.Fields(sub[1]), "")
		return sub[1] + " = <<" + expr + "=" + sub[2] + ">>" + sub[2]
	})
}

// Calculator is the calculator of one batch: the calls of each sequence
// and the byte offset in its text where each call was made.
type Calculator struct {
	limit   int
	calls   [][]rundir.CalcCall
	offsets [][]int
}

// NewCalculator returns the calculator for a batch of n sequences under
// cond, nil under any other condition.
func NewCalculator(cfg rundir.Config, cond string, n int) *Calculator {
	if cond != results.ConditionCalculator {
		return nil
	}
	return &Calculator{limit: max(cfg.CalcCalls, 1), calls: make([][]rundir.CalcCall, n), offsets: make([][]int, n)}
}

// SetOptions hooks the calculator into a batch's generation options.
func (c *Calculator) SetOptions(opt *llm.GenerateOptions) {
	if c == nil {
		return
	}
	opt.Inject = c.inject
	opt.MaxInjected = c.limit * 32
}

// inject is the llm.GenerateOptions.Inject hook: the protocol of
// CalcProtocolVersion.
func (c *Calculator) inject(seq int, text string) string {
	expr, ok := pendingCall(text)
	if !ok {
		return ""
	}
	call := rundir.CalcCall{Expr: expr}
	defer func() {
		c.calls[seq] = append(c.calls[seq], call)
		c.offsets[seq] = append(c.offsets[seq], len(text))
	}()
	if len(c.calls[seq]) >= c.limit {
		call.Error = "call limit reached"
		return ""
	}
	v, err := templates.EvalArithmetic(expr)
	if err != nil {
		call.Error, call.Result = err.Error(), "error"
		return "error>>"
	}
	call.Result = CalcResult(v)
	return call.Result + ">>"
}

// pendingCall reports whether text ends in a call "<<EXPR=" and returns
// EXPR (trimmed).
func pendingCall(text string) (string, bool) {
	if !strings.HasSuffix(text, "=") {
		return "", false
	}
	open := strings.LastIndex(text, "<<")
	if open < 0 {
		return "", false
	}
	body := text[open+2 : len(text)-1]
	if strings.TrimSpace(body) == "" || len(body) > 256 || strings.ContainsAny(body, "=\n") || strings.Contains(body, ">>") {
		return "", false
	}
	return strings.TrimSpace(body), true
}

// CalcResult writes a calculator value: an integer or a finite decimal
// exactly, any other rational rounded half-even to CalcDecimals decimals
// with trailing zeros dropped.
func CalcResult(v *big.Rat) string {
	if s, ok := answer.NormalizeNumber(v.RatString()); ok && !strings.Contains(s, "/") {
		return s
	}
	// Half-even rounding at CalcDecimals decimals: scale, round, unscale.
	scale := new(big.Int).Exp(big.NewInt(10), big.NewInt(CalcDecimals), nil)
	x := new(big.Rat).Mul(v, new(big.Rat).SetInt(scale))
	q, r := new(big.Int).QuoRem(x.Num(), x.Denom(), new(big.Int))
	// q is truncated toward zero; r has x's sign.
	twice := new(big.Int).Mul(new(big.Int).Abs(r), big.NewInt(2))
	if c := twice.Cmp(x.Denom()); c > 0 || (c == 0 && q.Bit(0) == 1) {
		if x.Sign() < 0 {
			q.Sub(q, big.NewInt(1))
		} else {
			q.Add(q, big.NewInt(1))
		}
	}
	s, _ := answer.NormalizeNumber(new(big.Rat).SetFrac(q, scale).FloatString(CalcDecimals))
	return s
}

// finish gives sequence seq's calls their token indices in g and returns
// them.
func (c *Calculator) finish(seq int, g *llm.Generation) []rundir.CalcCall {
	if c == nil {
		return nil
	}
	calls, offsets := c.calls[seq], c.offsets[seq]
	off, k := 0, 0
	for i, t := range g.Tokens {
		off += len(t.Piece)
		for k < len(calls) && offsets[k] <= off {
			calls[k].Token = i
			k++
		}
	}
	return calls
}

// finishTrial fills the columns of extract/2, the condition, the stop
// reason of a run-on, the reasoning effort and the error anatomy from a
// generation.
func finishTrial(t *results.Trial, g *llm.Generation, ex answer.Extraction, cond string, calls []rundir.CalcCall) {
	t.Condition = results.ConditionName(cond)
	t.CalcCalls = len(calls)
	t.CutMarker = ex.CutMarker
	if g.StopReason == llm.StopString && slices.Contains(RunOnStops, g.StopString) {
		t.StopReason = StopRunOn
	}
	fillEffort(t, g, ex)
	classifyError(t)
}

// classifyError sets t.ErrorKind by the error-anatomy rules (errorKind).
func classifyError(t *results.Trial) { t.ErrorKind = errorKind(t) }

// errorKind is the error-anatomy kind of t (anatomy.Classify) for a scored
// arithmetic item, "" for a right answer, a document item or a skipped one,
// without its clause's numbers (errorKindClause).
func errorKind(t *results.Trial) string { return errorKindClause(t, nil) }

// errorKindClause is errorKind with the numbers of the item's no-op clause
// (clauseNumbers: the instance's, which results.csv does not record).
func errorKindClause(t *results.Trial, clause []string) string {
	if t.Skipped() || t.ScoreRule != "" && t.ScoreRule != docqa.ScoreNumber {
		return ""
	}
	original := ""
	if t.OriginalAnswer != "" && !answer.AnswerMatches(t.OriginalAnswer, t.Expected) {
		original = t.OriginalAnswer
	}
	return anatomy.Classify(anatomy.Trial{Correct: t.Correct, Response: t.Response, Extracted: t.Extracted, Rule: t.Rule,
		StopReason: t.StopReason, Expected: t.Expected, AltAnswer: t.AltAnswer, OriginalAnswer: original, ClauseNumbers: clause})
}

// StopRunOn is the stop reason of a generation stopped at a run-on marker
// (one of RunOnStops): the model began a new made-up problem.
const StopRunOn = "run_on"

// RunOnStops are the stop strings of prompt formats that allow stopping
// where a response runs on into a new problem (the gsm-symbolic preset);
// they are the line starts answer.RunOnCut cuts at.
var RunOnStops = []string{"\nQ:", "\nQuestion:", "\nProblem:"}

// fillEffort fills the reasoning-effort columns (see Trial). Token spans
// are the pieces' byte spans in the generation's text.
func fillEffort(t *results.Trial, g *llm.Generation, ex answer.Extraction) {
	rs, re, _ := answer.ReasoningSpan(g.Text)
	block := re > 0
	end := len(g.Text)
	if ex.Cut >= 0 {
		end = ex.Cut
	}
	var think, reply []float64
	effort := 0
	off := 0
	for _, tok := range g.Tokens {
		start := off
		off += len(tok.Piece)
		if tok.Injected {
			continue
		}
		switch {
		case block && start < re && off > rs:
			think = append(think, tok.EntropyBits)
		case block && start >= re:
			reply = append(reply, tok.EntropyBits)
		}
		if !block && start < end {
			effort++
		}
	}
	t.ThinkTokens, t.ReplyTokens = len(think), len(reply)
	t.ThinkEntropyMean, _, _ = entropyStats(think)
	t.ReplyEntropyMean, _, _ = entropyStats(reply)
	if block {
		t.EffortTokens, t.EffortSource = len(think), "think"
	} else {
		t.EffortTokens, t.EffortSource = effort, "all"
	}
}
