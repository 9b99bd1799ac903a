package main

import (
	"fmt"
	"os"
	"time"

	"github.com/fragility/fragility/probe"
	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// newProgress returns run's progress display on w: a progress bar on a
// terminal, plain lines otherwise (a Slurm log, a pipe: at most one every
// progressLineEvery and at the end). Both show the model, tokens per
// second and the time left, estimated from tokens, not items (items of a
// batch finish together, so an item rate says little until the end):
// remaining ≈ (items left × tokens per item − tokens of items under way) /
// tokens per second, with tokens per item the mean of the items finished
// in this process (Event.DoneTokens over their number: the tokens of a
// batch under way counted against the few items done made the early
// estimates jump), or maxTokens (the budget, an upper bound) before any
// has. label names the model of a path (the store's name when it came
// from one).
func newProgress(maxTokens int, label func(path string) string, w *os.File) func(probe.Event) {
	if term.IsTerminal(int(w.Fd())) {
		return progressBar(maxTokens, label, w)
	}
	var last time.Time
	var pe progressEstimate
	return func(ev probe.Event) {
		pe.update(ev)
		if ev.Done < ev.Total && time.Since(last) < progressLineEvery {
			return
		}
		last = time.Now()
		fmt.Fprintf(w, "fragility: %d/%d items, %s, %.1f tokens/s, %s\n", ev.Done, ev.Total, label(ev.Model), pe.tps(ev), pe.left(ev, maxTokens))
	}
}

// progressLineEvery is the least time between two plain progress lines.
const progressLineEvery = 30 * time.Second

// progressBar is newProgress on a terminal.
func progressBar(maxTokens int, label func(path string) string, w *os.File) func(probe.Event) {
	var bar *progressbar.ProgressBar
	var pe progressEstimate
	return func(ev probe.Event) {
		pe.update(ev)
		if bar == nil {
			bar = progressbar.NewOptions(ev.Total,
				progressbar.OptionSetWriter(w),
				progressbar.OptionSetDescription("items"),
				progressbar.OptionShowCount(),
				progressbar.OptionSetWidth(30),
				progressbar.OptionThrottle(0),
				progressbar.OptionOnCompletion(func() { fmt.Fprintln(w) }),
			)
		}
		bar.Describe(fmt.Sprintf("%s  %.1f tok/s  %s", label(ev.Model), pe.tps(ev), pe.left(ev, maxTokens)))
		bar.Set(ev.Done)
	}
}

// progressEstimate remembers where this process started (a resumed run
// begins with items done) and when the first item of it finished.
type progressEstimate struct {
	started   bool
	firstDone int // items done when this process began
}

func (pe *progressEstimate) update(ev probe.Event) {
	if !pe.started {
		pe.started, pe.firstDone = true, ev.Done
	}
}

// tps is the generation speed of this process, model loading excluded
// (Event.Seconds is generation time).
func (pe *progressEstimate) tps(ev probe.Event) float64 {
	if ev.Seconds <= 0 {
		return 0
	}
	return float64(ev.Tokens) / ev.Seconds
}

// estimateAfter is the generation time (seconds) before which, while no
// item of this process has finished, no time left is estimated: the first
// events come right after the prompts are decoded, whose time counts in
// Event.Seconds while few tokens have flowed, and an estimate from them
// was hours for a run of minutes.
const estimateAfter = 10

// left is the estimated time left, "time left: estimating" before tokens
// flow and, until an item finishes, for the first estimateAfter seconds.
func (pe *progressEstimate) left(ev probe.Event, maxTokens int) string {
	tps := pe.tps(ev)
	done := ev.Done - pe.firstDone
	perItem := float64(maxTokens)
	if done > 0 && ev.DoneTokens > 0 {
		perItem = float64(ev.DoneTokens) / float64(done)
	}
	if tps <= 0 || perItem <= 0 || (done == 0 && ev.Seconds < estimateAfter) {
		return "time left: estimating"
	}
	inFlight := max(0, ev.Tokens-ev.DoneTokens)
	remaining := float64(ev.Total-ev.Done)*perItem - float64(inFlight)
	if ev.Done >= ev.Total || remaining < 0 {
		remaining = 0
	}
	return "about " + time.Duration(remaining/tps*float64(time.Second)).Round(time.Second).String() + " left"
}

// countProgress reports done of total items on w, written by format (two
// %d verbs: done, total): one line rewritten in place on a terminal;
// otherwise (a log file, a pipe) a plain line at the first call, then at
// most one every progressLineEvery, and at the end.
func countProgress(w *os.File, format string) func(done, total int) {
	if term.IsTerminal(int(w.Fd())) {
		return func(done, total int) {
			fmt.Fprintf(w, "\r"+format, done, total)
			if done == total {
				fmt.Fprintln(w)
			}
		}
	}
	var last time.Time
	return func(done, total int) {
		if done < total && time.Since(last) < progressLineEvery {
			return
		}
		last = time.Now()
		fmt.Fprintf(w, format+"\n", done, total)
	}
}
