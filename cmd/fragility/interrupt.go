package main

import (
	"context"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/fragility/fragility/probe"
	"github.com/fragility/fragility/probe/rundir"
)

// runClock keeps the last progress event of a run so that, the moment the
// run is interrupted, it can say what happens now and about how long it
// takes: generation stops after the llama_decode call under way (one token
// of every sequence of the batch, or a piece of a prompt being read), the
// batch's finished items are written, and its unfinished items run again
// on --resume.
type runClock struct {
	mu    sync.Mutex
	ev    probe.Event
	seen  bool
	batch int // sequences decoded together (--batch; the manifest's on a resume)
}

// newRunClock is the clock of the run cfg (for a resume, of the run in
// the directory resume, whose manifest records its batch).
func newRunClock(cfg rundir.Config, resume string) *runClock {
	rc := &runClock{batch: cfg.Params.NSeq}
	if resume != "" {
		if man, err := rundir.ReadManifest(resume); err == nil {
			rc.batch = man.Config.Params.NSeq
		}
	}
	return rc
}

// wrap returns a progress function that records each event and passes it
// on to next (which may be nil: a --quiet run).
func (rc *runClock) wrap(next func(probe.Event)) func(probe.Event) {
	return func(ev probe.Event) {
		rc.mu.Lock()
		rc.ev, rc.seen = ev, true
		rc.mu.Unlock()
		if next != nil {
			next(ev)
		}
	}
}

// onInterrupt waits for ctx (signal.NotifyContext's) to end; when a
// signal ended it (not stop, called when the run returns), it restores the
// default handling (stop), so that a second Ctrl-C quits at once, and
// writes notice to w.
func (rc *runClock) onInterrupt(ctx context.Context, stop func(), w io.Writer, dir string) {
	<-ctx.Done()
	stop()
	if context.Cause(ctx) != context.Canceled {
		fmt.Fprintln(w, "\n"+rc.notice(dir))
	}
}

// notice is the line printed when the run is interrupted.
func (rc *runClock) notice(dir string) string {
	rc.mu.Lock()
	ev, seen, batch := rc.ev, rc.seen, max(rc.batch, 1)
	rc.mu.Unlock()
	when := "no token generated yet: a model still loading, or a prompt being read, finishes its step first"
	if seen && ev.Seconds > 0 && ev.Tokens > 0 {
		tps := float64(ev.Tokens) / ev.Seconds
		seqs := max(1, min(batch, ev.Total-ev.Done))
		step := time.Duration(float64(seqs) / tps * float64(time.Second))
		when = fmt.Sprintf("about %s: one step of %d sequence(s) at %.1f tokens/s", roundDuration(step), seqs, tps)
	}
	return fmt.Sprintf("fragility: interrupt: stopping after the decode step under way (%s); the batch's finished items are then written and its unfinished ones run again with fragility run --resume %s. Ctrl-C again quits at once (losing the batch's finished items).", when, dir)
}

// roundDuration rounds d for a reader: to 10 ms below a second, to 100 ms
// below a minute, to the second above; never "0s".
func roundDuration(d time.Duration) time.Duration {
	switch {
	case d < 10*time.Millisecond:
		return 10 * time.Millisecond
	case d < time.Second:
		return d.Round(10 * time.Millisecond)
	case d < time.Minute:
		return d.Round(100 * time.Millisecond)
	}
	return d.Round(time.Second)
}
