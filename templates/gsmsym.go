package templates

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"path/filepath"
	"regexp"
	"strings"
)

// gsmsFile is one GSM-Symbolic annotated template file.
type gsmsFile struct {
	Question          *string `json:"question"`
	Answer            *string `json:"answer"`
	IDOrig            any     `json:"id_orig"`
	IDShuffled        any     `json:"id_shuffled"`
	QuestionAnnotated *string `json:"question_annotated"`
	AnswerAnnotated   *string `json:"answer_annotated"`
}

// jsonError turns an encoding/json error into one located by line.
func jsonError(path string, data []byte, err error) error {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return fileError(path, lineAt(data, se.Offset), "JSON syntax error: %v", se)
	case errors.As(err, &te):
		return fileError(path, lineAt(data, te.Offset), "field %q has the wrong type (%s, want %s)", te.Field, te.Value, te.Type)
	}
	return fileError(path, 0, "bad JSON: %v", err)
}

// lineAt returns the 1-based line of byte offset off.
func lineAt(data []byte, off int64) int {
	if off > int64(len(data)) {
		off = int64(len(data))
	}
	if off < 0 {
		off = 0
	}
	return bytes.Count(data[:off], []byte("\n")) + 1
}

var (
	gsmsPlaceholderRE = regexp.MustCompile(`\{([A-Za-z_][A-Za-z0-9_]*),([^{}]*)\}`)
	gsmsAnswerRE      = regexp.MustCompile(`^#answer\s*[:=]\s*(.*)$`)
	gsmsFinalRE       = regexp.MustCompile(`####\s*\{([^{}]*)\}\s*$`)
	finalAnswerRE     = regexp.MustCompile(`####\s*([^\n]*?)\s*$`)
)

// ParseGSMSymbolic parses one template in the GSM-Symbolic annotated syntax
// (a JSON object with question, answer, question_annotated, answer_annotated;
// see README.md). path is used in errors, as Source, and for the template ID
// ("gsms-" + file name without extension). The template is checked at its
// base values: it must reproduce the original question text exactly and the
// original "#### N" answer. Errors name the file, the line of
// question_annotated in it, and the line inside the annotation.
func ParseGSMSymbolic(path string, data []byte) (ts []*Template, err error) {
	defer func() {
		if !catchPanics {
			return
		}
		if r := recover(); r != nil {
			ts, err = nil, fileError(path, 0, "cannot parse GSM-Symbolic template")
		}
	}()
	var f gsmsFile
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, jsonError(path, data, err)
	}
	if f.QuestionAnnotated == nil || f.Question == nil || f.Answer == nil {
		return nil, fileError(path, 1, "a GSM-Symbolic template needs question, answer and question_annotated")
	}
	fileLine := 1
	if i := bytes.Index(data, []byte(`"question_annotated"`)); i >= 0 {
		fileLine = lineAt(data, int64(i))
	}
	stem := strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	g := &gsmsParser{path: path, fileLine: fileLine}
	t := &Template{
		ID: "gsms-" + sanitizeID(stem), Source: path, Line: fileLine, Format: "gsm-symbolic",
		Relation: "gsm-symbolic", genericNoop: true,
	}
	g.t = t
	t.Title = shorten(*f.Question, 60)
	t.Steps = max(1, strings.Count(*f.Answer, "<<"))

	// The original answer.
	m := finalAnswerRE.FindStringSubmatch(*f.Answer)
	if m == nil {
		return nil, fileError(path, 1, "answer does not end with \"#### N\"")
	}
	expect, ok := parseNumber(m[1])
	if !ok {
		return nil, fileError(path, 1, "answer: %q after #### is not a number", m[1])
	}
	t.AnswerType = "decimal"
	if expect.IsInt() {
		t.AnswerType = "integer"
	}
	switch expect.Sign() {
	case 1:
		t.answerSign = "positive"
	case 0:
		t.answerSign = "nonnegative"
	default:
		t.answerSign = "any"
	}
	limit := new(big.Rat).Mul(new(big.Rat).Abs(expect), big.NewRat(100, 1))
	t.maxAbs = big.NewRat(1000000, 1)
	if limit.Cmp(t.maxAbs) > 0 {
		t.maxAbs = limit
	}

	if err := g.parse(*f.QuestionAnnotated); err != nil {
		return nil, err
	}
	if err := t.finish(expect); err != nil {
		return nil, g.errorf(g.answerLine, "%v", err)
	}
	if got := t.BaseQuestion(); got != *f.Question {
		i := 0
		for i < len(got) && i < len(*f.Question) && got[i] == (*f.Question)[i] {
			i++
		}
		return nil, g.errorf(1, "at base values the annotation gives %q where question has %q (byte %d)",
			shorten(got[i:], 30), shorten((*f.Question)[i:], 30), i)
	}
	if f.AnswerAnnotated != nil {
		if m := gsmsFinalRE.FindStringSubmatch(*f.AnswerAnnotated); m != nil {
			e, err := compileExpr(m[1])
			if err != nil {
				return nil, fileError(path, lineAt(data, int64(bytes.Index(data, []byte(`"answer_annotated"`)))), "answer_annotated: %v", err)
			}
			v, err := e.evalNum(&env{vars: t.baseValues()})
			if err != nil || v.Cmp(expect) != 0 {
				got := "an error"
				if err == nil {
					got = numV(v).String()
				} else {
					got = err.Error()
				}
				return nil, fileError(path, lineAt(data, int64(bytes.Index(data, []byte(`"answer_annotated"`)))),
					"answer_annotated: #### {%s} gives %s at base values, want %s", m[1], got, numV(expect))
			}
		}
	}
	return []*Template{t}, nil
}

