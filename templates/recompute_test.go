package templates

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// recomputePy recomputes answers with real Python 3, independently of this
// package's parser and evaluator: it parses each template's own #answer (and
// derived #init) expression with Python's ast module, turns every numeric
// literal into an exact fractions.Fraction (so that 0.1 + 0.2 is 3/10 and
// 7/2 is 7/2, as in the generator), evaluates it over the drawn values
// recorded in the instance, and checks the template's conditions the same
// way. A value drawn from a number pool or a list of (form, value) pairs is
// a Fraction that also indexes as the pair (form, value), as the annotations
// use it (frac[1]).
const recomputePy = `
import ast, json, math, sys
from fractions import Fraction

class W(Fraction):
    def __new__(cls, v, form):
        self = super().__new__(cls, v)
        self.form = form
        return self
    def __getitem__(self, i):
        return (self.form, Fraction(self))[i]

def divides(a, b):
    b = Fraction(b)
    return b != 0 and (Fraction(a) / b).denominator == 1

def is_int(x):
    return Fraction(x).denominator == 1

ENV = {
    "Fraction": Fraction, "divides": divides, "is_int": is_int, "fix_floats": lambda x: x,
    "math": math, "floor": math.floor, "ceil": math.ceil, "float": lambda x: x,
    "int": int, "round": round, "abs": abs, "min": min, "max": max, "sum": sum, "len": len,
    "True": True, "False": False,
}

class Exact(ast.NodeTransformer):
    def visit_Constant(self, node):
        if isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
            return ast.copy_location(ast.Call(func=ast.Name("Fraction", ast.Load()),
                args=[ast.Constant(repr(node.value))], keywords=[]), node)
        return node
    def visit_Subscript(self, node):
        node.value = self.visit(node.value)  # indexes and slices stay integers
        return node
    def visit_Call(self, node):
        node.func = self.visit(node.func)
        if isinstance(node.func, ast.Name) and node.func.id == "round" and len(node.args) == 2:
            node.args[0] = self.visit(node.args[0])  # ndigits stays an integer
        else:
            node.args = [self.visit(a) for a in node.args]
        return node

def compile_expr(src):
    src = src.strip()
    # "$ans" reads ans; "{expr}" as a whole is expr (the annotation's styles)
    out, q = [], None
    for i, c in enumerate(src):
        if q:
            if c == q:
                q = None
        elif c in "'\"":
            q = c
        elif c == "$":
            continue
        out.append(c)
    src = "".join(out)
    tree = ast.parse(src, mode="eval")
    if isinstance(tree.body, ast.Set) and len(tree.body.elts) == 1:
        tree.body = tree.body.elts[0]
    tree = ast.fix_missing_locations(Exact().visit(tree))
    return compile(tree, "<template>", "eval")

results = []
for rec in json.load(sys.stdin):
    env = dict(ENV)
    for name, (num, form) in rec["numbers"].items():
        env[name] = W(Fraction(num), form)
    env.update(rec["texts"])
    res = {"id": rec["id"], "error": "", "answer": "", "false": []}
    try:
        for name, src in rec["derived"] or []:
            env[name] = eval(compile_expr(src), env)
        ans = Fraction(eval(compile_expr(rec["answer_src"]), env))
        res["answer"] = str(ans)
        if ans != Fraction(rec["answer"]):
            res["error"] = "answer %s, generator said %s" % (ans, rec["answer"])
        for i, c in enumerate(rec["conditions"] or []):
            if not eval(compile_expr(c), env):
                res["false"].append(i)
    except Exception as e:
        res["error"] = "%s: %s" % (type(e).__name__, e)
    results.append(res)
json.dump(results, sys.stdout)
`

type recomputeRec struct {
	ID         string               `json:"id"`
	AnswerSrc  string               `json:"answer_src"`
	Derived    [][2]string          `json:"derived"`
	Conditions []string             `json:"conditions"`
	Numbers    map[string][2]string `json:"numbers"` // exact value, form
	Texts      map[string]string    `json:"texts"`
	Answer     string               `json:"answer"`
}

