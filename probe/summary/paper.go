package summary

import (
	"cmp"
	"math"
	"slices"

	"github.com/fragility/fragility/probe/results"
	"github.com/fragility/fragility/probe/stats"
)

// The rows of the paper's view, in the order of Table 1 of GSM-Symbolic
// (Mirzadeh et al., arXiv:2410.05229): the originals, then the drawn
// datasets at each difficulty level, then GSM-NoOp.
const (
	PaperOriginals = "GSM8K"
	PaperSymbolic  = "Symbolic"
	PaperP1        = "P1"
	PaperP2        = "P2"
	PaperNoOp      = "NoOp"
)

// PaperView is the GSM-Symbolic paper's own view of one model's trials,
// beside (never instead of) the clustered statistics of the rest of the
// summary. A dataset is the j-th instance (Trial.Instance = j) of every
// template of a row: a run with --instances 50 gives 50 datasets, as the
// paper's 50 datasets of 100 items. Each row's accuracy is given as the
// paper gives it, the mean ± sd over datasets, and with the clustered 95%
// interval of the mean and of its drop.
type PaperView struct {
	Model string `json:"model"` // ModelSummary.Label
	// Originals is the accuracy on the originals, the base variant at level
	// symbolic (for GSM-Symbolic files the published GSM8K question); nil
	// when the run has no base trials there.
	Originals *PaperOriginalRow `json:"originals"`
	// Rows are Symbolic (variant symbolic at level symbolic), P1 and P2
	// (variant symbolic at levels p1 and p2) and NoOp (variant
	// noop-seeming at level symbolic), those with trials, in that order.
	Rows []PaperRow `json:"rows"`
}

// PaperOriginalRow is the accuracy on the originals: one prompt per
// template (its copies collapse to the share of them answered right).
type PaperOriginalRow struct {
	Templates int `json:"templates"` // the N of "GSM8K (N)"
	// AccuracyPct is 100 × (templates answered right) / Templates, with
	// its cluster-t interval over templates (Wilson when every template
	// gave the same result).
	AccuracyPct *Estimate `json:"accuracy_pct"`
}

// PaperRow is one drawn row of the paper's table.
type PaperRow struct {
	Name    string `json:"name"`    // PaperSymbolic, PaperP1, PaperP2 or PaperNoOp
	Level   string `json:"level"`   // difficulty level of its templates
	Variant string `json:"variant"` // variant of its trials
	// Templates are the templates with a scored trial, Trials the scored
	// trials.
	Templates int `json:"templates"`
	Trials    int `json:"trials"`
	// Datasets holds one entry per instance index j, ascending: the
	// accuracy of the j-th dataset (100 × right / scored trials with
	// Instance = j).
	Datasets []PaperDataset `json:"datasets"`
	// TemplatesPerDataset is N, the number of templates in a dataset (its
	// scored trials, one per template): the smallest over the row's
	// datasets, TemplatesPerDatasetMax the largest (equal when every
	// dataset holds the same templates). SDPct depends on N: for templates
	// of a given spread it shrinks as 1/√N (BinomialSDPct), so an sd from
	// N templates is comparable with the paper's (datasets of 100
	// templates) only at the same N.
	TemplatesPerDataset    int `json:"templates_per_dataset"`
	TemplatesPerDatasetMax int `json:"templates_per_dataset_max"`
	// MeanPct is the mean of the datasets' accuracies and SDPct their
	// sample standard deviation (divisor n − 1; nil below 2 datasets), in
	// percent and percentage points: the variation of one dataset's
	// accuracy across re-draws, not the uncertainty of the mean.
	MeanPct float64  `json:"mean_pct"`
	SDPct   *float64 `json:"sd_pct"`
	// BinomialSDPct is the sd, in percentage points, that the datasets'
	// accuracies would have if each template's outcome were an independent
	// Bernoulli draw in every dataset with that template's own accuracy
	// across datasets: for datasets of the same N templates
	//
	//	100 · √(Σ_g s²_g) / N,  s²_g = p_g(1 − p_g) · n_g/(n_g − 1),
	//
	// p_g the share of template g's n_g trials in the row answered right
	// and s²_g the sample variance of those 0/1 outcomes (divisor n_g − 1,
	// as SDPct's; 0 when n_g = 1), the unbiased estimate of p_g(1 − p_g),
	// so that under independence E[BinomialSDPct²] = E[SDPct²]. The
	// formula is the variance of a mean of independent Bernoulli variables
	// with their own p_g, Var(Σ_g Y_g / N) = Σ_g p_g(1 − p_g) / N² (the
	// variance of a sum of independent variables is the sum of their
	// variances; the number right is Poisson-binomial: Wang 1993, "On the
	// number of successes in independent trials", Statistica Sinica
	// 3:295–312). Datasets of different sizes N_j average Σ_{g∈j} s²_g /
	// N_j² over the datasets j before the square root. Nil below 2
	// datasets. With every dataset holding every template, SDPct² −
	// BinomialSDPct² is exactly 100² · 2/N² times the sum over pairs of
	// templates of the sample covariances of their outcomes across
	// datasets: an SDPct well above it says that templates rise and fall
	// together from one dataset to the next; near it, the spread is what N
	// independent template outcomes give.
	BinomialSDPct *float64 `json:"binomial_sd_pct"`
	MinPct        float64  `json:"min_pct"`
	MaxPct        float64  `json:"max_pct"`
	// AccuracyPct is the pooled accuracy of the row's trials (equal to
	// MeanPct when every dataset holds every template) with its cluster-t
	// interval over templates (CR1 standard error, t on G − 1 degrees of
	// freedom; Wilson when the templates all give the same share).
	AccuracyPct *Estimate `json:"accuracy_pct"`
	// DropPP is the originals' accuracy − this row's, in percentage points,
	// paired on the original problem (Trial.IDOrig, else the template): the
	// mean over this row's trials of (the original's result − the trial's
	// result), clustered by original problem. Nil without originals.
	DropPP *Estimate `json:"drop_pp"`
	// DropVsSymbolicPP is, for NoOp only, Symbolic − NoOp on pairs of the
	// same template and instance index (the clause added to the drawn
	// instance, --reference drawn), clustered by template; nil otherwise
	// and when the NoOp instances were not drawn on the symbolic ones.
	DropVsSymbolicPP *Estimate `json:"drop_vs_symbolic_pp,omitempty"`
	// PairsVsSymbolic counts those pairs.
	PairsVsSymbolic int `json:"pairs_vs_symbolic,omitempty"`
	// OriginalsPercentile is where the originals' accuracy falls among the
	// datasets: 100 × (datasets below it + half the datasets equal to it)
	// / datasets (the mid-rank percentile, in percent); nil without
	// originals. It is descriptive: it places one number among this run's
	// datasets, whose spread depends on TemplatesPerDataset, and tests
	// nothing; whether the drawn problems are answered worse than the
	// originals is DropPP, paired on the original problem with its
	// clustered interval.
	OriginalsPercentile *float64 `json:"originals_percentile"`
}

