package probe

import (
	"fmt"
	"slices"
	"strings"

	"github.com/fragility/fragility/probe/docqa"
	"github.com/fragility/fragility/probe/stats"
)

// DocumentSummary is summary.json's "documents" section, present when the
// run's trials are document items (run --items; a passages column): per
// model, accuracy, token F1 and "not stated" answers per variant, and how
// often the answer changed against base when the question was reworded, an
// irrelevant passage was added, or the passages were reordered.
type DocumentSummary struct {
	Items int `json:"items"` // items (the clusters) with a scored trial
	// ChangedRule says when an answer counts as changed.
	ChangedRule string          `json:"changed_rule"`
	Models      []DocumentModel `json:"models"` // in Summary.Models order
}

// DocumentModel is one model's part of DocumentSummary.
type DocumentModel struct {
	Label    string             `json:"label"` // ModelSummary.Label
	Variants []DocumentVariant  `json:"variants"`
	Changes  []AnswerChangeRate `json:"changes"` // one per group of variants present: reworded, distractor, shuffled, distractor-shuffled
}

// DocumentVariant is one variant's scores on document items. Counts are
// of scored trials (skipped ones left out), copies included.
type DocumentVariant struct {
	Variant   string  `json:"variant"`
	Scored    int     `json:"scored"`
	Correct   int     `json:"correct"`
	NotStated int     `json:"not_stated"` // answered "not stated" (scored as wrong)
	MeanF1    float64 `json:"mean_f1"`    // mean token F1, in [0, 1]
	// ScoreRules counts the trials per scoring rule ("number",
	// "exact_match").
	ScoreRules map[string]int `json:"score_rules"`
}

// AnswerChangeRate is how often the answer to an item changed between base
// and the variants of one group, over (base, variant) trial pairs of the
// same item and instance, both scored. ChangedPct has the run's intervals
// with the item as the cluster (cluster-t below Params.FewTemplates items,
// else the cluster bootstrap; Wilson over pairs as independent when every
// item gave the same share).
type AnswerChangeRate struct {
	Group        string    `json:"group"`    // "reworded", "distractor", "shuffled" or "distractor-shuffled"
	Variants     []string  `json:"variants"` // the variants pooled, e.g. paraphrase-1, paraphrase-2
	Pairs        int       `json:"pairs"`
	Changed      int       `json:"changed"`
	ChangedPct   *Estimate `json:"changed_pct"`
	RightToWrong int       `json:"right_to_wrong"` // base right, variant wrong
	WrongToRight int       `json:"wrong_to_right"` // base wrong, variant right
}

// ChangedRule is DocumentSummary.ChangedRule.
const ChangedRule = "the extracted answers of base and variant differ: numbers compared as exact values, text after docqa.NormalizeAnswer (case, punctuation, articles, white space); \"not stated\" and no answer are answers of their own"

// docGroup is the group of a document variant for AnswerChangeRate.
func docGroup(v string) string {
	switch {
	case strings.HasPrefix(v, docqa.Paraphrase+"-"):
		return "reworded"
	case v == docqa.DistractorShuffle:
		return "distractor-shuffled"
	case strings.HasPrefix(v, docqa.Distractor+"-"):
		return "distractor"
	case v == docqa.Shuffle:
		return "shuffled"
	}
	return ""
}

var docGroups = []string{"reworded", "distractor", "shuffled", "distractor-shuffled"}

// answerKey is what ChangedRule compares.
func answerKey(t *Trial) string {
	switch {
	case t.NotStated:
		return "\x00not stated"
	case t.ScoreRule == docqa.ScoreExactMatch:
		return docqa.NormalizeAnswer(t.Extracted)
	}
	return t.Extracted
}

