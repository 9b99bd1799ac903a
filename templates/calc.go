package templates

import (
	"errors"
	"fmt"
	"math/big"
	"regexp"
	"strings"
)

// rePercent matches a number with a percent sign ("15%", "12.5 %").
var rePercent = regexp.MustCompile(`(\d+(?:\.\d+)?)\s*%`)

// reThousands matches thousands separators inside a number ("1,250,000").
var reThousands = regexp.MustCompile(`(\d),(\d{3})\b`)

// calcReplacer maps the operator glyphs a model writes to Python's.
var calcReplacer = strings.NewReplacer(`\times`, "*", `\cdot`, "*", `\div`, "/", `\$`, "", `\,`, "", "×", "*", "·", "*", "÷", "/", "−", "-", "–", "-", "$", "", "x", "*", "X", "*")

// EvalArithmetic evaluates an arithmetic expression as a calculator would,
// exactly, over rationals (math/big.Rat): numbers with decimals and
// thousands separators, + − × ÷ (also written - * x /), // and % with
// Python's meaning, ** with a small integer exponent, parentheses, and a
// percent sign after a number, which divides it by 100 ("15% * 80" is 12).
// The expression is parsed by the same Python parser and evaluator as
// template answers (gpython's parser, this package's exact evaluator); names,
// calls, lists and texts are refused. Errors are one line: a syntax error,
// a division by zero, an operand that is not a number, a result too large.
func EvalArithmetic(src string) (*big.Rat, error) {
	s := strings.TrimSpace(src)
	if s == "" {
		return nil, errors.New("empty expression")
	}
	s = calcReplacer.Replace(s)
	for {
		t := reThousands.ReplaceAllString(s, "$1$2")
		if t == s {
			break
		}
		s = t
	}
	s = rePercent.ReplaceAllString(s, "($1/100)")
	e, err := compileExpr(s)
	if err != nil {
		return nil, err
	}
	if len(e.vars) > 0 || len(e.calls) > 0 {
		return nil, fmt.Errorf("expression %q: a calculator takes numbers and operators only", src)
	}
	return e.evalNum(&env{vars: map[string]value{}, pools: map[string][]value{}})
}
