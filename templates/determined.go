package templates

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Values the question never states but its conditions determine. A
// template whose answer reads a drawn variable without a placeholder is
// refused (statedCheck) unless the conditions fix that variable from what
// the question does state: a rectangle's width, never given, from its
// stated area and the stated difference of its sides ("area == w * (w + d)",
// which no single variable can be isolated from). This is checked by
// enumeration, not algebra: at an assignment of values, every combination
// of the domains of the unstated variables involved is tried with every
// stated value kept, and the variable is fixed when no combination that
// meets the conditions gives it another value. The template is accepted
// when that holds at its base values and on valid draws (up to checkDraws,
// seeded by its ID), and refused otherwise, as before; once accepted, a
// draw on which it does not hold is an invalid draw (evaluate), so no
// instance asks a question with two answers.

// maxDeterminedLeaves bounds the combinations tried at one assignment: a
// template with more cannot be checked and is refused as before (and a
// draw with more is invalid). determinedBudget bounds those tried over the
// load-time check (base values and draws together): past it, no more draws
// are checked there.
const (
	maxDeterminedLeaves = 1 << 14
	determinedBudget    = 1 << 18
)

// determinedSet is what the enumeration needs: the unstated drawn
// variables to vary together (vary, in draw order), the names among them
// that the answer reads (read), the computed values that depend on them
// (derived, in draw order), the computed values the question shows, which
// must keep their value (shown), and the conditions that read them (conds).
type determinedSet struct {
	vary    []*variable
	read    map[string]bool
	derived []*variable
	shown   []string
	conds   []*condition
}

// unstatedError is statedCheck's refusal of an answer that reads v (through
// via, when not ""), with detail after "no condition fixes it" when given.
func unstatedError(v, via, detail string) error {
	if via != "" {
		via = fmt.Sprintf(" (through %s)", via)
	}
	return fmt.Errorf("the answer reads %s%s, which the question never states (drawn, with no placeholder, and no condition fixes it%s): the same question would have different answers in different draws", v, via, detail)
}

// determinedVars builds the determinedSet of a template whose answer reads
// the unstated drawn variables in unknown (names; known holds the names the
// question states or that are computed from stated ones only). It returns
// nil when no condition, and no computed value the question shows, reads
// one of them, or when one of the variables to vary cannot be enumerated
// (several names drawn together, or no domain): the answer then reads a
// free value.
func (t *Template) determinedVars(unknown []string, known, stated map[string]bool) *determinedSet {
	byName := map[string]*variable{}
	for _, x := range t.vars {
		for _, n := range x.names {
			byName[n] = x
		}
	}
	// roots expands names through computed values to the unstated drawn
	// variables behind them.
	var roots func(names []string, seen map[string]bool) map[string]bool
	roots = func(names []string, seen map[string]bool) map[string]bool {
		out := map[string]bool{}
		for _, n := range names {
			x := byName[n]
			if x == nil || seen[n] {
				continue
			}
			seen[n] = true
			if x.derived != nil {
				maps.Copy(out, roots(x.derived.vars, seen))
				continue
			}
			if !known[x.names[0]] {
				out[x.names[0]] = true
			}
		}
		return out
	}
	rootsOf := func(names []string) map[string]bool { return roots(names, map[string]bool{}) }
	ds := &determinedSet{read: map[string]bool{}}
	for _, n := range unknown {
		maps.Copy(ds.read, rootsOf([]string{n}))
	}
	if len(ds.read) == 0 {
		return nil
	}
	// The constraints: the conditions, and each computed value the
	// question shows (it must keep its value).
	type constraint struct {
		c     *condition
		shown string
		roots map[string]bool
	}
	var cons []constraint
	for _, c := range t.conds {
		cons = append(cons, constraint{c: c, roots: rootsOf(c.e.vars)})
	}
	for _, x := range t.vars {
		if x.derived != nil && stated[x.names[0]] {
			cons = append(cons, constraint{shown: x.names[0], roots: rootsOf(x.derived.vars)})
		}
	}
	// The variables to vary: those the answer reads, and every unstated
	// one tied to them by a constraint or a domain, transitively.
	vary := maps.Clone(ds.read)
	constrained := false
	for changed := true; changed; {
		changed = false
		for _, k := range cons {
			touches := false
			for r := range k.roots {
				if vary[r] {
					touches = true
					break
				}
			}
			if !touches {
				continue
			}
			constrained = true
			for r := range k.roots {
				if !vary[r] {
					vary[r], changed = true, true
				}
			}
		}
		for n := range vary {
			if x := byName[n]; x.draw != nil {
				for r := range rootsOf(x.draw.vars) {
					if !vary[r] {
						vary[r], changed = true, true
					}
				}
			}
		}
	}
	if !constrained {
		return nil
	}
	for _, x := range t.drawOrder() {
		if x.derived != nil {
			for r := range rootsOf([]string{x.names[0]}) {
				if vary[r] {
					ds.derived = append(ds.derived, x)
					break
				}
			}
			continue
		}
		if !vary[x.names[0]] {
			continue
		}
		if len(x.names) != 1 || x.draw == nil && x.span == nil && x.choices == nil {
			return nil
		}
		ds.vary = append(ds.vary, x)
	}
	for _, k := range cons {
		for r := range k.roots {
			if vary[r] {
				if k.c != nil {
					ds.conds = append(ds.conds, k.c)
				} else {
					ds.shown = append(ds.shown, k.shown)
				}
				break
			}
		}
	}
	return ds
}

