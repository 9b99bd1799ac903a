package templates

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/fragility/fragility/internal/jsonerr"
)

// gsmsFile is one GSM-Symbolic annotated template file.
type gsmsFile struct {
	Question          *string         `json:"question"`
	Answer            *string         `json:"answer"`
	IDOrig            json.RawMessage `json:"id_orig"`
	IDShuffled        json.RawMessage `json:"id_shuffled"`
	QuestionAnnotated *string         `json:"question_annotated"`
	AnswerAnnotated   *string         `json:"answer_annotated"`
}

// jsonError turns an encoding/json error into one located by line.
func jsonError(path string, data []byte, err error) error {
	msg, line := jsonerr.Describe(data, err)
	return fileError(path, line, "%s", msg)
}

// lineAt returns the 1-based line of byte offset off.
func lineAt(data []byte, off int64) int { return jsonerr.Line(data, off) }

var (
	gsmsPlaceholderRE = regexp.MustCompile(`\{([A-Za-z_][A-Za-z0-9_]*)(?:,([^{}]*))?\}`)
	gsmsAnswerRE      = regexp.MustCompile(`^#answer\s*[:=]\s*(.*)$`)
	gsmsFinalRE       = regexp.MustCompile(`####\s*\{([^{}]*)\}\s*$`)
	finalAnswerRE     = regexp.MustCompile(`####\s*([^\n]*?)\s*$`)
)

// The difficulty levels of GSM-Symbolic (Mirzadeh et al. 2025, §4.4):
// "symbolic" templates restate a GSM8K question; "p1" and "p2" add one and
// two clauses to it.
const (
	LevelSymbolic = "symbolic"
	LevelP1       = "p1"
	LevelP2       = "p2"
)

// ParseLevel checks a difficulty level given by a user: "symbolic", "p1" or
// "p2" (any case), or "" for "infer it from the folder name".
func ParseLevel(s string) (string, error) {
	switch l := strings.ToLower(strings.TrimSpace(s)); l {
	case "", LevelSymbolic, LevelP1, LevelP2:
		return l, nil
	}
	return "", fmt.Errorf("unknown level %q (known: symbolic, p1, p2)", s)
}

// LevelFromPath infers the difficulty level of a GSM-Symbolic file from the
// name of the folder that holds it ("symbolic", "p1" or "p2", any case, as in
// the templates folder of apple/ml-gsm-symbolic); "" when the name is none of
// these.
func LevelFromPath(path string) string {
	l, err := ParseLevel(filepath.Base(filepath.Dir(path)))
	if err != nil {
		return ""
	}
	return l
}

// ParseGSMSymbolic parses one template in the GSM-Symbolic annotated syntax,
// at the level inferred from its folder's name (symbolic when the name says
// nothing); see ParseGSMSymbolicLevel.
func ParseGSMSymbolic(path string, data []byte) ([]*Template, error) {
	return ParseGSMSymbolicLevel(path, data, "")
}

