package templates

import (
	"errors"
	"fmt"
	"math/big"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// fileError is an error located in a template file.
func fileError(path string, line int, format string, args ...any) error {
	if line > 0 {
		return fmt.Errorf("%s:%d: %s", path, line, fmt.Sprintf(format, args...))
	}
	return fmt.Errorf("%s: %s", path, fmt.Sprintf(format, args...))
}

var yamlLineRE = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// blockContextError reports whether a yaml.v3 syntax message is one that
// it names at the start of the enclosing block mapping or sequence rather
// than where the problem is.
func blockContextError(msg string) bool {
	return msg == "did not find expected key" || msg == "did not find expected '-' indicator"
}

// maxErrorScanLines bounds the files yamlErrorLine scans.
const maxErrorScanLines = 1000

// yamlErrorLine returns the 1-based line of a YAML syntax error in data:
// the first line n such that the first n lines do not parse. yaml.v3
// names the line of the error's context instead, and for a parser error
// that line counted from 0: a mis-indented key deep in a mapping was
// reported at the line before the mapping, and an unclosed brace at the
// line before it. It returns 0 when
// every prefix parses or the file is longer than maxErrorScanLines.
func yamlErrorLine(data []byte) int {
	lines := strings.SplitAfter(string(data), "\n")
	if len(lines) > maxErrorScanLines {
		return 0
	}
	var prefix strings.Builder
	for i, l := range lines {
		prefix.WriteString(l)
		var n yaml.Node
		if yaml.Unmarshal([]byte(prefix.String()), &n) != nil {
			return i + 1
		}
	}
	return 0
}

// ParseOwn parses templates in the package's own format (YAML, or JSON, which
// is read as YAML) from data; path is used in errors and as Source. The file
// holds one template (a mapping) or several (a sequence of mappings). Every
// template is fully checked at its base values. Errors name the file and line.
func ParseOwn(path string, data []byte) (ts []*Template, err error) {
	defer func() {
		if !catchPanics {
			return
		}
		if r := recover(); r != nil {
			ts, err = nil, fileError(path, 0, "cannot parse template file")
		}
	}()
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		msg := err.Error()
		if m := yamlLineRE.FindStringSubmatch(msg); m != nil {
			n, _ := strconv.Atoi(m[1])
			if at := yamlErrorLine(data); at > 0 {
				if blockContextError(m[2]) && at > n+1 {
					return nil, fileError(path, at, "syntax error: %s (wrong indentation? the parser was in the block that starts on line %d)", m[2], n+1)
				}
				return nil, fileError(path, at, "syntax error: %s", m[2])
			}
			return nil, fileError(path, n, "syntax error: %s", m[2])
		}
		return nil, fileError(path, 0, "syntax error: %s", strings.TrimPrefix(msg, "yaml: "))
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 {
		return nil, fileError(path, 0, "empty template file")
	}
	root := doc.Content[0]
	var items []*yaml.Node
	switch root.Kind {
	case yaml.MappingNode:
		items = []*yaml.Node{root}
	case yaml.SequenceNode:
		items = root.Content
	default:
		return nil, fileError(path, root.Line, "a template file holds a mapping (one template) or a list of them")
	}
	if len(items) == 0 {
		return nil, fileError(path, root.Line, "no template in file")
	}
	for _, it := range items {
		t, err := parseOwnTemplate(path, it)
		if err != nil {
			return nil, err
		}
		ts = append(ts, t)
	}
	return ts, nil
}

type ownParser struct {
	path string
	t    *Template
}

func (p *ownParser) errorf(n *yaml.Node, format string, args ...any) error {
	line := 0
	if n != nil {
		line = n.Line
	}
	prefix := ""
	if p.t != nil && p.t.ID != "" {
		prefix = "template " + p.t.ID + ": "
	}
	return fileError(p.path, line, "%s%s", prefix, fmt.Sprintf(format, args...))
}

// fields turns a mapping node into key → value, refusing unknown keys,
// duplicates and aliases.
func (p *ownParser) fields(n *yaml.Node, what string, known ...string) (map[string]*yaml.Node, []string, error) {
	if n.Kind != yaml.MappingNode {
		return nil, nil, p.errorf(n, "%s must be a mapping", what)
	}
	out := map[string]*yaml.Node{}
	var order []string
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			return nil, nil, p.errorf(k, "%s: keys must be plain names", what)
		}
		if v.Kind == yaml.AliasNode || k.Kind == yaml.AliasNode {
			return nil, nil, p.errorf(v, "%s: YAML aliases are not supported", what)
		}
		if known != nil && !slices.Contains(known, k.Value) {
			return nil, nil, p.errorf(k, "%s: unknown key %q (known: %s)", what, k.Value, strings.Join(known, ", "))
		}
		if _, dup := out[k.Value]; dup {
			return nil, nil, p.errorf(k, "%s: key %q given twice", what, k.Value)
		}
		out[k.Value] = v
		order = append(order, k.Value)
	}
	return out, order, nil
}