// PaperDataset is one dataset of a row: the trials with one instance index.
type PaperDataset struct {
	Instance    int     `json:"instance"`
	Items       int     `json:"items"` // scored trials
	Right       int     `json:"right"`
	AccuracyPct float64 `json:"accuracy_pct"`
}

// paperRowSpecs are the rows of PaperView: name, level, variant.
var paperRowSpecs = [][3]string{
	{PaperSymbolic, "symbolic", "symbolic"},
	{PaperP1, "p1", "symbolic"},
	{PaperP2, "p2", "symbolic"},
	{PaperNoOp, "symbolic", "noop-seeming"},
}

// paperLevel is a trial's level for the paper's view: templates without
// one count as level symbolic.
func paperLevel(t *results.Trial) string {
	if t.Level == "" {
		return "symbolic"
	}
	return t.Level
}

// paperViews computes the paper's view of every model (Summary.Paper);
// nil unless some scored trial comes from a GSM-Symbolic template
// (Trial.IDOrig set), so that runs on other templates are unchanged.
func paperViews(trials []results.Trial, s *Summary) []PaperView {
	byModel := map[string][]*results.Trial{}
	gsms := false
	for i := range trials {
		t := &trials[i]
		if t.Skipped() {
			continue
		}
		gsms = gsms || t.IDOrig != ""
		byModel[modelKey(t)] = append(byModel[modelKey(t)], t)
	}
	if !gsms {
		return nil
	}
	var out []PaperView
	for i := range s.Models {
		m := &s.Models[i]
		ts := byModel[results.ConditionItemID(summaryModelPath(m), m.Condition)]
		if v := paperView(m.Label, ts, s.Params.Confidence); v != nil {
			out = append(out, *v)
		}
	}
	return out
}