// ParseGSMSymbolicLevel parses one template in the GSM-Symbolic annotated
// syntax (a JSON object with question, answer, question_annotated and
// optionally answer_annotated and id_orig; see README.md). path is used in
// errors, as Source, and for the template ID: "gsms-" + file name without
// extension, with the level after "gsms-" for p1 and p2 ("gsms-p1-rolls").
// level is "symbolic", "p1", "p2", or "" to infer it from the folder's name
// (LevelFromPath; symbolic when that says nothing).
//
// At level symbolic the question and answer fields are the GSM8K original:
// the base instance is that question verbatim, and the #answer expression at
// the base values must give its "#### N" (a template that does not is
// refused). At levels p1 and p2 those fields, and the default values of the
// placeholders, are the original the clauses were added to; they are not an
// instance of the harder problem (the added clauses can make its answer
// negative, break its conditions or divide by zero there), so they are kept
// for the record only (templates show) and never validated. The base
// assignment is then a valid draw (finishDrawn): every condition holds, the
// answer is not negative and, when the original's answer is a whole number,
// an integer; a derived value the question states as a whole number stays
// one. answer_annotated's "#### {expr}" is compared with #answer on valid
// draws, and a template whose two expressions differ on one is refused.
//
// Deviations that do not make the template wrong are recorded in
// Template.Warnings: annotated text that differs from the original question
// (byte offset and both snippets), base values outside a condition
// (conditions constrain new draws only), a placeholder written in different
// words in different places. Errors name the file, the line of
// question_annotated in it, and the line inside the annotation.
func ParseGSMSymbolicLevel(path string, data []byte, level string) (ts []*Template, err error) {
	defer func() {
		if !catchPanics {
			return
		}
		if r := recover(); r != nil {
			ts, err = nil, fileError(path, 0, "cannot parse GSM-Symbolic template")
		}
	}()
	lv, err := gsmsLevel(path, level)
	if err != nil {
		return nil, err
	}
	var f gsmsFile
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, jsonError(path, data, err)
	}
	if f.QuestionAnnotated == nil {
		return nil, fileError(path, 1, "a GSM-Symbolic template needs question_annotated")
	}
	if lv == LevelSymbolic && (f.Question == nil || f.Answer == nil) {
		return nil, fileError(path, 1, "a GSM-Symbolic template of level symbolic needs question, answer and question_annotated")
	}
	fileLine := 1
	if i := bytes.Index(data, []byte(`"question_annotated"`)); i >= 0 {
		fileLine = lineAt(data, int64(i))
	}
	id := gsmsID(path, lv)
	drawn := lv != LevelSymbolic
	g := &gsmsParser{path: path, fileLine: fileLine, draft: drawn, defaults: map[string]string{}}
	t := &Template{
		ID: id, Source: path, Line: fileLine, Format: "gsm-symbolic", Level: lv, IDOrig: jsonID(f.IDOrig),
		Relation: "gsm-symbolic", genericNoop: true, lenientBase: !drawn, drawnBase: drawn, filterDraws: true,
	}
	g.t = t
	if f.Question != nil && lv == LevelSymbolic {
		t.Title = shorten(*f.Question, 60)
	}
	t.Steps = gsmsSteps(&f, lv)
	t.maxAbs = big.NewRat(1000000, 1)
	expect, err := g.originalAnswer(&f)
	if err != nil {
		return nil, err
	}
	if err := g.parse(*f.QuestionAnnotated); err != nil {
		return nil, err
	}
	if drawn {
		if err := t.finishDrawn(); err != nil {
			return nil, g.errorf(g.answerLine, "%v", err)
		}
	} else {
		nw := len(t.Warnings)
		if err := t.finish(expect); err != nil {
			ok, miss := g.annotatedAnswerAgrees(f.AnswerAnnotated, expect, nw)
			var mm *answerMismatch
			switch {
			case ok:
			case miss != "" && errors.As(err, &mm):
				return nil, g.errorf(g.answerLine, "%v; %s", err, miss)
			default:
				return nil, g.errorf(g.answerLine, "%v", err)
			}
		}
		if err := g.checkMeetable(); err != nil {
			return nil, err
		}
	}
	if t.Title == "" {
		t.Title = shorten(strings.TrimSpace(t.render(t.question, t.base, nil)), 60)
	}
	t.Warnings = append(g.warnings, t.Warnings...)

	if lv == LevelSymbolic {
		// The base instance is the original question, verbatim; the
		// annotation's own rendering of the base values is compared with it.
		t.origQuestion = *f.Question
		if got := t.render(t.question, t.base, nil); got != *f.Question {
			t.Warnings = append(t.Warnings, textDiff(got, *f.Question))
		}
	}
	if f.AnswerAnnotated != nil {
		if err := g.checkAnswerAnnotated(*f.AnswerAnnotated, data); err != nil {
			return nil, err
		}
	}
	if lv == LevelSymbolic {
		attachNoopSet(t, jsonID(f.IDShuffled), *f.QuestionAnnotated) // the GSM-NoOp clause set (noopset.go)
	}
	return []*Template{t}, nil
}

// gsmsID is a GSM-Symbolic template's ID: "gsms-" and the file's name
// without extension, with the level after "gsms-" for p1 and p2.
func gsmsID(path, lv string) string {
	stem := strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	if lv != LevelSymbolic {
		return "gsms-" + lv + "-" + sanitizeID(stem)
	}
	return "gsms-" + sanitizeID(stem)
}

// gsmsLevel is the level of a GSM-Symbolic file: level when given, else the
// one its folder's name says, else symbolic.
func gsmsLevel(path, level string) (string, error) {
	lv, err := ParseLevel(level)
	if err != nil {
		return "", fileError(path, 0, "%v", err)
	}
	if lv == "" {
		if lv = LevelFromPath(path); lv == "" {
			lv = LevelSymbolic
		}
	}
	return lv, nil
}

// gsmsSteps is a GSM-Symbolic template's number of steps: the calculator
// annotations of the annotated solution; else those of the original's, plus
// one step per clause a level adds (p1 one, p2 two), as an estimate.
func gsmsSteps(f *gsmsFile, lv string) int {
	added := map[string]int{LevelSymbolic: 0, LevelP1: 1, LevelP2: 2}[lv]
	switch {
	case f.AnswerAnnotated != nil && strings.Contains(*f.AnswerAnnotated, "<<"):
		return strings.Count(*f.AnswerAnnotated, "<<")
	case f.Answer != nil:
		return max(1, strings.Count(*f.Answer, "<<")) + added
	default:
		return 1 + added
	}
}

// originalAnswer reads the original answer: at level symbolic, the "#### N"
// the base values must give (expect); at p1 and p2, a record that only tells
// whether the question asks for a whole number (expect is nil).
func (g *gsmsParser) originalAnswer(f *gsmsFile) (expect *big.Rat, err error) {
	t, lv := g.t, g.t.Level
	if lv == LevelSymbolic {
		m := finalAnswerRE.FindStringSubmatch(*f.Answer)
		if m == nil {
			return nil, fileError(g.path, 1, "answer does not end with \"#### N\"")
		}
		var ok bool
		if expect, ok = parseNumber(m[1]); !ok {
			return nil, fileError(g.path, 1, "answer: %q after #### is not a number", m[1])
		}
		t.setAnswerKind(expect)
	} else {
		rec := &gsmsRecord{defaults: g.defaults}
		if f.Question != nil {
			rec.question = *f.Question
		}
		t.AnswerType = "decimal"
		t.maxAbs = big.NewRat(1000000, 1)
		if f.Answer != nil {
			if m := finalAnswerRE.FindStringSubmatch(*f.Answer); m != nil {
				rec.answer = m[1]
				if r, ok := parseNumber(m[1]); ok {
					t.setAnswerKind(r)
				}
			}
		}
		t.answerSign = "nonnegative"
		if rec.question != "" || rec.answer != "" {
			t.record = rec
		}
	}
	return expect, nil
}