func (p *ownParser) scalar(n *yaml.Node, what string) (string, error) {
	if n.Kind != yaml.ScalarNode {
		return "", p.errorf(n, "%s must be a single value", what)
	}
	return n.Value, nil
}

func (p *ownParser) compile(n *yaml.Node, what string) (*expression, error) {
	s, err := p.scalar(n, what)
	if err != nil {
		return nil, err
	}
	e, err := compileExpr(s)
	if err != nil {
		return nil, p.errorf(n, "%s: %v", what, err)
	}
	for _, c := range e.calls {
		if initOnly[c] {
			return nil, p.errorf(n, "%s: %s draws at random; in this format use pool, choices or min/max", what, c)
		}
	}
	return e, nil
}

var identRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

var ownKeys = []string{"id", "title", "relation", "steps", "answer_type", "answer_sign", "max_value",
	"variables", "conditions", "answer", "expect", "question", "paraphrase", "noop"}

// parseOwnTemplate reads one template of our own format, step by step in the
// order of its checks, and finishes it (base assignment computed and checked).
func parseOwnTemplate(path string, n *yaml.Node) (*Template, error) {
	p := &ownParser{path: path}
	f, _, err := p.fields(n, "template", ownKeys...)
	if err != nil {
		return nil, err
	}
	t := &Template{Source: path, Line: n.Line, Format: "own", AnswerType: "integer", answerSign: "positive",
		maxAbs: big.NewRat(1000000, 1)}
	for _, k := range []string{"id", "relation", "steps", "variables", "answer", "question"} {
		if f[k] == nil {
			return nil, p.errorf(n, "template: missing %q", k)
		}
	}
	if err := p.header(t, f); err != nil {
		return nil, err
	}
	declared, err := p.variables(t, f)
	if err != nil {
		return nil, err
	}
	// No-op clauses come before the answer so that reading one of their
	// variables is reported as such, not as an unknown variable.
	noopVars, err := p.noops(t, f, declared)
	if err != nil {
		return nil, err
	}
	refs := &ownRefs{p: p, declared: declared, noopVars: noopVars}
	for _, x := range t.vars {
		if x.derived != nil {
			if err := checkRefsDerived(p, x, noopVars); err != nil {
				return nil, err
			}
		}
	}
	if err := p.conditionsAndAnswer(t, f, refs); err != nil {
		return nil, err
	}
	if err := p.texts(t, f, refs); err != nil {
		return nil, err
	}
	var expect *big.Rat
	if f["expect"] != nil {
		s, err := p.scalar(f["expect"], "expect")
		if err != nil {
			return nil, err
		}
		r, ok := parseNumber(s)
		if !ok {
			return nil, p.errorf(f["expect"], "expect %q is not a number", s)
		}
		expect = r
	}
	if err := t.finish(expect); err != nil {
		return nil, p.errorf(fieldNode(err, f, n), "%v", err)
	}
	return t, nil
}

// fieldNode returns the node of the template field err is about (an error
// with a Field method, such as finish's), so that its line is the field's,
// or n when err names none or the field is absent.
func fieldNode(err error, f map[string]*yaml.Node, n *yaml.Node) *yaml.Node {
	var fe interface{ Field() string }
	if errors.As(err, &fe) && f[fe.Field()] != nil {
		return f[fe.Field()]
	}
	return n
}

