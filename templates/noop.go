package templates

import (
	"fmt"
	"regexp"
	"strings"
)

// NoopKind is the kind of a no-op clause, written `kind:` in the own format.
type NoopKind string

// The two kinds of no-op clause. Each feeds its own variant.
const (
	// NoopIrrelevant is a plainly irrelevant clause (the weather, a color): the
	// noop variant. It must not share a unit or a counted word with the
	// question (see unitClash); one that does is excluded for that template.
	NoopIrrelevant NoopKind = "irrelevant"
	// NoopSeeming is the GSM-NoOp kind (Mirzadeh et al., 2024, section 4.4):
	// a clause that looks relevant and mentions a quantity of the same kind
	// ("five of the loaves were slightly smaller than usual") but does not
	// change the answer: the noop-seeming variant. It is used only when a
	// person has reviewed it (reviewed: true) and written a one-line reason.
	NoopSeeming NoopKind = "seeming"
)

// variant returns the variant a clause of this kind feeds.
func (k NoopKind) variant() Variant {
	if k == NoopSeeming {
		return VariantNoopSeeming
	}
	return VariantNoop
}

// noopClause is a clause inserted by the noop or noop-seeming variant. Its
// own variables are drawn per instance; it may also read the template's name
// and entity variables, never its numbers.
type noopClause struct {
	text     *text
	vars     []*variable
	kind     NoopKind
	reason   string // why the answer is unchanged (required for a reviewed seeming clause)
	reviewed bool   // a person checked it; a flagged clause is then used
	flag     string // the word that flagged it; "" when none
	clash    string // irrelevant clauses: why the clause is excluded for this template (a shared unit or counted word); "" when none
	line     int    // line in the template file; for the generic pool, the 1-based position

	// GSM-NoOp clause set (noopset.go): where the clause goes, its
	// conditions, its alternative answer and the set's file; zero otherwise.
	position string
	conds    []*expression
	alt      *expression
	setFile  string
}

// usable reports whether the clause may be inserted: a seeming clause only
// when reviewed; an irrelevant one when not flagged (or flagged and
// reviewed) and sharing no unit or counted word with the question.
func (c *noopClause) usable() bool {
	if c.kind == NoopSeeming {
		return c.reviewed && c.reason != ""
	}
	return (c.flag == "" || c.reviewed) && c.clash == ""
}

// why says why an unusable or flagged clause is listed in a set's flags;
// "" when the clause is neither.
func (c *noopClause) why() string {
	var parts []string
	if c.kind == NoopSeeming && !c.reviewed {
		parts = append(parts, "a noop-seeming clause is used only when reviewed")
	}
	if c.flag != "" {
		parts = append(parts, fmt.Sprintf("contains %q, which can change the asked quantity", c.flag))
	}
	if c.clash != "" {
		parts = append(parts, c.clash)
	}
	return strings.Join(parts, "; ")
}

// flagRE matches words that can plausibly change the asked quantity when they
// appear in a supposedly irrelevant clause ("two boxes are reserved"). A
// clause containing one is flagged for review and not used unless the
// template marks it reviewed.
var flagRE = regexp.MustCompile(`(?i)\b(reserved?|reserves|lost|loses?|losing|returned|returns?|gave|gives?|giving|given|broke|broken|breaks?|ate|eaten|eats?|spent|spends?|spend|sold|sells?|used|uses?|donated|donates?|stolen|stole|steals?|dropped|drops?|damaged|spoiled|spoilt|rotten|expired|discarded|threw|thrown|throws?|borrowed|borrows?|lent|lends?|removed|removes?|missing|took|takes?|taken|kept|keeps?|saved|saves?|paid|pays?|owes?|owed|refund(ed)?|discount(ed)?|extra|fewer|less|smaller|larger|half|twice|double|doubled|defective|excluded?|minus|subtract(ed)?)\b`)

// flagWord returns the first flagged word in s, or "".
func flagWord(s string) string {
	return strings.ToLower(flagRE.FindString(s))
}

// usableNoops returns the template's own clauses of one kind that may be
// inserted.
func (t *Template) usableNoops(kind NoopKind) []*noopClause {
	var out []*noopClause
	for _, c := range t.noops {
		if c.kind == kind && c.usable() {
			out = append(out, c)
		}
	}
	return out
}