// setAnswerKind sets the answer type, sign and size limit from a reference
// answer: integer when it is one, the same sign, at most 100 times as large
// (and never less than a million).
func (t *Template) setAnswerKind(ref *big.Rat) {
	t.AnswerType = "decimal"
	if ref.IsInt() {
		t.AnswerType = "integer"
	}
	switch ref.Sign() {
	case 1:
		t.answerSign = "positive"
	case 0:
		t.answerSign = "nonnegative"
	default:
		t.answerSign = "any"
	}
	limit := new(big.Rat).Mul(new(big.Rat).Abs(ref), big.NewRat(100, 1))
	t.maxAbs = big.NewRat(1000000, 1)
	if limit.Cmp(t.maxAbs) > 0 {
		t.maxAbs = limit
	}
}

// annotatedAnswerAgrees is the fallback for a level-symbolic template whose
// #answer does not give the original's answer at the base values (t.finish
// failed): when answer_annotated's final "#### {expr}" gives the original's
// answer there, that expression becomes the template's answer
// (Template.AnswerSource is then AnswerFromAnnotated), the base is finished
// again (t.Warnings cut back to its first nw entries, which were there
// before the first finish), and a warning names both expressions. The
// original's stated answer decides between the template's two answer
// expressions; it reports false (the template stays refused) when #answer
// cannot be evaluated there (division by zero, ...), when there is no such
// expression, it cannot be read or evaluated, or it disagrees too. miss,
// when the expression was read and misses the original's answer, says what
// it gives instead, for the refusal ("answer_annotated's #### {n*k} gives
// 35, not 7 either"); "" otherwise.
func (g *gsmsParser) annotatedAnswerAgrees(ann *string, expect *big.Rat, nw int) (ok bool, miss string) {
	t := g.t
	if ann == nil || expect == nil || t.base == nil {
		return false, ""
	}
	m := gsmsFinalRE.FindStringSubmatch(*ann)
	if m == nil {
		return false, ""
	}
	e, err := compileExpr(m[1])
	if err != nil {
		return false, fmt.Sprintf("answer_annotated's #### {%s} cannot be read either: %v", m[1], err)
	}
	got, err := e.eval(&env{vars: t.baseValues()})
	switch {
	case err != nil:
		return false, fmt.Sprintf("answer_annotated's #### {%s} cannot be evaluated at base values either: %v", m[1], err)
	case got.k != kNum:
		return false, fmt.Sprintf("answer_annotated's #### {%s} gives %s, not a number", m[1], got)
	case got.n.Cmp(expect) != 0:
		return false, fmt.Sprintf("answer_annotated's #### {%s} gives %s, not %s either", m[1], numV(got.n), numV(expect))
	}
	old := t.answer
	wrong, err := old.eval(&env{vars: t.baseValues()})
	if err != nil || wrong.k != kNum {
		return false, "" // #answer is broken, not merely different
	}
	t.answer, t.Warnings = e, t.Warnings[:nw]
	if t.finish(expect) != nil {
		return false, ""
	}
	t.AnswerSource = AnswerFromAnnotated
	t.Warnings = append(t.Warnings, fmt.Sprintf("#answer %q (line %d) gives %s at base values, but the original's answer is %s; answer_annotated's #### {%s} gives it and is used",
		old.src, t.answerLine, wrong, numV(expect), m[1]))
	return true, ""
}

// checkMeetable refuses a level-symbolic template with a condition that the
// base values break (which alone is a warning: conditions constrain new
// draws only) and that no values of its variables can meet (neverMet): the
// condition is then met only by exemption, in draws that keep all of its
// variables at their base values, so those would never be re-drawn and the
// numbers and symbolic variants would silently keep them.
func (g *gsmsParser) checkMeetable() error {
	t := g.t
	for _, c := range t.conds {
		if !t.baseBroken[c] || !t.neverMet(c) {
			continue
		}
		var base []string
		for _, n := range c.e.vars {
			base = append(base, fmt.Sprintf("%s = %s", n, t.base[n]))
		}
		names := strings.Join(c.e.vars, ", ")
		return g.errorf(c.line, "condition %q holds for no values of %s, drawn or base (%s): %s would never be re-drawn",
			c.e.src, names, strings.Join(base, ", "), names)
	}
	return nil
}