// header reads id, title, relation, steps, answer_type, answer_sign and
// max_value into t, and sets p.t.
func (p *ownParser) header(t *Template, f map[string]*yaml.Node) error {
	var err error
	if t.ID, err = p.scalar(f["id"], "id"); err != nil {
		return err
	}
	if !idRE.MatchString(t.ID) {
		return p.errorf(f["id"], "id %q: use letters, digits, '_', '-' and '.' (at most 100)", t.ID)
	}
	p.t = t
	t.Title = t.ID
	if f["title"] != nil {
		if t.Title, err = p.scalar(f["title"], "title"); err != nil {
			return err
		}
	}
	if t.Relation, err = p.scalar(f["relation"], "relation"); err != nil {
		return err
	}
	if !relationRE.MatchString(t.Relation) {
		return p.errorf(f["relation"], "relation %q: use a lowercase slug such as two-rate-sale", t.Relation)
	}
	steps, err := p.scalar(f["steps"], "steps")
	if err != nil {
		return err
	}
	if t.Steps, err = strconv.Atoi(steps); err != nil || t.Steps < 1 || t.Steps > 100 {
		return p.errorf(f["steps"], "steps %q: give a whole number from 1 to 100", steps)
	}
	if f["answer_type"] != nil {
		if t.AnswerType, err = p.scalar(f["answer_type"], "answer_type"); err != nil {
			return err
		}
		if t.AnswerType != "integer" && t.AnswerType != "decimal" {
			return p.errorf(f["answer_type"], "answer_type %q: integer or decimal", t.AnswerType)
		}
	}
	if f["answer_sign"] != nil {
		if t.answerSign, err = p.signOf(f["answer_sign"]); err != nil {
			return err
		}
	}
	if f["max_value"] != nil {
		s, err := p.scalar(f["max_value"], "max_value")
		if err != nil {
			return err
		}
		r, ok := parseNumber(s)
		if !ok || r.Sign() <= 0 {
			return p.errorf(f["max_value"], "max_value %q: give a positive number", s)
		}
		t.maxAbs = r
	}
	return nil
}

// variables reads the variables, in order (each may read only earlier ones),
// into t.vars and returns the set of their names.
func (p *ownParser) variables(t *Template, f map[string]*yaml.Node) (map[string]bool, error) {
	declared := map[string]bool{}
	vf, order, err := p.fields(f["variables"], "variables")
	if err != nil {
		return nil, err
	}
	if len(order) == 0 {
		return nil, p.errorf(f["variables"], "variables: none declared")
	}
	for i, key := range order {
		x, err := p.parseVariable(key, f["variables"].Content[2*i], vf[key], declared, true)
		if err != nil {
			return nil, err
		}
		t.vars = append(t.vars, x)
		for _, nm := range x.names {
			declared[nm] = true
		}
	}
	return declared, nil
}

// noops reads the no-op clauses into t.noops and returns their variables'
// names, each with its clause's line.
func (p *ownParser) noops(t *Template, f map[string]*yaml.Node, declared map[string]bool) (map[string]int, error) {
	noopVars := map[string]int{}
	if f["noop"] == nil {
		return noopVars, nil
	}
	if f["noop"].Kind != yaml.SequenceNode {
		return nil, p.errorf(f["noop"], "noop must be a list of clauses")
	}
	for _, cn := range f["noop"].Content {
		c, err := p.parseNoop(cn, declared)
		if err != nil {
			return nil, err
		}
		for _, x := range c.vars {
			for _, nm := range x.names {
				noopVars[nm] = c.line
			}
		}
		t.noops = append(t.noops, c)
	}
	return noopVars, nil
}

// ownRefs checks what conditions and the answer read: declared variables
// and constants, and no variable of a no-op clause.
type ownRefs struct {
	p        *ownParser
	declared map[string]bool
	noopVars map[string]int
}

// check is an error at node, naming what, when e reads a no-op clause's
// variable or an unknown name.
func (r *ownRefs) check(e *expression, node *yaml.Node, what string) error {
	for _, v := range e.vars {
		if line, ok := r.noopVars[v]; ok {
			return r.p.errorf(node, "%s reads %s, a variable of the no-op clause at line %d; a no-op clause must not take part in the solution", what, v, line)
		}
		if !r.declared[v] && constants[v].k == 0 {
			return r.p.errorf(node, "%s: unknown variable %q", what, v)
		}
	}
	return nil
}