// domainFor is the domain x is drawn from at the values in en.
func (x *variable) domainFor(en *env) (*domain, error) {
	switch {
	case x.draw != nil:
		return x.domainAt(en)
	case x.span != nil:
		return x.span(en)
	case x.choices != nil:
		return &domain{name: x.desc, items: x.choices, n: int64(len(x.choices))}, nil
	}
	return nil, fmt.Errorf("%s has no domain", x.names[0])
}

// otherFit enumerates the combinations of ds.vary's domains at vals (a full
// assignment; computed values are computed again) and returns the first one
// that meets ds.conds and keeps ds.shown but gives a name in ds.read another
// value, written "w=3" ("" when there is none). leaves counts the
// combinations tried; over maxDeterminedLeaves it stops with tooMany set.
func (t *Template) otherFit(ds *determinedSet, vals map[string]value) (alt string, leaves int, tooMany bool) {
	orig := maps.Clone(vals)
	for _, d := range ds.derived {
		v, err := d.derived.eval(&env{vars: orig})
		if err != nil {
			return "", 0, false // the assignment itself is invalid
		}
		orig[d.names[0]] = v
	}
	work := maps.Clone(orig)
	meets := func() bool { return t.meetsAt(ds, orig, work) }
	var walk func(i int) bool
	walk = func(i int) bool {
		if i == len(ds.vary) {
			leaves++
			if leaves > maxDeterminedLeaves {
				tooMany = true
				return true
			}
			if ds.readDiffers(orig, work) && meets() {
				alt = ds.readChanges(orig, work)
				return true
			}
			return false
		}
		x := ds.vary[i]
		d, err := x.domainFor(&env{vars: work})
		if err != nil {
			return false // no domain here: no combination on this branch
		}
		if d.n > maxDeterminedLeaves {
			tooMany = true
			return true
		}
		for k := int64(0); k < d.n; k++ {
			work[x.names[0]] = asWorded(d.at(k))
			if walk(i + 1) {
				return true
			}
		}
		work[x.names[0]] = orig[x.names[0]]
		return false
	}
	walk(0)
	return alt, leaves, tooMany
}

// meetsAt reports whether work (orig with some of ds.vary changed) is a
// valid assignment that the question cannot tell from orig: ds.derived
// recomputed into work evaluate, every shown value equals orig's, and every
// condition that applies holds.
func (t *Template) meetsAt(ds *determinedSet, orig, work map[string]value) bool {
	en := &env{vars: work}
	for _, d := range ds.derived {
		v, err := d.derived.eval(en)
		if err != nil {
			return false
		}
		work[d.names[0]] = v
	}
	for _, n := range ds.shown {
		if !work[n].equal(orig[n]) {
			return false
		}
	}
	for _, c := range ds.conds {
		if t.exempt(c, work) {
			continue
		}
		if ok, err := c.e.evalBool(en); err != nil || !ok {
			return false
		}
	}
	return true
}

// readDiffers reports whether work differs from orig in a value the answer
// reads.
func (ds *determinedSet) readDiffers(orig, work map[string]value) bool {
	for n := range ds.read {
		if !work[n].equal(orig[n]) {
			return true
		}
	}
	return false
}

// readChanges is the values of ds.vary that the answer reads and that work
// changes from orig, as "name=value, ..." in ds.vary's order; "" when none
// differs.
func (ds *determinedSet) readChanges(orig, work map[string]value) string {
	var parts []string
	for _, x := range ds.vary {
		if n := x.names[0]; ds.read[n] && !work[n].equal(orig[n]) {
			parts = append(parts, n+"="+work[n].String())
		}
	}
	return strings.Join(parts, ", ")
}