// documentsSummary computes the documents section of s from the trials, or
// nil when no trial is a document item. Its intervals use s.Params and a
// joint cluster bootstrap over s.Templates of its own, drawn from the same
// seed as the summary's (so the same resamples of items).
func documentsSummary(trials []Trial, s *Summary) *DocumentSummary {
	if !slices.ContainsFunc(trials, func(t Trial) bool { return t.Passages != "" }) {
		return nil
	}
	p := s.Params
	G := len(s.Templates)
	tIdx := map[string]int{}
	for i, t := range s.Templates {
		tIdx[t] = i
	}
	type key struct {
		model, item string
		inst        int
	}
	base := map[key]*Trial{}
	items := map[string]bool{}
	for i := range trials {
		t := &trials[i]
		if t.Skipped() {
			continue
		}
		items[t.TemplateID] = true
		if t.Variant == BaseVariant {
			base[key{modelKey(t), t.TemplateID, t.Instance}] = t
		}
	}
	ds := &DocumentSummary{Items: len(items), ChangedRule: ChangedRule}
	es := &estimates{p: &p}
	for mi := range s.Models {
		m := &s.Models[mi]
		dm := DocumentModel{Label: m.Label}
		type group struct {
			r        stats.Ratio
			ch       *AnswerChangeRate
			variants []string
		}
		groups := map[string]*group{}
		for _, v := range s.Variants {
			dv := DocumentVariant{Variant: v, ScoreRules: map[string]int{}}
			var f1 float64
			for i := range trials {
				t := &trials[i]
				if t.Skipped() || t.Variant != v || modelKey(t) != modelSummaryKey(m) {
					continue
				}
				dv.Scored++
				if t.Correct {
					dv.Correct++
				}
				if t.NotStated {
					dv.NotStated++
				}
				f1 += t.F1
				dv.ScoreRules[t.ScoreRule]++
				g := docGroup(v)
				b := base[key{modelKey(t), t.TemplateID, t.Instance}]
				if g == "" || b == nil {
					continue
				}
				gr := groups[g]
				if gr == nil {
					gr = &group{r: stats.NewRatio(G), ch: &AnswerChangeRate{Group: g}}
					groups[g] = gr
				}
				if !slices.Contains(gr.ch.Variants, v) {
					gr.ch.Variants = append(gr.ch.Variants, v)
				}
				changed := answerKey(b) != answerKey(t)
				y := 0.0
				if changed {
					y = 1
					gr.ch.Changed++
				}
				gr.ch.Pairs++
				gr.r.Add(tIdx[t.TemplateID], y)
				if b.Correct && !t.Correct {
					gr.ch.RightToWrong++
				}
				if !b.Correct && t.Correct {
					gr.ch.WrongToRight++
				}
			}
			if dv.Scored == 0 {
				continue
			}
			dv.MeanF1 = f1 / float64(dv.Scored)
			dm.Variants = append(dm.Variants, dv)
		}
		for _, g := range docGroups {
			gr := groups[g]
			if gr == nil {
				continue
			}
			n := float64(gr.ch.Pairs)
			var w *Interval
			if lo, hi, ok := stats.Wilson(float64(gr.ch.Changed), n, p.Confidence); ok {
				w = &Interval{Lo: 100 * lo, Hi: 100 * hi, Method: MethodWilson}
			}
			influence, ok := gr.r.Influence()
			if !ok {
				influence = stats.Influence{E: make([]float64, G), Present: make([]bool, G)}
			} else {
				influence = influence.Combine(100, influence, 0)
			}
			r := gr.r
			gr.ch.ChangedPct = es.add(100*float64(gr.ch.Changed)/n, influence, func(idx []int) (float64, bool) {
				v, ok := r.At(idx)
				return 100 * v, ok
			}, 0, 100, w)
			gr.ch.ChangedPct.Wilson = w
			dm.Changes = append(dm.Changes, *gr.ch)
		}
		ds.Models = append(ds.Models, dm)
	}
	// Changes hold copies of the rates, which share their ChangedPct
	// pointers with es: finishing es fills them.
	es.finish(G)
	return ds
}