// conditionsAndAnswer reads the conditions and the answer expression.
func (p *ownParser) conditionsAndAnswer(t *Template, f map[string]*yaml.Node, refs *ownRefs) error {
	if f["conditions"] != nil {
		if f["conditions"].Kind != yaml.SequenceNode {
			return p.errorf(f["conditions"], "conditions must be a list")
		}
		for _, cn := range f["conditions"].Content {
			e, err := p.compile(cn, "condition")
			if err != nil {
				return err
			}
			if err := refs.check(e, cn, fmt.Sprintf("condition %q", e.src)); err != nil {
				return err
			}
			t.conds = append(t.conds, &condition{e: e, line: cn.Line})
		}
	}
	var err error
	if t.answer, err = p.compile(f["answer"], "answer"); err != nil {
		return err
	}
	t.answerLine = f["answer"].Line
	return refs.check(t.answer, f["answer"], "answer")
}

// texts reads the question and the paraphrase (which must state the same
// placeholders), and checks that no-op clauses read names and entities only.
func (p *ownParser) texts(t *Template, f map[string]*yaml.Node, refs *ownRefs) error {
	for _, key := range []string{"question", "paraphrase"} {
		if f[key] == nil {
			continue
		}
		s, err := p.scalar(f[key], key)
		if err != nil {
			return err
		}
		tx, err := parseText(s)
		if err != nil {
			return p.errorf(f[key], "%s: %v", key, err)
		}
		for _, ph := range tx.placeholders() {
			if _, ok := refs.noopVars[ph]; ok {
				return p.errorf(f[key], "%s: {%s} is a variable of a no-op clause", key, ph)
			}
			if !refs.declared[ph] {
				return p.errorf(f[key], "%s: unknown variable {%s}", key, ph)
			}
		}
		if key == "question" {
			t.question = tx
		} else {
			t.paraphrase = tx
		}
	}
	if t.paraphrase != nil {
		q, pp := t.question.placeholders(), t.paraphrase.placeholders()
		for _, x := range q {
			if !slices.Contains(pp, x) {
				return p.errorf(f["paraphrase"], "paraphrase must state the same facts as the question: it lacks {%s}", x)
			}
		}
		for _, x := range pp {
			if !slices.Contains(q, x) {
				return p.errorf(f["paraphrase"], "paraphrase must state the same facts as the question: {%s} is not in the question", x)
			}
		}
	}
	for _, c := range t.noops {
		for _, ph := range c.text.placeholders() {
			if x := t.variable(ph); x != nil && x.factor != factorNames {
				return p.errorf(nil, "no-op clause at line %d reads {%s}, a quantity of the problem; it may read names and entities only", c.line, ph)
			}
		}
	}
	return nil
}

func checkRefsDerived(p *ownParser, x *variable, noopVars map[string]int) error {
	for _, v := range x.derived.vars {
		if line, ok := noopVars[v]; ok {
			return fileError(p.path, x.line, "template %s: %s reads %s, a variable of the no-op clause at line %d; a no-op clause must not take part in the solution", p.t.ID, x.names[0], v, line)
		}
	}
	return nil
}

func (p *ownParser) signOf(n *yaml.Node) (string, error) {
	s, err := p.scalar(n, "sign")
	if err != nil {
		return "", err
	}
	switch s {
	case "positive", "nonnegative", "any":
		return s, nil
	}
	return "", p.errorf(n, "sign %q: positive, nonnegative or any", s)
}

var varKeys = []string{"pool", "choices", "min", "max", "step", "base", "decimals", "factor", "expr", "sign"}

// varSpec is the state of one variable spec while parseVariable reads it:
// the variable being built, its fields, and the domain read so far (items for
// a pool or choices, lo..hi step for a range).
type varSpec struct {
	p        *ownParser
	x        *variable
	n        *yaml.Node
	f        map[string]*yaml.Node
	what     string
	declared map[string]bool
	items    []value
	lo, hi   *expression
	step     *expression
}