// paperView is one model's PaperView; nil when it has no drawn row.
func paperView(label string, ts []*results.Trial, conf float64) *PaperView {
	v := &PaperView{Model: label}
	orig := map[string][2]float64{} // original problem -> (right, copies) of its base trials at level symbolic
	for _, t := range ts {
		if t.Variant == BaseVariant && paperLevel(t) == "symbolic" {
			x := orig[originKey(t)]
			x[0], x[1] = x[0]+b2f(t.Correct), x[1]+1
			orig[originKey(t)] = x
		}
	}
	var origPct float64
	if len(orig) > 0 {
		keys := sortedKeys(orig)
		r := stats.NewRatio(len(keys))
		for g, k := range keys {
			r.Add(g, orig[k][0]/orig[k][1])
		}
		v.Originals = &PaperOriginalRow{Templates: len(keys), AccuracyPct: clusterTPct(r, conf, true)}
		origPct = v.Originals.AccuracyPct.Value
	}
	for _, spec := range paperRowSpecs {
		var rows []*results.Trial
		for _, t := range ts {
			if t.Variant == spec[2] && paperLevel(t) == spec[1] {
				rows = append(rows, t)
			}
		}
		if len(rows) == 0 {
			continue
		}
		row := paperRow(spec, rows, conf)
		if v.Originals != nil {
			row.DropPP = dropVsOriginals(rows, orig, conf)
			p := percentileOf(origPct, row.Datasets)
			row.OriginalsPercentile = &p
		}
		if spec[0] == PaperNoOp {
			row.DropVsSymbolicPP, row.PairsVsSymbolic = noopVsSymbolic(ts, rows, conf)
		}
		v.Rows = append(v.Rows, row)
	}
	if len(v.Rows) == 0 {
		return nil
	}
	return v
}

// paperRow is a row's datasets, mean ± sd and pooled accuracy.
func paperRow(spec [3]string, rows []*results.Trial, conf float64) PaperRow {
	row := PaperRow{Name: spec[0], Level: spec[1], Variant: spec[2], Trials: len(rows)}
	byInst := map[int]*PaperDataset{}
	tmpl := map[string]int{}
	for _, t := range rows {
		d := byInst[t.Instance]
		if d == nil {
			d = &PaperDataset{Instance: t.Instance}
			byInst[t.Instance] = d
		}
		d.Items++
		if t.Correct {
			d.Right++
		}
		if _, ok := tmpl[t.TemplateID]; !ok {
			tmpl[t.TemplateID] = len(tmpl)
		}
	}
	row.Templates = len(tmpl)
	accs := make([]float64, 0, len(byInst))
	for _, d := range byInst {
		d.AccuracyPct = 100 * float64(d.Right) / float64(d.Items)
		row.Datasets = append(row.Datasets, *d)
	}
	slices.SortFunc(row.Datasets, func(a, b PaperDataset) int { return cmp.Compare(a.Instance, b.Instance) })
	for _, d := range row.Datasets {
		accs = append(accs, d.AccuracyPct)
	}
	row.MeanPct, row.SDPct = meanSD(accs)
	row.MinPct, row.MaxPct = slices.Min(accs), slices.Max(accs)
	row.TemplatesPerDataset, row.TemplatesPerDatasetMax = row.Datasets[0].Items, row.Datasets[0].Items
	for _, d := range row.Datasets {
		row.TemplatesPerDataset = min(row.TemplatesPerDataset, d.Items)
		row.TemplatesPerDatasetMax = max(row.TemplatesPerDatasetMax, d.Items)
	}
	row.BinomialSDPct = binomialSD(rows, row.Datasets)
	r := stats.NewRatio(len(tmpl))
	for _, t := range rows {
		r.Add(tmpl[t.TemplateID], b2f(t.Correct))
	}
	row.AccuracyPct = clusterTPct(r, conf, true)
	return row
}

// binomialSD is PaperRow.BinomialSDPct of a row's trials and datasets:
// 100 · √(mean over datasets j of Σ_{t∈j} s²_{g(t)} / N_j²), s²_g the
// sample variance of template g's 0/1 outcomes in the row (p_g(1 − p_g) ·
// n_g/(n_g − 1); 0 for one trial), N_j the dataset's trials; nil below 2
// datasets. Sums run over the trials in their (canonical) order.
func binomialSD(rows []*results.Trial, ds []PaperDataset) *float64 {
	if len(ds) < 2 {
		return nil
	}
	type tally struct{ n, k float64 }
	per := map[string]*tally{}
	for _, t := range rows {
		x := per[t.TemplateID]
		if x == nil {
			x = &tally{}
			per[t.TemplateID] = x
		}
		x.n, x.k = x.n+1, x.k+b2f(t.Correct)
	}
	sum := map[int]float64{} // instance -> Σ s²_g over its trials
	for _, t := range rows {
		if x := per[t.TemplateID]; x.n > 1 {
			p := x.k / x.n
			sum[t.Instance] += p * (1 - p) * x.n / (x.n - 1)
		}
	}
	var v float64
	for _, d := range ds {
		v += sum[d.Instance] / float64(d.Items*d.Items)
	}
	sd := 100 * math.Sqrt(v/float64(len(ds)))
	return &sd
}