// determinedReason is evaluate's rule for an accepted template with values
// fixed by its conditions: "" when vals leaves them fixed, else why not.
func (t *Template) determinedReason(vals map[string]value) string {
	alt, _, tooMany := t.otherFit(t.determined, vals)
	switch {
	case tooMany:
		return "too many combinations to check that the conditions fix the values the question never states"
	case alt != "":
		return fmt.Sprintf("the question does not fix %s: %s meets the conditions too", strings.SplitN(alt, "=", 2)[0], alt)
	}
	return ""
}

// checkDetermined is the load-time check of ds: at the base values and on
// valid symbolic draws (at most checkDraws, within determinedBudget
// combinations), no other value of a variable the answer reads meets the
// conditions. It returns statedCheck's refusal, naming the first
// assignment where one does, and sets t.determined when there is none.
func (t *Template) checkDetermined(ds *determinedSet) error {
	t.determined = nil
	refuse := func(vals map[string]value, alt string, tooMany bool) error {
		name := ""
		for _, x := range ds.vary {
			if ds.read[x.names[0]] {
				name = x.names[0]
				break
			}
		}
		if tooMany {
			return unstatedError(name, "", fmt.Sprintf(": over %d combinations of values to try", maxDeterminedLeaves))
		}
		name = strings.SplitN(alt, "=", 2)[0]
		return unstatedError(name, "", fmt.Sprintf(": at %s, %s meets the conditions too", t.valuesText(vals), alt))
	}
	base := t.baseValues()
	alt, spent, tooMany := t.otherFit(ds, base)
	if alt != "" || tooMany {
		return refuse(base, alt, tooMany)
	}
	r := newRand(deriveSeed(0, t.ID, "determined", 0))
	valid := 0
	for d := 0; d < checkTries && valid < checkDraws && spent < determinedBudget; d++ {
		vals, reason := t.draw(r, true, true)
		if reason != "" {
			continue
		}
		if t.evaluate(vals, false).reason != "" {
			continue
		}
		valid++
		alt, n, tooMany := t.otherFit(ds, vals)
		spent += n
		if alt != "" || tooMany {
			return refuse(vals, alt, tooMany)
		}
	}
	t.determined = ds
	return nil
}

// uniqueBase is the base value of x, a drawn variable the question never
// states and no equality solves, when the conditions that read it fix it at
// the base values in baseEnv: the one value of its domain (at most maxList
// values) that meets every condition reading x, directly or through
// computed values, that can be evaluated there. ok is false when no such
// condition exists or it leaves none or several values.
func (t *Template) uniqueBase(x *variable, baseEnv map[string]value) (value, bool) {
	if len(x.names) != 1 {
		return value{}, false
	}
	d, err := x.domainFor(&env{vars: baseEnv})
	if err != nil || d.n > maxList {
		return value{}, false
	}
	nm := x.names[0]
	var found []value
	applied := false
	for k := int64(0); k < d.n && len(found) < 2; k++ {
		v := asWorded(d.at(k))
		work := maps.Clone(baseEnv)
		work[nm] = v
		touched := map[string]bool{nm: true}
		for _, y := range t.drawOrder() {
			if y.derived == nil || !slices.ContainsFunc(y.derived.vars, func(r string) bool { return touched[r] }) {
				continue
			}
			if slices.ContainsFunc(y.derived.vars, func(r string) bool { _, ok := work[r]; return !ok && t.variable(r) != nil }) {
				continue // reads a value not known yet
			}
			if w, err := y.derived.eval(&env{vars: work}); err == nil {
				work[y.names[0]], touched[y.names[0]] = w, true
			}
		}
		ok := true
		for _, c := range t.conds {
			if !slices.ContainsFunc(c.e.vars, func(r string) bool { return touched[r] }) {
				continue
			}
			if slices.ContainsFunc(c.e.vars, func(r string) bool { _, ok := work[r]; return !ok && t.variable(r) != nil }) {
				continue // reads a value not known yet
			}
			applied = true
			if met, err := c.e.evalBool(&env{vars: work}); err != nil || !met {
				ok = false
				break
			}
		}
		if ok {
			found = append(found, v)
		}
	}
	if !applied || len(found) != 1 {
		return value{}, false
	}
	return found[0], true
}
