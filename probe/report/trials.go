package report

import (
	"cmp"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/fragility/fragility/llm"
	"github.com/fragility/fragility/probe/answer"
	"github.com/fragility/fragility/probe/results"
)

// DefaultMaxDetailTokens is the default of Options.MaxDetailTokens.
const DefaultMaxDetailTokens = 200_000

// tableData is the trial table as the page's script reads it (inline JSON):
// one row per trial and, for the row's detail view, its prompt, its response
// split around the extracted answer and its tokens with their entropies.
// Field names are short because a large run has many rows.
type tableData struct {
	Models    []string `json:"models"`
	Variants  []string `json:"variants"`
	Templates []string `json:"templates"`
	// Prefix is the text every rendered prompt begins with (instruction and
	// worked examples), stored once; Prompts are the distinct remainders.
	Prefix  string     `json:"prefix"`
	Prompts []string   `json:"prompts"`
	Rows    []tableRow `json:"rows"`
	// TokenCap is the most generated tokens the page colours by entropy;
	// Capped counts the rows beyond it, shown without token colouring.
	TokenCap int `json:"token_cap"`
	Capped   int `json:"capped"`
}

// tableRow is one trial.
type tableRow struct {
	ID       string  `json:"id"`
	Model    int     `json:"m"` // index into Models
	Variant  int     `json:"v"` // index into Variants
	Template int     `json:"t"` // index into Templates
	Instance int     `json:"i"`
	Level    string  `json:"l,omitempty"`
	Steps    int     `json:"st"`
	Correct  int     `json:"c"` // 1 right, 0 wrong, -1 skipped
	Got      string  `json:"x"` // extracted answer, "" when none
	Want     string  `json:"e"` // expected answer
	Rule     string  `json:"r"` // extraction rule that fired
	Tokens   int     `json:"n"` // generated tokens
	Entropy  float64 `json:"h"` // mean answer-token entropy, bits, from results.csv (3 decimals)
	Prompt   int     `json:"p"` // index into Prompts; -1 without a trace
	Question string  `json:"q,omitempty"`
	// Response is the response split before, at and after the extracted
	// answer as written; omitted when the tokens (Pieces) join to the
	// response, which is then written once, as tokens, and AnswerAt marks
	// the answer in it.
	Response *[3]string `json:"a,omitempty"`
	AnswerAt [2]int     `json:"at"` // answer within the joined tokens, in UTF-16 code units (JavaScript string offsets); equal when none
	Pieces   []string   `json:"k,omitempty"`
	Centibit []int      `json:"b,omitempty"`  // per-token entropy in 1/100 bit
	Answer   [2]int     `json:"w"`            // answer tokens [from, to); equal when unknown
	Skip     string     `json:"s,omitempty"`  // skip reason
	Cut      int        `json:"u"`            // 1 when the output budget ended the answer (stop reason max_tokens)
	Error    string     `json:"ek,omitempty"` // error anatomy kind of a wrong answer (results.csv error_kind)
	// Ref is the variant this trial is paired with (Trial.ReferenceVariant)
	// and Diff the word diff of its question against that trial's (wordDiff
	// runs); both empty for a reference itself, without a partner, or when
	// the questions are equal.
	Ref  string   `json:"rv,omitempty"`
	Diff []string `json:"d,omitempty"`
}

// buildTable builds the trial table of a run, rows sorted by model, template,
// variant and instance. At most maxTokens generated tokens (over all rows, in
// row order) are kept for colouring; later rows show their response only.
func (v *view) buildTable(maxTokens int) tableData {
	d := tableData{Variants: slices.Clone(v.variants), TokenCap: maxTokens}
	for _, m := range v.models {
		d.Models = append(d.Models, m.Label)
	}
	tset := map[string]bool{}
	for i := range v.run.Trials {
		tset[v.run.Trials[i].TemplateID] = true
	}
	d.Templates = sortedKeys(tset)
	trials := v.tableOrder(&d)

	// Prompts: the common prefix once, the distinct remainders each once.
	var prompts []string
	for _, t := range trials {
		if tr := v.run.Traces[t.ItemID]; tr != nil {
			prompts = append(prompts, tr.Prompt)
		}
	}
	d.Prefix = commonPrefix(prompts)
	promptIdx := map[string]int{}

	questions := map[string]string{}
	for _, t := range trials {
		questions[pairKey(v.label(t), t, t.Variant)] = t.Question
	}
	budget := maxTokens
	for _, t := range trials {
		r := tableRow{
			ID: t.ItemID, Model: indexOf(&d.Models, v.label(t)), Variant: indexOf(&d.Variants, t.Variant),
			Template: indexOf(&d.Templates, t.TemplateID), Instance: t.Instance, Level: t.Level, Steps: t.Steps,
			Got: t.Extracted, Want: t.Expected, Rule: t.Rule, Tokens: t.Tokens, Prompt: -1, Skip: t.SkipReason,
		}
		if t.StopReason == llm.StopMaxTokens {
			r.Cut = 1
		}
		r.Error = t.ErrorKind
		if ref := t.ReferenceVariant(); ref != t.Variant {
			if q, ok := questions[pairKey(v.label(t), t, ref)]; ok {
				if r.Diff = wordDiff(q, t.Question); r.Diff != nil {
					r.Ref = ref
				}
			}
		}
		switch {
		case t.Skipped():
			r.Correct = -1
		case t.Correct:
			r.Correct = 1
		}
		if !math.IsNaN(t.AnswerEntropyMean) && !math.IsInf(t.AnswerEntropyMean, 0) {
			r.Entropy = math.Round(t.AnswerEntropyMean*1000) / 1000
		}
		parts := splitResponse(t)
		if tr := v.run.Traces[t.ItemID]; tr == nil {
			r.Question = t.Question
		} else {
			d.addTrace(&r, t, tr, promptIdx, &budget)
		}
		if r.Pieces != nil && joinsTo(r.Pieces, t.Response) {
			a := utf16Len(parts[0])
			r.AnswerAt = [2]int{a, a + utf16Len(parts[1])}
		} else {
			r.Response = &parts
		}
		d.Rows = append(d.Rows, r)
	}
	return d
}

