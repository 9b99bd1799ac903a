package templates

import (
	"fmt"
	"os"
	"strings"
)

// CheckResult is the outcome of checking one template, or one file that
// failed to load (Template empty).
type CheckResult struct {
	File     string         // file the template came from
	Template string         // template ID; "" when the file did not load
	Level    string         // GSM-Symbolic difficulty level; "" for other formats
	Err      error          // nil when the template is valid and generates every applicable variant
	Warnings []string       // deviations recorded at import (Template.Warnings); the template is usable
	Draws    int            // symbolic draws tried
	Valid    int            // of which valid
	Reasons  map[string]int // rejected draws by reason
	Flagged  []Flag         // no-op clauses flagged for review
	NotApply []Exclusion    // variants that do not apply, with the reason
	NoopSet  *NoopSetStatus // GSM-Symbolic level symbolic: what the GSM-NoOp clause set gave; nil otherwise
}

// CheckPath validates every template file at src ("builtin", a directory or a
// file) one file at a time, so that one bad file does not hide the others.
// For each template that loads it tries draws re-rolls of names and numbers
// (seeded by seed) and generates one instance of every variant. The returned
// error is about src itself (missing, empty directory); problems with the
// templates are in the results.
func CheckPath(src string, draws int, seed int64) ([]CheckResult, error) {
	return CheckPathWith(src, draws, seed, LoadOptions{})
}

// CheckPathWith is CheckPath with load options (the GSM-Symbolic level).
func CheckPathWith(src string, draws int, seed int64, o LoadOptions) ([]CheckResult, error) {
	if _, err := ParseLevel(o.Level); err != nil {
		return nil, err
	}
	if draws < 1 {
		draws = 200
	}
	var files []string
	switch st, err := os.Stat(src); {
	case src == "builtin":
		files = []string{"builtin"}
	case err != nil:
		return nil, fmt.Errorf("templates %s: %w", src, BarePathError(err))
	case st.IsDir():
		if files, err = templateFiles(src, o); err != nil {
			return nil, err
		}
	default:
		files = []string{src}
	}
	var out []CheckResult
	seen := map[string]string{}
	for _, f := range files {
		var ts []*Template
		var err error
		if f == "builtin" {
			ts, err = Builtin()
		} else {
			ts, err = LoadFileWith(f, o)
		}
		if err != nil {
			out = append(out, CheckResult{File: f, Err: err})
			continue
		}
		for _, t := range ts {
			r := checkTemplate(t, draws, seed)
			if prev, ok := seen[t.ID]; ok && r.Err == nil {
				r.Err = fmt.Errorf("%s:%d: template ID %q is also used in %s", t.Source, t.Line, t.ID, prev)
			}
			seen[t.ID] = t.Source
			out = append(out, r)
		}
	}
	return out, nil
}

func checkTemplate(t *Template, draws int, seed int64) CheckResult {
	r := CheckResult{File: t.Source, Template: t.ID, Level: t.Level, Warnings: t.Warnings, Reasons: map[string]int{}, NoopSet: t.noopSet}
	if ok, _ := t.Supports(VariantSymbolic); ok {
		rng := newRand(seed)
		for i := 0; i < draws; i++ {
			r.Draws++
			vals, reason := t.draw(rng, true, true)
			if reason == "" {
				reason = t.evaluate(vals, false).reason
			}
			if reason == "" {
				r.Valid++
			} else {
				r.Reasons[reason]++
			}
		}
	}
	set, err := Generate([]*Template{t}, Options{Variants: AllVariants, Instances: 1, Seed: seed, MaxDraws: max(draws, DefaultMaxDraws)})
	if err != nil {
		r.Err = err
		return r
	}
	r.Flagged = set.Flagged
	for _, e := range set.Excluded {
		if e.Draw == 0 {
			r.NotApply = append(r.NotApply, e)
		}
	}
	return r
}