// parseVariable reads one variable spec. key is "name" or "a, b" (drawn
// together without repeats). Bounds and derived expressions may read only
// variables in declared.
func (p *ownParser) parseVariable(key string, keyNode, n *yaml.Node, declared map[string]bool, needBase bool) (*variable, error) {
	x := &variable{line: keyNode.Line, decimals: -1, sign: "positive"}
	if err := p.variableNames(x, key, keyNode, declared); err != nil {
		return nil, err
	}
	what := "variable " + key
	f, _, err := p.fields(n, what, varKeys...)
	if err != nil {
		return nil, err
	}
	vs := &varSpec{p: p, x: x, n: n, f: f, what: what, declared: declared}
	kinds := 0
	for _, k := range []string{"pool", "choices", "min", "expr"} {
		if f[k] != nil {
			kinds++
		}
	}
	if kinds != 1 {
		return nil, p.errorf(n, "%s: give exactly one of pool, choices, min/max, expr", what)
	}
	if err := vs.options(); err != nil {
		return nil, err
	}
	if f["expr"] != nil {
		return vs.derived(keyNode)
	}
	switch {
	case f["pool"] != nil:
		err = vs.pool()
	case f["choices"] != nil:
		err = vs.choices()
	default:
		err = vs.numberRange()
	}
	if err != nil {
		return nil, err
	}
	if err := vs.factor(); err != nil {
		return nil, err
	}
	x.numeric = vs.lo != nil || len(vs.items) > 0 && vs.items[0].k == kNum
	if vs.items != nil && int64(len(x.names)) > int64(len(vs.items)) {
		return nil, p.errorf(n, "%s: %d names but only %d values to draw from", what, len(x.names), len(vs.items))
	}
	vs.setSampler()
	// Base values.
	if f["base"] == nil {
		if needBase {
			return nil, p.errorf(n, "%s: missing base (the as-authored value)", what)
		}
		return x, nil
	}
	if err := vs.base(); err != nil {
		return nil, err
	}
	return x, nil
}

// variableNames checks the names in key ("a" or "a, b"): identifiers, not
// declared before, not a constant's or a helper's name; it appends them to
// x.names.
func (p *ownParser) variableNames(x *variable, key string, keyNode *yaml.Node, declared map[string]bool) error {
	for _, part := range strings.Split(key, ",") {
		nm := strings.TrimSpace(part)
		if !identRE.MatchString(nm) {
			return p.errorf(keyNode, "variable name %q: use letters, digits and _", nm)
		}
		if declared[nm] || slices.Contains(x.names, nm) {
			return p.errorf(keyNode, "variable %s declared twice", nm)
		}
		if _, ok := constants[nm]; ok {
			return p.errorf(keyNode, "variable name %s is reserved", nm)
		}
		if _, ok := helpers[nm]; ok {
			return p.errorf(keyNode, "variable name %s is a helper's name", nm)
		}
		x.names = append(x.names, nm)
	}
	return nil
}

// readsDeclared is an error at node when e reads a name that is neither a
// variable declared before this one nor a constant.
func (vs *varSpec) readsDeclared(e *expression, node *yaml.Node) error {
	for _, v := range e.vars {
		if !vs.declared[v] && constants[v].k == 0 {
			return vs.p.errorf(node, "%s: %q is not a variable declared before it", vs.what, v)
		}
	}
	return nil
}

// options reads decimals (0 to 6) and sign.
func (vs *varSpec) options() error {
	p, f, x := vs.p, vs.f, vs.x
	if f["decimals"] != nil {
		s, _ := p.scalar(f["decimals"], "decimals")
		d, err := strconv.Atoi(s)
		if err != nil || d < 0 || d > 6 {
			return p.errorf(f["decimals"], "%s: decimals %q: 0 to 6", vs.what, s)
		}
		x.decimals = d
	}
	if f["sign"] != nil {
		var err error
		if x.sign, err = p.signOf(f["sign"]); err != nil {
			return err
		}
	}
	return nil
}

// derived reads expr: a value computed from variables declared before it,
// with one name and no base of its own.
func (vs *varSpec) derived(keyNode *yaml.Node) (*variable, error) {
	p, f, x, what := vs.p, vs.f, vs.x, vs.what
	if len(x.names) != 1 {
		return nil, p.errorf(keyNode, "%s: a derived value has one name", what)
	}
	if f["base"] != nil {
		return nil, p.errorf(f["base"], "%s: a derived value has no base of its own (it is computed)", what)
	}
	e, err := p.compile(f["expr"], what)
	if err != nil {
		return nil, err
	}
	if err := vs.readsDeclared(e, f["expr"]); err != nil {
		return nil, err
	}
	x.derived, x.factor, x.numeric, x.desc = e, factorNone, true, "= "+e.src
	return x, nil
}