// tableOrder returns the run's trials in the table's row order: by model
// and variant in d's order, then by template and instance.
func (v *view) tableOrder(d *tableData) []*results.Trial {
	trials := make([]*results.Trial, len(v.run.Trials))
	for i := range v.run.Trials {
		trials[i] = &v.run.Trials[i]
	}
	slices.SortStableFunc(trials, func(a, b *results.Trial) int {
		return cmp.Or(
			cmp.Compare(indexOf(&d.Models, v.label(a)), indexOf(&d.Models, v.label(b))),
			strings.Compare(a.TemplateID, b.TemplateID),
			cmp.Compare(indexOf(&d.Variants, a.Variant), indexOf(&d.Variants, b.Variant)),
			cmp.Compare(a.Instance, b.Instance),
		)
	})
	return trials
}

// pairKey is the key of the trial of model label, t's template and instance
// and the given variant.
func pairKey(label string, t *results.Trial, variant string) string {
	return label + "\x00" + t.TemplateID + "\x00" + variant + "\x00" + strconv.Itoa(t.Instance)
}

// indexOf is the index of s in *xs, appended when missing.
func indexOf(xs *[]string, s string) int {
	i := slices.Index(*xs, s)
	if i < 0 {
		*xs = append(*xs, s)
		i = len(*xs) - 1
	}
	return i
}

// addTrace fills row r of trial t from its trace: the index of its prompt's
// remainder after d.Prefix (added to d.Prompts when new, found by
// promptIdx) and, while the token budget lasts, its tokens with their
// entropies and the answer's tokens; a row beyond the budget is counted in
// d.Capped and the budget ends.
func (d *tableData) addTrace(r *tableRow, t *results.Trial, tr *Trace, promptIdx map[string]int, budget *int) {
	rest := strings.TrimPrefix(tr.Prompt, d.Prefix)
	i, ok := promptIdx[rest]
	if !ok {
		i = len(d.Prompts)
		promptIdx[rest] = i
		d.Prompts = append(d.Prompts, rest)
	}
	r.Prompt = i
	if len(tr.Tokens) > 0 && len(tr.Tokens) <= *budget {
		*budget -= len(tr.Tokens)
		r.Pieces = make([]string, len(tr.Tokens))
		r.Centibit = make([]int, len(tr.Tokens))
		for j, tok := range tr.Tokens {
			r.Pieces[j] = tok.Piece
			r.Centibit[j] = int(math.Round(tok.EntropyBits * 100))
		}
		if !t.Skipped() {
			if from, to, ok := answerSpan(t, tr.Tokens); ok && t.Rule != answer.RuleNone {
				r.Answer = [2]int{from, to}
			}
		}
	} else if len(tr.Tokens) > 0 {
		*budget = 0
		d.Capped++
	}
}

// joinsTo reports whether pieces, each valid UTF-8 (so that JSON carries it
// unchanged), join to s.
func joinsTo(pieces []string, s string) bool {
	n := 0
	for _, p := range pieces {
		if !utf8.ValidString(p) || !strings.HasPrefix(s[n:], p) {
			return false
		}
		n += len(p)
	}
	return n == len(s)
}

// utf16Len returns the length of s in UTF-16 code units, the unit of
// JavaScript string offsets.
func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r)
	}
	return n
}

// splitResponse returns a trial's response split around the extracted answer
// as written (found by the answer extraction on the recorded response); the
// whole response in the first part when no answer was extracted or today's
// rules extract another one than the recorded.
func splitResponse(t *results.Trial) [3]string {
	ex := answer.Extract(t.Response)
	if ex.Rule == answer.RuleNone || ex.Value != t.Extracted || ex.Start < 0 || ex.End > len(t.Response) || ex.Start > ex.End {
		return [3]string{t.Response, "", ""}
	}
	return [3]string{t.Response[:ex.Start], t.Response[ex.Start:ex.End], t.Response[ex.End:]}
}

// commonPrefix returns the longest prefix, ending with a newline, that all of
// ss share; "" for fewer than two strings.
func commonPrefix(ss []string) string {
	if len(ss) < 2 {
		return ""
	}
	p := ss[0]
	for _, s := range ss[1:] {
		n := min(len(p), len(s))
		i := 0
		for i < n && p[i] == s[i] {
			i++
		}
		p = p[:i]
		if p == "" {
			return ""
		}
	}
	if j := strings.LastIndexByte(p, '\n'); j >= 0 {
		return p[:j+1]
	}
	return ""
}