// dropVsOriginals is PaperRow.DropPP: per trial, the result of its
// original (the share of that original's base copies answered right)
// minus its own, clustered by original problem; trials whose original
// was not run are left out.
func dropVsOriginals(rows []*results.Trial, orig map[string][2]float64, conf float64) *Estimate {
	idx := map[string]int{}
	for _, k := range sortedKeys(orig) {
		idx[k] = len(idx)
	}
	r := stats.NewRatio(len(idx))
	n := 0
	for _, t := range rows {
		o, ok := orig[originKey(t)]
		if !ok {
			continue
		}
		r.Add(idx[originKey(t)], o[0]/o[1]-b2f(t.Correct))
		n++
	}
	if n == 0 {
		return nil
	}
	return clusterTPct(r, conf, false)
}

// noopVsSymbolic is PaperRow.DropVsSymbolicPP and its number of pairs:
// NoOp trials drawn on the symbolic instance (Trial.Reference "symbolic")
// paired with the symbolic trial of the same template and instance.
func noopVsSymbolic(ts, noop []*results.Trial, conf float64) (*Estimate, int) {
	type key struct {
		tmpl string
		inst int
	}
	sym := map[key]*results.Trial{}
	for _, t := range ts {
		if t.Variant == "symbolic" && paperLevel(t) == "symbolic" {
			sym[key{t.TemplateID, t.Instance}] = t
		}
	}
	tmpl := map[string]int{}
	type pair struct {
		g int
		d float64
	}
	var ps []pair
	for _, t := range noop {
		s, ok := sym[key{t.TemplateID, t.Instance}]
		if !ok || t.Reference != "symbolic" {
			continue
		}
		if _, ok := tmpl[t.TemplateID]; !ok {
			tmpl[t.TemplateID] = len(tmpl)
		}
		ps = append(ps, pair{tmpl[t.TemplateID], b2f(s.Correct) - b2f(t.Correct)})
	}
	if len(ps) == 0 {
		return nil, 0
	}
	r := stats.NewRatio(len(tmpl))
	for _, p := range ps {
		r.Add(p.g, p.d)
	}
	return clusterTPct(r, conf, false), len(ps)
}

// clusterTPct is a ratio's value in percent (or percentage points) with its
// cluster-t interval at confidence conf (CR1 standard error over the
// clusters holding data, Student t on G − 1 degrees of freedom; see
// stats.Influence.CR1 and stats.ClusterT), clamped to [0, 100] for a share
// and to [−100, 100] for a difference. When the standard error is 0 or
// undefined the estimate is Degenerate and, for a share, its CI is the
// Wilson interval over the ratio's units; for a difference it is nil.
func clusterTPct(r stats.Ratio, conf float64, share bool) *Estimate {
	v, _ := r.Value()
	e := &Estimate{Value: 100 * v, Clusters: r.Clusters()}
	lo := -100.0
	if share {
		lo = 0
	}
	if inf, ok := r.Influence(); ok {
		if se, g, ok := inf.CR1(); ok && se > 1e-12 {
			se *= 100
			e.SE = &se
			if l, h, ok := stats.ClusterT(e.Value, se, g, conf); ok {
				e.ClusterT = &Interval{Lo: max(lo, l), Hi: min(100, h), Method: MethodClusterT}
			}
		}
	}
	e.CI = e.ClusterT
	if e.CI == nil {
		e.Degenerate = true
		if share {
			var k, n float64
			for i := range r.Num {
				k, n = k+r.Num[i], n+r.Den[i]
			}
			e.Wilson = wilsonPct(k, n, conf)
			e.CI = e.Wilson
		}
	}
	return e
}

// percentileOf is the mid-rank percentile of x among the datasets'
// accuracies: 100 × (#{a < x} + ½·#{a = x}) / n.
func percentileOf(x float64, ds []PaperDataset) float64 {
	var below, equal float64
	for _, d := range ds {
		switch {
		case math.Abs(d.AccuracyPct-x) < 1e-9:
			equal++
		case d.AccuracyPct < x:
			below++
		}
	}
	return 100 * (below + equal/2) / float64(len(ds))
}

// meanSD is the mean and the sample standard deviation (divisor n − 1;
// nil for n < 2) of xs.
func meanSD(xs []float64) (float64, *float64) {
	var s float64
	for _, x := range xs {
		s += x
	}
	m := s / float64(len(xs))
	if len(xs) < 2 {
		return m, nil
	}
	var ss float64
	for _, x := range xs {
		ss += (x - m) * (x - m)
	}
	sd := math.Sqrt(ss / float64(len(xs)-1))
	return m, &sd
}

// originKey is the original problem a trial restates: its IDOrig, or its
// template for templates without one.
func originKey(t *results.Trial) string {
	if t.IDOrig != "" {
		return t.IDOrig
	}
	return t.TemplateID
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// sortedKeys returns m's keys in ascending order.
func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}