// pool reads pool: the values of a named pool (a pool of numbers varies
// under the numbers factor, any other under names).
func (vs *varSpec) pool() error {
	p, f, x := vs.p, vs.f, vs.x
	name, err := p.scalar(f["pool"], "pool")
	if err != nil {
		return err
	}
	pl, ok := poolValues(name)
	if !ok {
		return p.errorf(f["pool"], "%s: unknown pool %q (known: %s)", vs.what, name, strings.Join(PoolNames(), ", "))
	}
	vs.items = pl
	x.factor, x.desc = factorNames, "pool "+name
	if len(pl) > 0 && pl[0].k == kNum {
		x.factor = factorNumbers // a number pool: "half", "twice", ...
	}
	return nil
}

// choices reads choices: a non-empty list of distinct single values, all
// numbers (YAML int or float) or all texts.
func (vs *varSpec) choices() error {
	p, x, what := vs.p, vs.x, vs.what
	cn := vs.f["choices"]
	if cn.Kind != yaml.SequenceNode || len(cn.Content) == 0 {
		return p.errorf(cn, "%s: choices must be a non-empty list", what)
	}
	numeric := true
	for _, c := range cn.Content {
		if c.Kind != yaml.ScalarNode {
			return p.errorf(c, "%s: each choice is a single value", what)
		}
		numeric = numeric && (c.Tag == "!!int" || c.Tag == "!!float")
	}
	var items []value
	for _, c := range cn.Content {
		if numeric {
			r, ok := parseNumber(c.Value)
			if !ok {
				return p.errorf(c, "%s: choice %q is not a number", what, c.Value)
			}
			items = append(items, numV(r))
		} else {
			items = append(items, strV(c.Value))
		}
	}
	for i := range items {
		for j := i + 1; j < len(items); j++ {
			if items[i].equal(items[j]) {
				return p.errorf(cn, "%s: choice %s is listed twice", what, items[i])
			}
		}
	}
	vs.items = items
	x.factor, x.desc = factorNames, "choices "+value{k: kList, l: items}.String()
	if numeric {
		x.factor = factorNumbers
	}
	return nil
}

// numberRange reads min, max and step (1 by default; a decimal range needs
// one): expressions over variables declared before, step a number.
func (vs *varSpec) numberRange() error {
	p, f, x, n, what := vs.p, vs.f, vs.x, vs.n, vs.what
	var err error
	if f["max"] == nil {
		return p.errorf(n, "%s: min needs max", what)
	}
	if vs.lo, err = p.compile(f["min"], what+" min"); err != nil {
		return err
	}
	if vs.hi, err = p.compile(f["max"], what+" max"); err != nil {
		return err
	}
	for _, e := range []*expression{vs.lo, vs.hi} {
		if err := vs.readsDeclared(e, n); err != nil {
			return err
		}
	}
	stepSrc := "1"
	if f["step"] != nil {
		if vs.step, err = p.compile(f["step"], what+" step"); err != nil {
			return err
		}
		if len(vs.step.vars) > 0 {
			return p.errorf(f["step"], "%s: step must be a number", what)
		}
		stepSrc = vs.step.src
	} else {
		vs.step, _ = compileExpr("1")
		if strings.Contains(f["min"].Value, ".") || strings.Contains(f["max"].Value, ".") {
			return p.errorf(n, "%s: a decimal range needs a step", what)
		}
	}
	x.factor, x.desc = factorNumbers, fmt.Sprintf("%s..%s step %s", vs.lo.src, vs.hi.src, stepSrc)
	return nil
}

// factor reads factor (names, numbers or fixed), which overrides the factor
// the domain implies.
func (vs *varSpec) factor() error {
	f, x := vs.f, vs.x
	if f["factor"] == nil {
		return nil
	}
	s, _ := vs.p.scalar(f["factor"], "factor")
	switch s {
	case "names":
		x.factor = factorNames
	case "numbers":
		x.factor = factorNumbers
	case "fixed":
		x.factor = factorNone
	default:
		return vs.p.errorf(f["factor"], "%s: factor %q: names, numbers or fixed", vs.what, s)
	}
	return nil
}

// setSampler sets x.choices (pool or choices) and x.sampler, which draws the
// variable's names' values, distinct, from its domain with en.rng.
func (vs *varSpec) setSampler() {
	x, items := vs.x, vs.items
	if items != nil {
		x.choices = items
		dom := &domain{name: x.desc, items: items, n: int64(len(items))}
		x.sampler = func(en *env) ([]value, error) { return dom.distinct(en.rng, len(x.names)) }
		return
	}
	lo, hi, step := vs.lo, vs.hi, vs.step
	x.span = func(en *env) (*domain, error) { return inclusiveRange(x.desc, lo, hi, step, en) }
	x.sampler = func(en *env) ([]value, error) {
		d, err := x.span(en)
		if err != nil {
			return nil, err
		}
		return d.distinct(en.rng, len(x.names))
	}
}