type gsmsParser struct {
	path       string
	fileLine   int
	t          *Template
	answerLine int
}

func (g *gsmsParser) errorf(line int, format string, args ...any) error {
	return fileError(g.path, g.fileLine, "question_annotated line %d: %s", line, fmt.Sprintf(format, args...))
}

// parse reads the annotated question: text with {var,base} placeholders, then
// #init, #conditions and #answer blocks.
func (g *gsmsParser) parse(ann string) error {
	t := g.t
	lines := strings.Split(ann, "\n")
	textEnd := len(lines)
	for i, l := range lines {
		if strings.HasPrefix(strings.TrimSpace(l), "#") {
			textEnd = i
			break
		}
	}
	if textEnd == len(lines) {
		return g.errorf(1, "no #init or #answer block")
	}
	body := strings.TrimRight(strings.Join(lines[:textEnd], "\n"), " \t\n")
	if body == "" {
		return g.errorf(1, "empty question text")
	}

	// Text and placeholders with their verbatim base text.
	tx := &text{}
	baseText := map[string]string{}
	phLine := map[string]int{}
	last := 0
	for _, m := range gsmsPlaceholderRE.FindAllStringSubmatchIndex(body, -1) {
		if m[0] > last {
			tx.parts = append(tx.parts, textPart{lit: body[last:m[0]]})
		}
		name, bt := body[m[2]:m[3]], strings.TrimSpace(body[m[4]:m[5]])
		line := strings.Count(body[:m[0]], "\n") + 1
		if prev, ok := baseText[name]; ok && prev != bt {
			return g.errorf(line, "{%s} has two base values, %q and %q", name, prev, bt)
		}
		baseText[name], phLine[name] = bt, line
		tx.parts = append(tx.parts, textPart{ph: name})
		last = m[1]
	}
	if last < len(body) {
		tx.parts = append(tx.parts, textPart{lit: body[last:]})
	}
	t.question = tx

	// Blocks.
	block := ""
	declared := map[string]bool{}
	baseEnv := map[string]value{}
	var answerSrc string
	for i := textEnd; i < len(lines); i++ {
		ln := i + 1
		l := strings.TrimSpace(lines[i])
		switch {
		case l == "":
			continue
		case strings.HasPrefix(l, "#init"):
			block = "init"
			if strings.TrimSpace(strings.TrimPrefix(strings.TrimPrefix(l, "#init"), ":")) != "" {
				return g.errorf(ln, "unexpected text after #init:")
			}
			continue
		case strings.HasPrefix(l, "#conditions"):
			block = "conditions"
			continue
		case strings.HasPrefix(l, "#answer"):
			m := gsmsAnswerRE.FindStringSubmatch(l)
			if m == nil || strings.TrimSpace(m[1]) == "" {
				return g.errorf(ln, "write #answer: EXPR")
			}
			if answerSrc != "" {
				return g.errorf(ln, "a second #answer")
			}
			answerSrc, g.answerLine, block = strings.TrimSpace(m[1]), ln, "answer"
			continue
		case strings.HasPrefix(l, "#"):
			return g.errorf(ln, "unknown block %q (known: #init, #conditions, #answer)", l)
		}
		if !strings.HasPrefix(l, "-") || block == "" || block == "answer" {
			return g.errorf(ln, "unexpected line %q (block lines start with \"- \")", shorten(l, 40))
		}
		item := strings.TrimSpace(strings.TrimPrefix(l, "-"))
		switch block {
		case "init":
			x, err := g.initLine(item, ln, declared, baseText, baseEnv)
			if err != nil {
				return err
			}
			t.vars = append(t.vars, x)
		case "conditions":
			e, err := compileExpr(item)
			if err != nil {
				return g.errorf(ln, "%v", err)
			}
			if err := g.reads(e, ln, declared, false); err != nil {
				return err
			}
			t.conds = append(t.conds, &condition{e: e, line: ln})
		}
	}
	if answerSrc == "" {
		return g.errorf(len(lines), "no #answer line")
	}
	e, err := compileExpr(answerSrc)
	if err != nil {
		return g.errorf(g.answerLine, "%v", err)
	}
	if err := g.reads(e, g.answerLine, declared, false); err != nil {
		return err
	}
	t.answer, t.answerLine = e, g.answerLine
	for name := range baseText {
		if !declared[name] {
			return g.errorf(phLine[name], "placeholder {%s,...} has no #init line", name)
		}
	}
	return nil
}