// checkAnswerAnnotated compares the final "#### {expr}" of answer_annotated
// with #answer. At level symbolic #answer already agrees with the original
// answer at the base values, so a disagreement there is recorded as a
// warning. At p1 and p2 nothing else tells which of the two is right, so the
// two are compared on valid draws (compareOnDraws) and a template on which
// they differ is refused; a plain "#### N" there is the original's answer,
// a record, and is not compared.
func (g *gsmsParser) checkAnswerAnnotated(ann string, data []byte) error {
	t := g.t
	line := lineAt(data, int64(bytes.Index(data, []byte(`"answer_annotated"`))))
	if t.drawnBase {
		m := gsmsFinalRE.FindStringSubmatch(ann)
		if m == nil {
			return nil
		}
		e, err := compileExpr(m[1])
		if err != nil {
			t.Warnings = append(t.Warnings, fmt.Sprintf("answer_annotated: cannot read #### {%s}: %v", m[1], err))
			return nil
		}
		disagree, evalErr := t.compareOnDraws(e)
		if disagree != "" {
			return fileError(g.path, line, "answer_annotated: #### {%s} %s", m[1], disagree)
		}
		if evalErr != nil {
			t.Warnings = append(t.Warnings, fmt.Sprintf("answer_annotated: cannot evaluate #### {%s} %v", m[1], evalErr))
		}
		return nil
	}
	var got value
	var err error
	src := ""
	if m := gsmsFinalRE.FindStringSubmatch(ann); m != nil {
		src = m[1]
		var e *expression
		if e, err = compileExpr(src); err == nil {
			got, err = e.eval(&env{vars: t.baseValues()})
			if err == nil && got.k != kNum {
				err = fmt.Errorf("it is a %s", got.kindName())
			}
		}
	} else if m := finalAnswerRE.FindStringSubmatch(ann); m != nil {
		src = m[1]
		r, ok := parseQuantity(m[1])
		if !ok {
			return nil // no final answer to compare
		}
		got = numV(r)
	} else {
		return nil
	}
	if err != nil {
		t.Warnings = append(t.Warnings, fmt.Sprintf("answer_annotated: cannot evaluate #### {%s} at base values: %v", src, err))
		return nil
	}
	if got.n.Cmp(t.baseAnswer.n) == 0 {
		return nil
	}
	t.Warnings = append(t.Warnings, fmt.Sprintf("answer_annotated: #### {%s} gives %s at base values, but #answer %q gives %s (the original answer; #answer is used)",
		src, numV(got.n), t.answer.src, t.baseAnswer))
	return nil
}