// base reads base: one distinct value per name, which must lie in the
// variable's domain (evaluated at the base values of the variables before it)
// unless the domain is a pool.
func (vs *varSpec) base() error {
	p, f, x, n, what := vs.p, vs.f, vs.x, vs.n, vs.what
	bn := f["base"]
	var baseNodes []*yaml.Node
	switch {
	case bn.Kind == yaml.ScalarNode && len(x.names) == 1:
		baseNodes = []*yaml.Node{bn}
	case bn.Kind == yaml.SequenceNode && len(bn.Content) == len(x.names):
		baseNodes = bn.Content
	default:
		return p.errorf(bn, "%s: give one base value per name (%d)", what, len(x.names))
	}
	baseEnv := map[string]value{}
	for _, v := range p.t.vars {
		for i, nm := range v.names {
			if i < len(v.base) {
				baseEnv[nm] = v.base[i]
			}
		}
	}
	for _, b := range baseNodes {
		if b.Kind != yaml.ScalarNode {
			return p.errorf(b, "%s: base must be a single value", what)
		}
		var bv value
		if x.numeric {
			r, ok := parseNumber(b.Value)
			if !ok {
				return p.errorf(b, "%s: base %q is not a number", what, b.Value)
			}
			bv = numV(r)
		} else {
			bv = strV(b.Value)
		}
		if slices.ContainsFunc(x.base, bv.equal) {
			return p.errorf(b, "%s: base values must differ", what)
		}
		x.base = append(x.base, bv)
	}
	// The base must lie in the domain (pools excepted: an author may name a
	// person who is not in our lists).
	if f["pool"] != nil {
		return nil
	}
	var dom *domain
	if vs.items != nil {
		dom = &domain{name: x.desc, items: vs.items, n: int64(len(vs.items))}
	} else {
		d, err := inclusiveRange(x.desc, vs.lo, vs.hi, vs.step, &env{vars: baseEnv})
		if err != nil {
			return p.errorf(n, "%s: at base values: %v", what, err)
		}
		dom = d
	}
	for _, b := range x.base {
		if !dom.contains(b) {
			return p.errorf(bn, "%s: base %s is outside its domain %s", what, b, x.desc)
		}
	}
	return nil
}

// inclusiveRange evaluates min, max and step and returns min, min+step, ...,
// up to and including max.
func inclusiveRange(name string, lo, hi, step *expression, en *env) (*domain, error) {
	plain := &env{vars: en.vars}
	l, err := lo.evalNum(plain)
	if err != nil {
		return nil, err
	}
	h, err := hi.evalNum(plain)
	if err != nil {
		return nil, err
	}
	s, err := step.evalNum(plain)
	if err != nil {
		return nil, err
	}
	if s.Sign() <= 0 {
		return nil, fmt.Errorf("%s: step must be positive", name)
	}
	if h.Cmp(l) < 0 {
		return nil, fmt.Errorf("%s is empty (min %s > max %s)", name, numV(l), numV(h))
	}
	// Exclusive upper end for progression: max + step.
	return progression(name, l, new(big.Rat).Add(h, s), s)
}