type recomputeRes struct {
	ID     string `json:"id"`
	Error  string `json:"error"`
	Answer string `json:"answer"`
	False  []int  `json:"false"`
}

// recomputeAll draws n symbolic instances (and the base) of every template
// and has Python recompute each answer and check each condition.
func recomputeAll(t *testing.T, ts []*Template, n int) (checked int) {
	t.Helper()
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not found: the independent recomputation needs it")
	}
	byID := map[string]*Template{}
	var recs []recomputeRec
	insts := map[string]Instance{}
	for _, tp := range ts {
		byID[tp.ID] = tp
		set, err := Generate([]*Template{tp}, Options{Variants: []Variant{VariantSymbolic}, Instances: n, Seed: 2025})
		if err != nil {
			t.Errorf("%s: %v", tp.ID, err)
			continue
		}
		for _, in := range set.Instances {
			rec := recomputeRec{ID: in.ID, AnswerSrc: tp.answer.src, Answer: in.Answer,
				Numbers: map[string][2]string{}, Texts: map[string]string{}}
			for _, x := range tp.drawOrder() {
				if x.derived != nil {
					rec.Derived = append(rec.Derived, [2]string{x.names[0], x.derived.src})
					continue
				}
				for _, nm := range x.names {
					if num, ok := in.Numbers[nm]; ok {
						rec.Numbers[nm] = [2]string{num, in.Values[nm]}
					} else {
						rec.Texts[nm] = in.Values[nm]
					}
				}
			}
			if in.Variant != VariantBase { // the original may lie outside the conditions
				for _, c := range tp.conds {
					rec.Conditions = append(rec.Conditions, c.e.src)
				}
			}
			recs = append(recs, rec)
			insts[in.ID] = in
		}
	}
	input, _ := json.Marshal(recs)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, py, "-c", recomputePy)
	cmd.Stdin = bytes.NewReader(input)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("python3: %v\n%s", err, stderr.String())
	}
	var res []recomputeRes
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("python3 output: %v", err)
	}
	if len(res) != len(recs) {
		t.Fatalf("python3 answered %d of %d", len(res), len(recs))
	}
	for _, r := range res {
		if r.Error != "" {
			t.Errorf("%s: %s", r.ID, r.Error)
			continue
		}
		in := insts[r.ID]
		tp := byID[in.TemplateID]
		for _, i := range r.False {
			c := tp.conds[i]
			// A condition the original breaks is not applied when every
			// value it reads is the original's.
			if !tp.baseBroken[c] {
				t.Errorf("%s: condition %q (line %d) is false for %v", r.ID, c.e.src, c.line, in.Values)
			}
		}
		checked++
	}
	return checked
}

// TestIndependentRecomputationFixtures recomputes the answers of our own
// GSM-Symbolic fixtures (all levels) with Python.
func TestIndependentRecomputationFixtures(t *testing.T) {
	var ts []*Template
	for _, lv := range []string{"symbolic", "p1", "p2"} {
		got, err := LoadWith(filepath.Join(gsmsymDir(t), lv), LoadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		ts = append(ts, got...)
	}
	n := recomputeAll(t, ts, 200)
	t.Logf("%d instances of %d templates recomputed by Python", n, len(ts))
}

// TestIndependentRecomputationGSMSymbolic draws 200 symbolic instances from
// every imported template of the GSM-Symbolic development set and has Python
// recompute every answer from the template's own #answer expression.
func TestIndependentRecomputationGSMSymbolic(t *testing.T) {
	dir := filepath.Join(sharedDir(t), "gsm_symbolic", "symbolic")
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("%s not found (Apple's GSM-Symbolic templates are not part of this repository)", dir)
	}
	if testing.Short() {
		t.Skip("-short: 20,000 draws")
	}
	ts, skipped, err := LoadSkipping(dir, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(ts) < 98 {
		t.Errorf("%d of 100 templates imported; refused: %v", len(ts), skipped)
	}
	n := recomputeAll(t, ts, 200)
	t.Logf("%d instances of %d templates recomputed by Python; refused: %v", n, len(ts), skipped)
}
