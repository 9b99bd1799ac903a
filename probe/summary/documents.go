package summary

import (
	"slices"
	"strings"

	"github.com/fragility/fragility/probe/docqa"
	"github.com/fragility/fragility/probe/results"
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
func answerKey(t *results.Trial) string {
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
func documentsSummary(trials []results.Trial, s *Summary) *DocumentSummary {
	if !slices.ContainsFunc(trials, func(t results.Trial) bool { return t.Passages != "" }) {
		return nil
	}
	p := s.Params
	d := &docSummarizer{trials: trials, G: len(s.Templates), tIdx: map[string]int{}, base: map[docKey]*results.Trial{}}
	for i, t := range s.Templates {
		d.tIdx[t] = i
	}
	items := map[string]bool{}
	for i := range trials {
		t := &trials[i]
		if t.Skipped() {
			continue
		}
		items[t.TemplateID] = true
		if t.Variant == BaseVariant {
			d.base[docKey{modelKey(t), t.TemplateID, t.Instance}] = t
		}
	}
	ds := &DocumentSummary{Items: len(items), ChangedRule: ChangedRule}
	d.es = &estimates{p: &p}
	for mi := range s.Models {
		ds.Models = append(ds.Models, d.model(&s.Models[mi], s.Variants))
	}
	// Changes hold copies of the rates, which share their ChangedPct
	// pointers with es: finishing es fills them.
	d.es.finish(d.G)
	return ds
}

// docKey identifies a base trial: the model, the item and the instance.
type docKey struct {
	model, item string
	inst        int
}

// docSummarizer is the state documentsSummary's steps share: the trials,
// the templates' indices (G of them), each base trial by docKey, and the
// estimates registered.
type docSummarizer struct {
	trials []results.Trial
	G      int
	tIdx   map[string]int
	base   map[docKey]*results.Trial
	es     *estimates
}

// docChangeGroup gathers one group of variants' answer changes against
// base: the per-template ratio of changed answers and the counts.
type docChangeGroup struct {
	r  stats.Ratio
	ch *AnswerChangeRate
}

// model is one model's document section: its scores per variant and its
// answer-change rates per group of variants.
func (d *docSummarizer) model(m *ModelSummary, variants []string) DocumentModel {
	dm := DocumentModel{Label: m.Label}
	groups := map[string]*docChangeGroup{}
	for _, v := range variants {
		if dv, ok := d.variant(m, v, groups); ok {
			dm.Variants = append(dm.Variants, dv)
		}
	}
	for _, g := range docGroups {
		gr := groups[g]
		if gr == nil {
			continue
		}
		dm.Changes = append(dm.Changes, d.changes(gr))
	}
	return dm
}

// variant scores model m's trials of variant v and adds each one's change
// against its base trial to its group in groups; false when none is scored.
func (d *docSummarizer) variant(m *ModelSummary, v string, groups map[string]*docChangeGroup) (DocumentVariant, bool) {
	dv := DocumentVariant{Variant: v, ScoreRules: map[string]int{}}
	var f1 float64
	for i := range d.trials {
		t := &d.trials[i]
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
		b := d.base[docKey{modelKey(t), t.TemplateID, t.Instance}]
		if g == "" || b == nil {
			continue
		}
		gr := groups[g]
		if gr == nil {
			gr = &docChangeGroup{r: stats.NewRatio(d.G), ch: &AnswerChangeRate{Group: g}}
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
		gr.r.Add(d.tIdx[t.TemplateID], y)
		if b.Correct && !t.Correct {
			gr.ch.RightToWrong++
		}
		if !b.Correct && t.Correct {
			gr.ch.WrongToRight++
		}
	}
	if dv.Scored == 0 {
		return dv, false
	}
	dv.MeanF1 = f1 / float64(dv.Scored)
	return dv, true
}

// changes registers a group's rate of changed answers (percent, with its
// Wilson interval) in the estimates and returns the group's rate.
func (d *docSummarizer) changes(gr *docChangeGroup) AnswerChangeRate {
	G, p := d.G, d.es.p
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
	gr.ch.ChangedPct = d.es.add(100*float64(gr.ch.Changed)/n, influence, func(idx []int) (float64, bool) {
		v, ok := r.At(idx)
		return 100 * v, ok
	}, 0, 100, w)
	gr.ch.ChangedPct.Wilson = w
	return *gr.ch
}

// modelSummaryKey is modelKey for a ModelSummary.
func modelSummaryKey(m *ModelSummary) string {
	if m.Path != "" {
		return m.Path
	}
	return m.Name
}