// modelSummaryKey is modelKey for a ModelSummary.
func modelSummaryKey(m *ModelSummary) string {
	if m.Path != "" {
		return m.Path
	}
	return m.Name
}

// changeText renders an AnswerChangeRate for the narrative: "8.3% of
// pairs (4/48; 95% CI [0.0, 18.5], cluster-t over 24 items)".
func changeText(c *AnswerChangeRate, conf string) string {
	e := c.ChangedPct
	src := "no interval"
	switch {
	case e == nil || e.CI == nil:
	case e.Degenerate:
		src = fmt.Sprintf("%s, as every one of the %d items gave the same share", e.CI.Method, e.Clusters)
	default:
		src = fmt.Sprintf("%s over %d items", e.CI.Method, e.Clusters)
	}
	return fmt.Sprintf("%s%% of pairs (%d/%d; %s CI %s, %s)", fopt(e, 1), c.Changed, c.Pairs, conf, ivOpt(e, 1), src)
}

// documentsIntro replaces narrativeIntro for a run on document items.
const documentsIntro = `This probe asks a model questions about passages of text, the user's own items, in controlled variants and measures what changes. It transfers the method of GSM-Symbolic (Mirzadeh et al., 2024, arXiv:2410.05229) from arithmetic templates to reading: the same question asked in the user's rewordings should get the same answer (paraphrase-k), and an on-topic passage that does not bear on the question should not change it (distractor-k, the retrieval form of GSM-NoOp's irrelevant clause); shuffle reorders the passages, and distractor-shuffle does both. Each variant is compared with the item as written (base). In the statistics below a template is an item of the file (the cluster), and a prompt is one question with its passages in one order. What the probe reports is what was observed on these items; an absent drop does not show how a model arrives at its answers.`

// writeDocuments writes the narrative's section on document questions:
// per model, the answer-change sentences the wording asks for, and
// a table of accuracy, token F1 and "not stated" answers per variant.
func writeDocuments(b *strings.Builder, ds *DocumentSummary, conf string) {
	b.WriteString("\n## Document questions\n\n")
	fmt.Fprintf(b, "%d items. Scoring: numbers compared exactly; text by exact match after normalisation (case, punctuation, the articles a/an/the, white space) against any accepted answer, with token F1 as a secondary measure; an answer of \"not stated\" is wrong and counted on its own. An answer changed when %s.\n",
		ds.Items, ChangedRule)
	for i := range ds.Models {
		dm := &ds.Models[i]
		fmt.Fprintf(b, "\n### %s: answers under rewording and irrelevant passages\n\n", dm.Label)
		for _, c := range dm.Changes {
			c := c
			switch c.Group {
			case "reworded":
				fmt.Fprintf(b, "- Answers changed when the question was reworded in %s", changeText(&c, conf))
			case "distractor":
				fmt.Fprintf(b, "- An irrelevant passage changed the answer in %s", changeText(&c, conf))
			case "shuffled":
				fmt.Fprintf(b, "- Reordering the passages changed the answer in %s", changeText(&c, conf))
			case "distractor-shuffled":
				fmt.Fprintf(b, "- An irrelevant passage with the passages reordered changed the answer in %s", changeText(&c, conf))
			}
			fmt.Fprintf(b, "; right to wrong in %d, wrong to right in %d (variants: %s).\n", c.RightToWrong, c.WrongToRight, strings.Join(c.Variants, ", "))
		}
		if len(dm.Changes) == 0 {
			b.WriteString("- No variant other than base was paired with base: no change rate.\n")
		}
		b.WriteString("\n| variant | right (trials) | mean token F1 | not stated |\n|---|---|---|---|\n")
		for _, v := range dm.Variants {
			fmt.Fprintf(b, "| %s | %d/%d | %s | %d |\n", v.Variant, v.Correct, v.Scored, fnum(v.MeanF1, 3), v.NotStated)
		}
	}
}