// noopPool returns the clauses the variant v draws from and their source
// ("template" or "generic"): a template's own clauses of the matching kind,
// or, for imported templates, the generic pool less the clauses that share a
// unit or counted word with this template's question.
func (t *Template) noopPool(v Variant) ([]*noopClause, string) {
	if t.genericNoop {
		if v != VariantNoop {
			if set := t.usableNoops(NoopSeeming); len(set) > 0 {
				return set, "noopset"
			}
			return nil, "generic"
		}
		var out []*noopClause
		for _, c := range genericClauses() {
			if t.genericClash[c.line] == "" {
				out = append(out, c)
			}
		}
		return out, "generic"
	}
	kind := NoopIrrelevant
	if v == VariantNoopSeeming {
		kind = NoopSeeming
	}
	return t.usableNoops(kind), "template"
}

// noNoopReason says why the template has no clause for the variant v.
func (t *Template) noNoopReason(v Variant) string {
	if t.genericNoop {
		if v == VariantNoopSeeming {
			return "the generic pool has no noop-seeming clauses (they need a reviewed clause written for the template): " + t.noopSetReason()
		}
		return "every generic no-op clause shares a unit or counted word with the question"
	}
	kind := NoopIrrelevant
	if v == VariantNoopSeeming {
		kind = NoopSeeming
	}
	n := 0
	for _, c := range t.noops {
		if c.kind == kind {
			n++
		}
	}
	if n == 0 {
		return fmt.Sprintf("the template has no %s no-op clause", kind)
	}
	if kind == NoopSeeming {
		return "no noop-seeming clause of the template is reviewed"
	}
	return "every irrelevant no-op clause of the template is flagged for review or shares a unit or counted word with the question"
}

// flags lists the template's clauses that are flagged or excluded, as a set
// records them.
func (t *Template) flags() []Flag {
	var out []Flag
	for _, c := range t.noops {
		if why := c.why(); why != "" {
			src := "template"
			if c.setFile != "" {
				src = "noopset" // the GSM-NoOp clause set; Line is in its file
			}
			out = append(out, Flag{Template: t.ID, Source: src, Line: c.line, Clause: c.text.source(), Kind: c.kind,
				Word: c.flag, Reason: why, Reviewed: c.reviewed, Used: c.usable()})
		}
	}
	if t.genericNoop {
		for _, c := range genericClauses() {
			if why := t.genericClash[c.line]; why != "" {
				out = append(out, Flag{Template: t.ID, Source: "generic", Line: c.line, Clause: c.text.source(), Kind: c.kind,
					Reason: why, Reviewed: true})
			}
		}
	}
	return out
}

// genericNoops is the reviewed pool of generic irrelevant clauses used by the
// noop variant of templates that have no clause of their own (GSM-Symbolic
// imports). None mentions a quantity, an object or a person of any problem;
// the numbers they carry count nothing a problem asks about. Each was checked
// by hand against flagRE and against the question forms of the built-ins and
// the GSM-Symbolic samples.
var genericNoops = []string{
	"The weather that day was mild and sunny.",
	"A radio was playing softly in the background.",
	"The building on the corner was painted {color} last spring.",
	"The nearest train station is {km} kilometers away.",
	"It was a {weekday} in late autumn.",
	"A neighbor's {pet} slept by the window all afternoon.",
	"The town library opened {years} years ago.",
	"The street outside had been repaved the week before.",
	"A clock on the wall ran {minutes} minutes fast.",
	"Someone nearby was humming a song from an old film.",
}

// genericNoopVars are the variables of the generic clauses: each is drawn
// per instance and reads nothing of the problem.
var genericNoopVars = map[string]string{
	"color":   "sample(colors)",
	"km":      "range(2, 30)",
	"weekday": "sample(weekdays)",
	"pet":     `sample(["cat", "dog", "parrot"])`,
	"years":   "range(3, 90)",
	"minutes": "range(2, 15)",
}

// insertNoop puts clause before the final sentence (the question) of q; a
// one-sentence question gets the clause in front.
func insertNoop(q, clause string) string {
	end := len(strings.TrimRight(q, " \n"))
	cut := -1
	for i := 0; i < end-1; i++ {
		c := q[i]
		if (c == '.' || c == '!' || c == '?') && (q[i+1] == ' ' || q[i+1] == '\n') {
			cut = i + 1
		}
	}
	if cut < 0 {
		return clause + " " + q
	}
	rest := strings.TrimLeft(q[cut:], " ")
	sep := q[cut : len(q)-len(rest)]
	if sep == "" {
		sep = " "
	}
	return q[:cut] + " " + clause + sep + rest
}
