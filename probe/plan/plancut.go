package plan

import (
	"math"
	"sort"

	"github.com/fragility/fragility/llm"
	"github.com/fragility/fragility/probe/results"
)

// CutWarnShare is the share of a pilot's answers, in percent, that the
// planned output budget would cut from which `fragility plan` warns (the
// narrative's threshold for a cut share that matters, report.CutShareNote).
const CutWarnShare = 10.0

// PilotCut is what a pilot run (plan --from) says of the answers the
// planned output budget would cut.
type PilotCut struct {
	Pilot       string `json:"pilot"`            // the pilot run directory
	PilotBudget int    `json:"pilot_max_tokens"` // the pilot's --max-tokens
	Budget      int    `json:"max_tokens"`       // the planned --max-tokens
	Scored      int    `json:"scored"`           // the pilot's trials that ran (not skipped)
	// Cut counts the pilot's answers that would reach Budget: those of
	// Budget tokens or more. Above the pilot's budget only the answers the
	// pilot cut can reach it, and whether they would is unknown (their full
	// length is): they are counted, so Cut is then an upper bound
	// (AtMost).
	Cut      int     `json:"cut"`
	AtMost   bool    `json:"at_most,omitempty"`
	SharePct float64 `json:"share_pct"` // 100 · Cut / Scored
	// Large is SharePct ≥ CutWarnShare: the budget would lower accuracy by
	// itself, as cut answers without a final-answer line are no answer.
	Large bool `json:"large"`
	// PilotCut counts the answers the pilot's own budget cut (stop reason
	// max_tokens): their full length is unknown.
	PilotCut int `json:"pilot_cut"`
	// SuggestMaxTokens is the smallest budget at which the pilot's answers
	// would be cut less often than CutWarnShare; 0 when the pilot does not
	// show one (its own budget cut that many: pilot again with more).
	SuggestMaxTokens int `json:"suggest_max_tokens,omitempty"`
}

// pilotCut counts, among the trials of the pilot run in dir (run at the
// output budget pilotBudget), the answers an output budget of budget
// tokens would cut (PilotCut). PlanRun calls it on the pilot it read.
func pilotCut(dir string, pilotBudget, budget int, trials []results.Trial) *PilotCut {
	pc := &PilotCut{Pilot: dir, PilotBudget: pilotBudget, Budget: budget}
	var lens []int // each answer's length; a cut one counts as unbounded
	for i := range trials {
		t := &trials[i]
		if t.Skipped() {
			continue
		}
		pc.Scored++
		n := t.Tokens
		if t.StopReason == llm.StopMaxTokens {
			n = math.MaxInt
			pc.PilotCut++
		}
		lens = append(lens, n)
		switch {
		case n == math.MaxInt && budget > pilotBudget:
			pc.Cut++
			pc.AtMost = true
		case n >= budget:
			pc.Cut++
		}
	}
	if pc.Scored == 0 {
		return pc
	}
	pc.SharePct = 100 * float64(pc.Cut) / float64(pc.Scored)
	pc.Large = pc.SharePct >= CutWarnShare
	// At most allowed answers may reach the suggested budget: it is one
	// more than the (allowed+1)-th longest answer, when that one finished.
	allowed := int(math.Ceil(CutWarnShare/100*float64(pc.Scored))) - 1
	sort.Sort(sort.Reverse(sort.IntSlice(lens)))
	if allowed >= 0 && allowed < len(lens) && lens[allowed] != math.MaxInt {
		pc.SuggestMaxTokens = lens[allowed] + 1
	}
	return pc
}