// parseNoop reads one no-op clause: {text, variables, kind, reviewed,
// reason, alt_answer}. kind is irrelevant (the default) or seeming; a
// reviewed seeming clause must give a one-line reason why the answer is
// unchanged. alt_answer (seeming clauses only, optional) is the answer a
// model would give if it applied the clause's quantity, an expression of the
// answer's language over the template's variables and the clause's own.
func (p *ownParser) parseNoop(n *yaml.Node, declared map[string]bool) (*noopClause, error) {
	f, order, err := p.fields(n, "noop clause", "text", "variables", "kind", "reviewed", "reason", "alt_answer")
	if err != nil {
		return nil, err
	}
	_ = order
	if f["text"] == nil {
		return nil, p.errorf(n, "noop clause: missing text")
	}
	s, err := p.scalar(f["text"], "noop text")
	if err != nil {
		return nil, err
	}
	tx, err := parseText(s)
	if err != nil {
		return nil, p.errorf(f["text"], "noop text: %v", err)
	}
	st := strings.TrimSpace(s)
	if st == "" || !strings.ContainsAny(st[len(st)-1:], ".!") {
		return nil, p.errorf(f["text"], "noop text must be a sentence ending in '.' or '!'")
	}
	c := &noopClause{text: tx, line: n.Line, flag: flagWord(tx.literal()), kind: NoopIrrelevant}
	if err := p.noopReview(c, f); err != nil {
		return nil, err
	}
	if c.kind == NoopSeeming && c.reviewed && c.reason == "" {
		return nil, p.errorf(n, "a reviewed noop-seeming clause needs a reason: one line saying why the answer is unchanged")
	}
	own, err := p.noopVariables(c, f, declared)
	if err != nil {
		return nil, err
	}
	for _, ph := range tx.placeholders() {
		if !own[ph] && !declared[ph] {
			return nil, p.errorf(f["text"], "noop text: unknown variable {%s}", ph)
		}
	}
	if err := p.noopAlt(c, f["alt_answer"], declared, own); err != nil {
		return nil, err
	}
	return c, nil
}

// noopAlt compiles a seeming clause's alt_answer (node nil: none) into c.alt;
// it may read the template's declared variables, constants and the clause's
// own variables (own).
func (p *ownParser) noopAlt(c *noopClause, node *yaml.Node, declared, own map[string]bool) error {
	if node == nil {
		return nil
	}
	if c.kind != NoopSeeming {
		return p.errorf(node, "alt_answer is for a noop-seeming clause (kind: seeming) only")
	}
	s, err := p.scalar(node, "alt_answer")
	if err != nil {
		return err
	}
	e, err := compileExpr(s)
	if err != nil {
		return p.errorf(node, "alt_answer %q: %v", s, err)
	}
	for _, v := range e.vars {
		if !own[v] && !declared[v] && constants[v].k == 0 {
			return p.errorf(node, "alt_answer %q: unknown variable %q", s, v)
		}
	}
	c.alt = e
	return nil
}

// noopReview reads a no-op clause's kind, reviewed and reason keys into c.
func (p *ownParser) noopReview(c *noopClause, f map[string]*yaml.Node) error {
	if f["kind"] != nil {
		k, err := p.scalar(f["kind"], "noop kind")
		if err != nil {
			return err
		}
		switch NoopKind(k) {
		case NoopIrrelevant, NoopSeeming:
			c.kind = NoopKind(k)
		default:
			return p.errorf(f["kind"], "noop kind %q: irrelevant (the default) or seeming", k)
		}
	}
	if f["reviewed"] != nil {
		r, err := p.scalar(f["reviewed"], "reviewed")
		if err != nil {
			return err
		}
		switch r {
		case "true":
			c.reviewed = true
		case "false":
		default:
			return p.errorf(f["reviewed"], "reviewed %q: true or false", r)
		}
	}
	if f["reason"] != nil {
		r, err := p.scalar(f["reason"], "noop reason")
		if err != nil {
			return err
		}
		c.reason = strings.TrimSpace(r)
		if c.reason == "" || strings.ContainsAny(c.reason, "\n\r") {
			return p.errorf(f["reason"], "noop reason must be one non-empty line")
		}
	}
	return nil
}

// noopVariables reads a no-op clause's own variables (drawn ones only, with
// names unlike the problem's) into c.vars and returns their names.
func (p *ownParser) noopVariables(c *noopClause, f map[string]*yaml.Node, declared map[string]bool) (map[string]bool, error) {
	own := map[string]bool{}
	if f["variables"] == nil {
		return own, nil
	}
	vf, keys, err := p.fields(f["variables"], "noop variables")
	if err != nil {
		return nil, err
	}
	for i, key := range keys {
		x, err := p.parseVariable(key, f["variables"].Content[2*i], vf[key], own, false)
		if err != nil {
			return nil, err
		}
		if x.derived != nil {
			return nil, p.errorf(vf[key], "noop variable %s: a no-op clause has drawn variables only", key)
		}
		for _, nm := range x.names {
			if declared[nm] {
				return nil, p.errorf(f["variables"].Content[2*i], "noop variable %s has the name of a problem variable", nm)
			}
			own[nm] = true
		}
		x.factor = factorNone
		c.vars = append(c.vars, x)
	}
	return own, nil
}