// reads checks that e reads only declared variables (and, in #init lines,
// pools), and calls sampling helpers only in #init lines.
func (g *gsmsParser) reads(e *expression, ln int, declared map[string]bool, init bool) error {
	for _, v := range e.vars {
		if declared[v] || constants[v].k != 0 {
			continue
		}
		if _, ok := pools[v]; ok && init {
			continue
		}
		if init {
			return g.errorf(ln, "unknown variable or pool %q", v)
		}
		return g.errorf(ln, "unknown variable %q", v)
	}
	if !init {
		for _, c := range e.calls {
			if initOnly[c] {
				return g.errorf(ln, "%s draws at random and is allowed only in #init lines", c)
			}
		}
	}
	return nil
}

// initLine reads "- $x = range(2, 20)", "- a, b = sample_sequential(names, 2)"
// or a derived "- total = a + b".
func (g *gsmsParser) initLine(item string, ln int, declared map[string]bool, baseText map[string]string, baseEnv map[string]value) (*variable, error) {
	lhs, rhs, ok := strings.Cut(item, "=")
	if !ok || strings.TrimSpace(rhs) == "" || strings.HasPrefix(rhs, "=") {
		return nil, g.errorf(ln, "an #init line is \"- name = expression\"")
	}
	x := &variable{line: ln, decimals: -1}
	dollar := false
	for _, part := range strings.Split(lhs, ",") {
		nm := strings.TrimSpace(part)
		if strings.HasPrefix(nm, "$") {
			dollar = true
			nm = nm[1:]
		}
		if !identRE.MatchString(nm) {
			return nil, g.errorf(ln, "bad variable name %q", strings.TrimSpace(part))
		}
		if declared[nm] {
			return nil, g.errorf(ln, "variable %s assigned twice", nm)
		}
		x.names = append(x.names, nm)
	}
	e, err := compileExpr(strings.TrimSpace(rhs))
	if err != nil {
		return nil, g.errorf(ln, "%v", err)
	}
	if err := g.reads(e, ln, declared, true); err != nil {
		return nil, err
	}
	x.desc = e.src
	if !e.usesInitHelpers() {
		// A derived value, or a literal.
		if len(x.names) != 1 {
			return nil, g.errorf(ln, "several names need a sampling helper such as sample_sequential")
		}
		v, err := e.eval(&env{vars: baseEnv})
		if err != nil {
			return nil, g.errorf(ln, "%s at base values: %v", x.names[0], err)
		}
		if v.k != kNum && v.k != kStr {
			return nil, g.errorf(ln, "%s is a %s; an #init line gives a number or a text", x.names[0], v.kindName())
		}
		x.derived, x.factor, x.numeric = e, factorNone, v.k == kNum
		x.sign = "any"
		if v.k == kNum {
			switch v.n.Sign() {
			case 1:
				x.sign = "positive"
			case 0:
				x.sign = "nonnegative"
			}
		}
		if bt, ok := baseText[x.names[0]]; ok {
			x.baseText = []string{bt}
			if v.String() != bt {
				if r, ok := parseNumber(bt); !ok || v.k != kNum || r.Cmp(v.n) != 0 {
					return nil, g.errorf(ln, "%s computes to %s at base values but the text says %q", x.names[0], v, bt)
				}
			}
		}
		baseEnv[x.names[0]] = v
		declared[x.names[0]] = true
		return x, nil
	}
	x.draw = e
	// One trial draw at base values tells numbers from names and shows that
	// the domain is not empty.
	trial, err := drawVar(&variable{names: x.names, draw: e, numeric: dollar, factor: factorNumbers}, &env{vars: baseEnv, rng: newRand(1)})
	if err != nil {
		return nil, g.errorf(ln, "%s: %v", strings.Join(x.names, ", "), err)
	}
	x.numeric = trial[0].k == kNum
	x.factor = factorNames
	if x.numeric {
		x.factor = factorNumbers
	}
	for _, nm := range x.names {
		bt, ok := baseText[nm]
		if !ok {
			return nil, g.errorf(ln, "%s has no base value: no {%s,...} placeholder in the question", nm, nm)
		}
		var bv value
		if x.numeric {
			r, ok := parseNumber(bt)
			if !ok {
				return nil, g.errorf(ln, "base value %q of %s is not a number", bt, nm)
			}
			bv = numV(r)
		} else {
			bv = strV(bt)
		}
		x.base = append(x.base, bv)
		x.baseText = append(x.baseText, bt)
		baseEnv[nm] = bv
		declared[nm] = true
	}
	return x, nil
}

func sanitizeID(s string) string {
	var b strings.Builder
	for _, c := range s {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '_', c == '-', c == '.':
			b.WriteRune(c)
		default:
			b.WriteByte('_')
		}
	}
	out := b.String()
	if out == "" {
		return "x"
	}
	if len(out) > 80 {
		out = out[:80]
	}
	return out
}

// shorten cuts s to at most n runes, adding "..." when cut.
func shorten(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "..."
}
