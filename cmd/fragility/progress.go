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
// estimates jump); no estimate before one has. label names the model of a
// path (the store's name when it came from one).
func newProgress(label func(path string) string, w *os.File) func(probe.Event) {
	if term.IsTerminal(int(w.Fd())) {
		return progressBar(label, w)
	}
	var last time.Time
	var pe progressEstimate
	return func(ev probe.Event) {
		pe.update(ev)
		if ev.Done < ev.Total && time.Since(last) < progressLineEvery {
			return
		}
		last = time.Now()
		fmt.Fprintf(w, "fragility: %d/%d items, %s, %.1f tokens/s, %s\n", ev.Done, ev.Total, label(ev.Model), pe.tps(ev), pe.left(ev))
	}
}

// progressLineEvery is the least time between two plain progress lines.
const progressLineEvery = 30 * time.Second

// progressBar is newProgress on a terminal.
func progressBar(label func(path string) string, w *os.File) func(probe.Event) {
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
		bar.Describe(fmt.Sprintf("%s  %.1f tok/s  %s", label(ev.Model), pe.tps(ev), pe.left(ev)))
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

// left is the estimated time left, "time left: estimating" until an item
// of this process has finished: the first events come right after the
// prompts are decoded, whose time counts in Event.Seconds while few tokens
// have flowed, and an estimate from the budget then said 26 hours for the
// 15-minute demo (the prompts of its first batch take about 20 s).
func (pe *progressEstimate) left(ev probe.Event) string {
	tps := pe.tps(ev)
	done := ev.Done - pe.firstDone
	if tps <= 0 || done <= 0 {
		return "time left: estimating"
	}
	perItem := float64(ev.DoneTokens) / float64(done)
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
