package summary

import (
	"github.com/fragility/fragility/probe/anatomy"
	"github.com/fragility/fragility/probe/stats"
)

// ErrorAnatomy is what went wrong in one model × variant's wrong answers
// (package anatomy): for each kind, in anatomy.Kinds order, the wrong
// trials of that kind and their share of the wrong trials, with the
// clustered intervals of a share (the cluster is the template; copies of a
// prompt count as trials here, as every error is read from its own
// response).
type ErrorAnatomy struct {
	Rules string      `json:"rules"` // anatomy.Version
	Wrong int         `json:"wrong"` // scored wrong trials
	Kinds []ErrorKind `json:"kinds"`
}

// ErrorKind is one kind of ErrorAnatomy.
type ErrorKind struct {
	Kind     string    `json:"kind"`
	Count    int       `json:"count"`
	SharePct *Estimate `json:"share_pct"` // percent of the wrong trials
}

// errorAnatomies sets VariantSummary.Errors of every cell whose wrong
// trials all carry an error kind (runs recorded before the error anatomy,
// and document items, have none).
func (sm *summarizer) errorAnatomies() {
	type wrong struct {
		tmpl int
		kind string
	}
	byCell := map[*cell][]wrong{}
	unclassified := map[*cell]bool{}
	for i := range sm.trials {
		t := &sm.trials[i]
		if t.Skipped() || t.Correct {
			continue
		}
		c := sm.cells[sm.modelIdx[modelKey(t)]][sm.vIdx[t.Variant]]
		if t.ErrorKind == "" {
			unclassified[c] = true
			continue
		}
		byCell[c] = append(byCell[c], wrong{sm.tIdx[t.TemplateID], t.ErrorKind})
	}
	for _, row := range sm.cells {
		for _, c := range row {
			ws := byCell[c]
			if c == nil || unclassified[c] || len(ws) == 0 {
				continue
			}
			ea := &ErrorAnatomy{Rules: anatomy.Version, Wrong: len(ws)}
			for _, k := range anatomy.Kinds {
				r := stats.NewRatio(sm.G)
				n := 0
				for _, w := range ws {
					x := 0.0
					if w.kind == k {
						x, n = 1, n+1
					}
					r.Add(w.tmpl, x)
				}
				wl := wilsonPct(float64(n), float64(len(ws)), sm.p.Confidence)
				e := sm.es.add(100*float64(n)/float64(len(ws)), sm.influence(r, 100), scaled(r, 100), 0, 100, wl)
				e.Wilson = wl
				ea.Kinds = append(ea.Kinds, ErrorKind{Kind: k, Count: n, SharePct: e})
			}
			c.vs.Errors = ea
		}
	}
}