// Describe writes a human-readable account of the template: metadata,
// variables with their domains and base values, conditions, the answer at
// base values, the texts and the no-op clauses.
func (t *Template) Describe() string {
	var b strings.Builder
	loc := t.Source
	if t.Line > 0 {
		loc = fmt.Sprintf("%s:%d", t.Source, t.Line)
	}
	fmt.Fprintf(&b, "id:        %s\n", t.ID)
	fmt.Fprintf(&b, "title:     %s\n", t.Title)
	fmt.Fprintf(&b, "source:    %s (%s format)\n", loc, t.Format)
	if t.Level != "" {
		fmt.Fprintf(&b, "level:     %s", t.Level)
		if t.IDOrig != "" {
			fmt.Fprintf(&b, " (GSM8K id_orig %s)", t.IDOrig)
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "relation:  %s\nsteps:     %d\nanswer:    %s (%s)\n", t.Relation, t.Steps, t.BaseAnswer(), t.AnswerType)
	if !t.fixed {
		t.describeVariables(&b)
	}
	fmt.Fprintf(&b, "question (base):\n  %s\n", t.BaseQuestion())
	if t.record != nil {
		b.WriteString(t.record.describe())
	}
	if t.paraphrase != nil {
		fmt.Fprintf(&b, "paraphrase (base):\n  %s\n", t.render(t.paraphrase, t.base, nil))
	}
	t.describeNoops(&b)
	var ok, no []string
	for _, v := range AllVariants {
		if yes, why := t.Supports(v); yes {
			ok = append(ok, string(v))
		} else {
			no = append(no, fmt.Sprintf("%s (%s)", v, strings.TrimPrefix(why, "not applicable: ")))
		}
	}
	fmt.Fprintf(&b, "variants:  %s\n", strings.Join(ok, ", "))
	for _, n := range no {
		fmt.Fprintf(&b, "  n/a: %s\n", n)
	}
	if len(t.Warnings) > 0 {
		b.WriteString("warnings:\n")
		for _, w := range t.Warnings {
			fmt.Fprintf(&b, "  %s\n", w)
		}
	}
	return b.String()
}

// describeVariables writes the answer's formula, the variables (names,
// factor, domain, base values; how a solved one is solved) and the conditions.
func (t *Template) describeVariables(b *strings.Builder) {
	fmt.Fprintf(b, "formula:   %s\n", t.answer.src)
	b.WriteString("variables:\n")
	for _, v := range t.vars {
		base := make([]string, len(v.names))
		for i, n := range v.names {
			base[i] = t.renderVar(n, t.base, nil)
		}
		fmt.Fprintf(b, "  %-14s %-8s %-34s base %s\n", strings.Join(v.names, ", "), v.factor, v.desc, strings.Join(base, ", "))
		if v.solve != nil {
			fmt.Fprintf(b, "  %-14s solved from the condition at line %d: %s = %s\n", "", v.solveLine, v.names[0], v.solve.src)
		}
		if t.determined != nil && t.determined.read[v.names[0]] {
			fmt.Fprintf(b, "  %-14s never stated: the conditions fix it from the stated values (checked on each draw)\n", "")
		}
	}
	if len(t.conds) > 0 {
		b.WriteString("conditions:\n")
		for _, c := range t.conds {
			fmt.Fprintf(b, "  %s\n", c.e.src)
		}
	}
}

// describeNoops writes the template's no-op clauses with their review and
// use, or, for the generic pool, the clauses excluded here and the clause set.
func (t *Template) describeNoops(b *strings.Builder) {
	switch {
	case t.genericNoop:
		b.WriteString("no-op clauses: drawn from the generic reviewed pool\n")
		for _, f := range t.flags() {
			fmt.Fprintf(b, "  excluded here: %s  [%s]\n", f.Clause, f.Reason)
		}
		b.WriteString(t.describeNoopSet())
	case len(t.noops) > 0:
		b.WriteString("no-op clauses:\n")
		for _, c := range t.noops {
			var status []string
			if c.kind == NoopSeeming && c.reviewed {
				status = append(status, "reviewed: "+c.reason)
			}
			if c.alt != nil {
				status = append(status, "alt_answer "+c.alt.src)
			}
			if why := c.why(); why != "" {
				use := "excluded"
				if c.usable() {
					use = "used"
				}
				status = append(status, fmt.Sprintf("%s: %s", use, why))
			}
			note := ""
			if len(status) > 0 {
				note = "  [" + strings.Join(status, "; ") + "]"
			}
			fmt.Fprintf(b, "  %-10s %s%s\n", c.kind, c.text.source(), note)
		}
	}
}

// Status is the first word of the report: "ok", "warn" (imported, with
// recorded deviations) or "FAIL" (refused).
func (r CheckResult) Status() string {
	switch {
	case r.Err != nil:
		return "FAIL"
	case len(r.Warnings) > 0:
		return "warn"
	}
	return "ok"
}

// String is a one-line report: "ok", "warn" with the recorded deviations
// after the draw statistics, or "FAIL" with the error.
func (r CheckResult) String() string {
	if r.Template == "" {
		return fmt.Sprintf("FAIL %s", r.Err)
	}
	if r.Err != nil {
		return fmt.Sprintf("FAIL %-16s %v", r.Template, r.Err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%-4s %-16s %s", r.Status(), r.Template, r.File)
	if r.Draws > 0 {
		fmt.Fprintf(&b, "; %d of %d symbolic draws valid", r.Valid, r.Draws)
		if reason, n := mostFrequent(r.Reasons); n > 0 {
			fmt.Fprintf(&b, " (most rejected: %s, %d)", reason, n)
		}
	}
	for _, f := range r.Flagged {
		switch {
		case f.Used:
			// flagged and reviewed: in use, nothing to report
		case f.Source == "generic":
			fmt.Fprintf(&b, "; generic no-op clause %d excluded (%s)", f.Line, f.Reason)
		case f.Word != "" && f.Reason == "":
			fmt.Fprintf(&b, "; no-op clause at line %d flagged (%q)", f.Line, f.Word)
		default:
			fmt.Fprintf(&b, "; no-op clause at line %d excluded (%s)", f.Line, f.Reason)
		}
	}
	if r.NoopSet != nil && r.NoopSet.Keyed {
		fmt.Fprintf(&b, "; %s", r.NoopSet)
	}
	for _, e := range r.NotApply {
		fmt.Fprintf(&b, "; %s n/a", e.Variant)
	}
	for _, w := range r.Warnings {
		fmt.Fprintf(&b, "; %s", w)
	}
	return b.String()
}

// CheckSummary is the count line of a check: how many templates were ok,
// imported with warnings, or refused.
func CheckSummary(rs []CheckResult) string {
	n := map[string]int{}
	for _, r := range rs {
		n[r.Status()]++
	}
	return fmt.Sprintf("%d checked: %d ok, %d warn, %d FAIL", len(rs), n["ok"], n["warn"], n["FAIL"])
}