// jsonID renders an id_orig field (a number or a text); "" when absent.
func jsonID(raw json.RawMessage) string {
	var n json.Number
	if json.Unmarshal(raw, &n) == nil {
		return n.String()
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return ""
}

// textDiff describes how the annotation at base values (got) differs from
// the original question: at the first difference that is not only in white
// space, the byte offset in the original and a snippet of each; or that the
// two differ only in white space (runs of spaces, as in "day.  She").
func textDiff(got, orig string) string {
	i, j := 0, 0
	firstSpace := -1
	for i < len(got) && j < len(orig) {
		gs, os := isSpace(got[i]), isSpace(orig[j])
		if gs && os {
			si, sj := i, j
			for i < len(got) && isSpace(got[i]) {
				i++
			}
			for j < len(orig) && isSpace(orig[j]) {
				j++
			}
			if got[si:i] != orig[sj:j] && firstSpace < 0 {
				firstSpace = sj
			}
			continue
		}
		if got[i] != orig[j] {
			break
		}
		i++
		j++
	}
	// Trailing white space only.
	if strings.TrimSpace(got[i:]) == "" && strings.TrimSpace(orig[j:]) == "" {
		if firstSpace < 0 {
			firstSpace = j
		}
		return fmt.Sprintf("text differs from the original question only in white space (first at byte %d)", firstSpace)
	}
	return fmt.Sprintf("text differs from the original question at byte %d: annotation %q, original %q (the base instance is the original)",
		j, snippet(got, i), snippet(orig, j))
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// snippet is up to 30 characters of s from byte i.
func snippet(s string, i int) string {
	if i > len(s) {
		i = len(s)
	}
	for i > 0 && i < len(s) && !utf8.RuneStart(s[i]) {
		i--
	}
	return shorten(s[i:], 30)
}

type gsmsParser struct {
	path       string
	fileLine   int
	t          *Template
	answerLine int
	warnings   []string
	occ        map[string][]occurrence // placeholders by variable
	// draft: the placeholders' default values are the original's, a record
	// (GSM-Symbolic p1/p2): they are not read as base values, and a
	// provisional draw stands in for them until finishDrawn.
	draft    bool
	defaults map[string]string // draft: variable → first default text
}

func (g *gsmsParser) errorf(line int, format string, args ...any) error {
	return fileError(g.path, g.fileLine, "question_annotated line %d: %s", line, fmt.Sprintf(format, args...))
}

// occurrence is one placeholder in the annotated text.
type occurrence struct {
	base string // verbatim base text
	line int
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
	tx, occ, bare := g.questionText(body)
	t.question = tx

	declared := map[string]bool{}
	baseEnv := map[string]value{}
	answerSrc, err := g.blocks(lines, textEnd, declared, occ, baseEnv)
	if err != nil {
		return err
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
	if err := g.resolvePlaceholders(tx, declared, occ, bare); err != nil {
		return err
	}
	if err := t.plan(); err != nil {
		return g.errorf(g.answerLine, "%v", err)
	}
	return g.unstatedBases(baseEnv)
}

// questionText reads the question's text and placeholders with their
// verbatim base text (occ, also set as g.occ); bare holds the lines of the
// placeholders {name} written without a base text.
func (g *gsmsParser) questionText(body string) (tx *text, occ map[string][]occurrence, bare map[string][]int) {
	tx = &text{}
	occ = map[string][]occurrence{}
	bare = map[string][]int{} // {name} without a base text: lines
	g.occ = occ
	last := 0
	for _, m := range gsmsPlaceholderRE.FindAllStringSubmatchIndex(body, -1) {
		if m[0] > last {
			tx.parts = append(tx.parts, textPart{lit: body[last:m[0]]})
		}
		name := body[m[2]:m[3]]
		line := strings.Count(body[:m[0]], "\n") + 1
		if m[4] < 0 {
			// "{name}" without a base text: the value of a computed
			// variable (or literal braces, when no #init line declares it)
			tx.parts = append(tx.parts, textPart{ph: name, gsms: true, lit: body[m[0]:m[1]]})
			bare[name] = append(bare[name], line)
			last = m[1]
			continue
		}
		bt := strings.TrimSpace(body[m[4]:m[5]])
		occ[name] = append(occ[name], occurrence{bt, line})
		tx.parts = append(tx.parts, textPart{ph: name, base: bt, gsms: true})
		last = m[1]
	}
	if last < len(body) {
		tx.parts = append(tx.parts, textPart{lit: body[last:]})
	}
	return tx, occ, bare
}

// blocks reads the #init, #conditions and #answer blocks from lines[textEnd:]
// into g.t's variables and conditions, and returns the answer's source ("" when
// there is no #answer line).
func (g *gsmsParser) blocks(lines []string, textEnd int, declared map[string]bool, occ map[string][]occurrence, baseEnv map[string]value) (answerSrc string, err error) {
	t := g.t
	block := ""
	for i := textEnd; i < len(lines); i++ {
		ln := i + 1
		l := strings.TrimSpace(lines[i])
		switch {
		case l == "":
			continue
		case strings.HasPrefix(l, "#init"):
			block = "init"
			if strings.TrimSpace(strings.TrimPrefix(strings.TrimPrefix(l, "#init"), ":")) != "" {
				return "", g.errorf(ln, "unexpected text after #init:")
			}
			continue
		case strings.HasPrefix(l, "#conditions"):
			block = "conditions"
			continue
		case strings.HasPrefix(l, "#answer"):
			m := gsmsAnswerRE.FindStringSubmatch(l)
			if m == nil || strings.TrimSpace(m[1]) == "" {
				return "", g.errorf(ln, "write #answer: EXPR")
			}
			if answerSrc != "" {
				return "", g.errorf(ln, "a second #answer")
			}
			answerSrc, g.answerLine, block = strings.TrimSpace(m[1]), ln, "answer"
			continue
		case strings.HasPrefix(l, "#"):
			return "", g.errorf(ln, "unknown block %q (known: #init, #conditions, #answer)", l)
		}
		if !strings.HasPrefix(l, "-") || block == "" || block == "answer" {
			return "", g.errorf(ln, "unexpected line %q (block lines start with \"- \")", shorten(l, 40))
		}
		item := strings.TrimSpace(strings.TrimPrefix(l, "-"))
		switch block {
		case "init":
			x, err := g.initLine(item, ln, declared, occ, baseEnv)
			if err != nil {
				return "", err
			}
			t.vars = append(t.vars, x)
		case "conditions":
			e, err := compileExpr(item)
			if err != nil {
				return "", g.errorf(ln, "%v", err)
			}
			if err := g.reads(e, ln, declared, false); err != nil {
				return "", err
			}
			t.conds = append(t.conds, &condition{e: e, line: ln})
		}
	}
	return answerSrc, nil
}

// resolvePlaceholders checks that every {name,base} placeholder has an #init
// line, and turns a bare {name} into literal text when name is no variable;
// a drawn variable's bare {name} needs a base text somewhere (drafts excepted).
func (g *gsmsParser) resolvePlaceholders(tx *text, declared map[string]bool, occ map[string][]occurrence, bare map[string][]int) error {
	t := g.t
	for name, os := range occ {
		if !declared[name] {
			return g.errorf(os[0].line, "placeholder {%s,...} has no #init line", name)
		}
	}
	for i, p := range tx.parts {
		if p.ph == "" || p.lit == "" {
			continue
		}
		x := t.variable(p.ph)
		switch {
		case x == nil:
			tx.parts[i] = textPart{lit: p.lit} // not a variable: literal text
		case x.derived == nil && len(occ[p.ph]) == 0 && !g.draft:
			return g.errorf(bare[p.ph][0], "{%s} has no base text: write {%s,BASE} where the question first states it", p.ph, p.ph)
		default:
			tx.parts[i].lit = ""
		}
	}
	return nil
}

// unstatedBases gives a base value to each drawn variable that the text never
// states: the value its equality condition fixes at base values, else the
// one value of its domain that the conditions reading it leave at base
// values (uniqueBase), or (when no condition fixes it) its domain's first
// value, noted in a warning.
func (g *gsmsParser) unstatedBases(baseEnv map[string]value) error {
	t := g.t
	for _, x := range t.order {
		if x.derived != nil {
			if _, ok := baseEnv[x.names[0]]; ok {
				continue
			}
			v, err := x.derived.eval(&env{vars: baseEnv})
			if err != nil && g.draft {
				continue // computed in each draw (finishDrawn)
			}
			if err != nil {
				return g.errorf(x.line, "%s at base values: %v", x.names[0], err)
			}
			if err := g.setDerived(x, v, g.occ); err != nil {
				return err
			}
			baseEnv[x.names[0]] = v
			continue
		}
		if g.draft && x.solve == nil && !slices.ContainsFunc(x.names, func(n string) bool { return slices.Contains(t.question.placeholders(), n) }) {
			g.unstatedInCondition(x, "it is drawn in each instance")
		}
		if len(x.base) == len(x.names) {
			continue
		}
		if g.draft {
			continue // no provisional value: finishDrawn draws one
		}
		if x.solve != nil {
			v, err := x.solve.eval(&env{vars: baseEnv})
			if err != nil {
				return g.errorf(x.line, "%s at base values (from condition line %d): %v", x.names[0], x.solveLine, err)
			}
			if v.k != kNum {
				return g.errorf(x.line, "%s at base values is a %s", x.names[0], v.kindName())
			}
			x.base = []value{v}
			baseEnv[x.names[0]] = v
			continue
		}
		if v, ok := t.uniqueBase(x, baseEnv); ok {
			// The conditions fix it at the stated base values (a
			// width from a stated area and difference of sides).
			x.base = []value{v}
			baseEnv[x.names[0]] = v
			continue
		}
		d, err := x.domainAt(&env{vars: baseEnv})
		if err != nil {
			return g.errorf(x.line, "%s: %v", strings.Join(x.names, ", "), err)
		}
		x.base = nil
		for i, nm := range x.names {
			v := asWorded(d.at(int64(min(int64(i), d.n-1))))
			x.base = append(x.base, v)
			baseEnv[nm] = v
		}
		g.unstatedInCondition(x, fmt.Sprintf("its base value is taken as %s", x.base[0]))
	}
	return nil
}

// unstatedInCondition warns when a condition reads drawn variable x, which
// the question never states and no condition fixes: an unused variable is
// harmless, but one a condition reads makes the conditions depend on a value
// the question never shows. note ends the warning.
func (g *gsmsParser) unstatedInCondition(x *variable, note string) {
	for _, c := range g.t.conds {
		if slices.ContainsFunc(x.names, func(n string) bool { return slices.Contains(c.e.vars, n) }) {
			g.warnings = append(g.warnings, fmt.Sprintf("%s is never stated in the question, and no condition fixes it, but condition %q (line %d) reads it; %s",
				strings.Join(x.names, ", "), c.e.src, c.line, note))
			return
		}
	}
}

// reads checks that e reads only declared variables (and, in #init lines,
// pools), and calls sampling helpers only in #init lines.
func (g *gsmsParser) reads(e *expression, ln int, declared map[string]bool, init bool) error {
	for _, v := range e.vars {
		if declared[v] || constants[v].k != 0 {
			continue
		}
		if _, ok := poolValues(v); ok && init {
			continue
		}
		if init {
			if looksLikePool(v) {
				return g.errorf(ln, "unknown pool %q (known: %s)", v, strings.Join(PoolNames(), ", "))
			}
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

// looksLikePool reports whether an unknown name is probably meant as a pool
// (it shares a word with a known pool's name: "fraction_words", "names_x").
func looksLikePool(name string) bool {
	for _, p := range PoolNames() {
		for _, w := range strings.Split(p, "_") {
			if len(w) >= 4 && strings.Contains(name, strings.TrimSuffix(w, "s")) {
				return true
			}
		}
	}
	return false
}

// initLine reads "- $x = range(2, 20)", "- a, b = sample_sequential(names, 2)",
// "- $frac = sample(fraction_alnum)", "- $r = [0.25, 0.5]" (a list or pool:
// one value is drawn from it) or a derived "- total = a + b".
func (g *gsmsParser) initLine(item string, ln int, declared map[string]bool, occ map[string][]occurrence, baseEnv map[string]value) (*variable, error) {
	lhs, rhs, ok := strings.Cut(item, "=")
	if !ok || strings.TrimSpace(rhs) == "" || strings.HasPrefix(rhs, "=") {
		return nil, g.errorf(ln, "an #init line is \"- name = expression\"")
	}
	x := &variable{line: ln, decimals: -1}
	dollar, err := g.initNames(x, lhs, ln, declared)
	if err != nil {
		return nil, err
	}
	e, err := compileExpr(strings.TrimSpace(rhs))
	if err != nil {
		return nil, g.errorf(ln, "%v", err)
	}
	if err := g.reads(e, ln, declared, true); err != nil {
		return nil, err
	}
	x.desc = e.src
	drawn := e.usesInitHelpers()
	if !drawn && len(x.names) == 1 {
		// A list or a pool on the right is drawn from ("$r = [0.25, 0.5]").
		if v, err := e.eval(&env{vars: baseEnv}); err == nil && (v.k == kList || v.k == kDomain) {
			drawn = true
		}
	}
	if !drawn {
		return g.initDerived(x, e, ln, declared, occ, baseEnv)
	}
	x.draw = e
	// One trial draw at base values tells numbers from names and shows that
	// the domain is not empty.
	trial, err := drawVar(&variable{names: x.names, draw: e, numeric: dollar, factor: factorNumbers}, &env{vars: baseEnv, rng: newRand(1)})
	if err != nil && !g.draft {
		return nil, g.errorf(ln, "%s: %v", strings.Join(x.names, ", "), err)
	}
	if err != nil {
		// At provisional values that are not an instance (p1/p2) a domain
		// may be empty: the "$" marker tells numbers from names, and the
		// draws of finishDrawn show whether the domain ever has a value.
		trial = nil
		x.numeric = dollar
	} else {
		x.numeric = trial[0].k == kNum
	}
	x.factor = factorNames
	if x.numeric {
		x.factor = factorNumbers
	}
	if g.draft {
		g.draftDrawn(x, trial, declared, occ, baseEnv)
		return x, nil
	}
	if err := g.drawnBases(x, ln, declared, occ, baseEnv); err != nil {
		return nil, err
	}
	return x, nil
}

// initNames reads the names on the left of an #init line into x.names;
// dollar tells whether one of them is marked "$" (a number).
func (g *gsmsParser) initNames(x *variable, lhs string, ln int, declared map[string]bool) (dollar bool, err error) {
	for _, part := range strings.Split(lhs, ",") {
		nm := strings.TrimSpace(part)
		if strings.HasPrefix(nm, "$") {
			dollar = true
			nm = nm[1:]
		}
		if !identRE.MatchString(nm) {
			return false, g.errorf(ln, "bad variable name %q", strings.TrimSpace(part))
		}
		if declared[nm] || slices.Contains(x.names, nm) {
			return false, g.errorf(ln, "variable %s assigned twice", nm)
		}
		if _, ok := helpers[nm]; ok {
			return false, g.errorf(ln, "variable name %s is a helper's name", nm)
		}
		x.names = append(x.names, nm)
	}
	return dollar, nil
}

// initDerived reads a derived value, or a literal, on an #init line: its base
// value is computed at the base values of the variables before it, or later
// when it reads one the text never states (or, in a draft, fails there).
func (g *gsmsParser) initDerived(x *variable, e *expression, ln int, declared map[string]bool, occ map[string][]occurrence, baseEnv map[string]value) (*variable, error) {
	if len(x.names) != 1 {
		return nil, g.errorf(ln, "several names need a sampling helper such as sample_sequential")
	}
	nm := x.names[0]
	x.derived, x.factor = e, factorNone
	declared[nm] = true
	for _, r := range e.vars {
		if _, ok := baseEnv[r]; !ok && declared[r] && r != nm {
			// It reads a variable the text never states: computed
			// once that one has its base value (unstatedBases).
			x.numeric, x.sign = true, "any"
			if os, ok := occ[nm]; ok {
				x.baseText = []string{os[0].base}
			}
			g.draftDerived(x, occ)
			return x, nil
		}
	}
	v, err := e.eval(&env{vars: baseEnv})
	if err != nil && g.draft {
		// At the provisional values (say, a division by zero): the
		// value is computed in each draw (finishDrawn).
		x.numeric, x.sign = true, "any"
		g.draftDerived(x, occ)
		return x, nil
	}
	if err != nil {
		return nil, g.errorf(ln, "%s at base values: %v", nm, err)
	}
	if err := g.setDerived(x, v, occ); err != nil {
		return nil, err
	}
	baseEnv[nm] = v
	return x, nil
}

// drawnBases reads the base values of a drawn variable's names from the
// question's placeholders (all of its names stated, or none), declares the
// names and adds the base values to baseEnv.
func (g *gsmsParser) drawnBases(x *variable, ln int, declared map[string]bool, occ map[string][]occurrence, baseEnv map[string]value) error {
	dom, _ := x.domainAt(&env{vars: baseEnv}) // nil when the domain depends on the draw itself
	stated := 0
	for _, nm := range x.names {
		if _, ok := occ[nm]; ok {
			stated++
		}
	}
	if stated != 0 && stated != len(x.names) {
		for _, nm := range x.names {
			if _, ok := occ[nm]; !ok {
				return g.errorf(ln, "%s has no base value: no {%s,...} placeholder in the question", nm, nm)
			}
		}
	}
	for _, nm := range x.names {
		declared[nm] = true
		os, ok := occ[nm]
		if !ok {
			continue // never stated: its base value comes from a condition (unstatedBases)
		}
		bv, err := g.stateBase(x, nm, os, dom, ln)
		if err != nil {
			return err
		}
		if x.numeric && len(x.names) == 1 {
			if _, ok := parseNumber(os[0].base); ok {
				x.minDecimals = decimalPlaces(strings.TrimSpace(os[0].base))
			}
		}
		x.base = append(x.base, bv)
		x.baseText = append(x.baseText, os[0].base)
		baseEnv[nm] = bv
	}
	return nil
}

// stateBase is the base value of name nm of x from its placeholders os: a
// number stated the same in every place, or a text (a warning when it is
// written in several forms).
func (g *gsmsParser) stateBase(x *variable, nm string, os []occurrence, dom *domain, ln int) (value, error) {
	var bv value
	if x.numeric {
		for i, o := range os {
			v, ok := baseNumber(o.base, dom)
			if !ok {
				return value{}, g.errorf(ln, "base value %q of %s is not a number", o.base, nm)
			}
			if i == 0 {
				bv = v
			} else if !v.equal(bv) {
				return value{}, g.errorf(o.line, "{%s} has two base values, %q (%s) and %q (%s)", nm, os[0].base, numV(bv.n), o.base, numV(v.n))
			}
		}
		return bv, nil
	}
	bv = strV(os[0].base)
	var forms []string
	for _, o := range os {
		if !slices.ContainsFunc(forms, func(f string) bool { return strings.EqualFold(f, o.base) }) {
			forms = append(forms, o.base)
		}
	}
	if len(forms) > 1 {
		g.warnings = append(g.warnings, fmt.Sprintf("{%s} is written %s at base values; it is one variable (a draw shows one value in every place)",
			nm, quoteJoin(forms)))
	}
	return bv, nil
}

// setDerived records the base value v of a derived variable: its kind and
// sign, and checks it against the text where the question states it.
func (g *gsmsParser) setDerived(x *variable, v value, occ map[string][]occurrence) error {
	nm := x.names[0]
	if v.k != kNum && v.k != kStr {
		return g.errorf(x.line, "%s is a %s; an #init line gives a number or a text", nm, v.kindName())
	}
	x.numeric = v.k == kNum
	x.sign = "any"
	if v.k == kNum {
		switch v.n.Sign() {
		case 1:
			x.sign = "positive"
		case 0:
			x.sign = "nonnegative"
		}
	}
	if g.draft {
		g.draftDerived(x, occ)
		return nil
	}
	if os, ok := occ[nm]; ok {
		x.baseText = []string{os[0].base}
		for _, o := range os {
			if v.String() == o.base {
				continue
			}
			if r, ok := parseQuantity(o.base); !ok || v.k != kNum || r.Cmp(v.n) != 0 {
				return g.errorf(x.line, "%s computes to %s at base values but the text says %q", nm, v, o.base)
			}
		}
	}
	return nil
}

// draftDrawn records the defaults of a drawn variable of a template whose
// defaults are a record (p1/p2), and gives it a provisional value that later
// #init lines may read while the template is parsed: the default where it
// reads as a value (as at level symbolic, so that the original's part of
// the problem stays consistent), else the trial draw, else none (finishDrawn
// replaces all of them by a valid draw).
func (g *gsmsParser) draftDrawn(x *variable, trial []value, declared map[string]bool, occ map[string][]occurrence, baseEnv map[string]value) {
	dom, _ := x.domainAt(&env{vars: baseEnv})
	x.base = nil
	for i, nm := range x.names {
		declared[nm] = true
		var pv value
		if trial != nil {
			pv = trial[i]
		}
		if os, ok := occ[nm]; ok {
			g.defaults[nm] = os[0].base
			switch {
			case !x.numeric:
				pv = strV(os[0].base)
			default:
				if v, ok := baseNumber(os[0].base, dom); ok {
					pv = v
				}
				if _, ok := parseNumber(os[0].base); ok && len(x.names) == 1 {
					x.minDecimals = decimalPlaces(strings.TrimSpace(os[0].base))
				}
			}
		}
		if pv.k == 0 {
			continue
		}
		x.base = append(x.base, pv)
		baseEnv[nm] = pv
	}
	if len(x.base) != len(x.names) {
		x.base = nil // some have no provisional value: none is read
		for _, nm := range x.names {
			delete(baseEnv, nm)
		}
	}
}

// draftDerived sets the rules of a derived value of a template whose
// defaults are a record (p1/p2), from the question's text alone: one the
// question states is a quantity and must not be negative, and must be an
// integer where its default is written as a whole number; one it never
// states may take any sign. Its default text is recorded.
func (g *gsmsParser) draftDerived(x *variable, occ map[string][]occurrence) {
	nm := x.names[0]
	x.baseText = nil
	os, ok := occ[nm]
	if !ok {
		x.sign = "any"
		return
	}
	g.defaults[nm] = os[0].base
	if !x.numeric {
		return
	}
	x.sign = "nonnegative"
	if r, ok := parseQuantity(os[0].base); ok && r.IsInt() {
		x.integral = true
	}
}

// baseNumber reads the base text of a number variable: the entry of its
// domain written that way (any case: "six-sided" in a list of (form, value)
// pairs, "half" in a fraction pool), or else a number in digits or words.
func baseNumber(bt string, dom *domain) (value, bool) {
	if dom != nil && dom.items != nil {
		for _, it := range dom.items {
			w := asWorded(it)
			if w.k == kNum && strings.EqualFold(w.String(), bt) {
				return wordedV(w.n, bt), true
			}
		}
	}
	r, ok := parseQuantity(bt)
	if !ok {
		return value{}, false
	}
	return numV(r), true
}

func quoteJoin(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = strconv.Quote(s)
	}
	if len(q) == 2 {
		return q[0] + " and " + q[1]
	}
	return strings.Join(q[:len(q)-1], ", ") + " and " + q[len(q)-1]
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
