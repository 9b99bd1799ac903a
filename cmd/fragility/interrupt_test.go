package main

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/fragility/fragility/probe"
)

// TestInterruptNotice: the first interrupt prints at once that the run
// stops after the decode step under way, about how long that takes at the
// run's rate, and what becomes of the batch; the end of a run that was not
// interrupted prints nothing.
func TestInterruptNotice(t *testing.T) {
	rc := &runClock{batch: 4}
	var got []probe.Event
	progress := rc.wrap(func(ev probe.Event) { got = append(got, ev) })
	progress(probe.Event{Done: 10, Total: 100, Tokens: 400, Seconds: 10}) // 40 tokens/s
	if len(got) != 1 {
		t.Fatalf("the wrapped progress got %d events", len(got))
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(errors.New("interrupt signal received"))
	var w bytes.Buffer
	stopped := false
	rc.onInterrupt(ctx, func() { stopped = true }, &w, "runs/x")
	want := "fragility: interrupt: stopping after the decode step under way (about 100ms: one step of 4 sequence(s) at 40.0 tokens/s); " +
		"the batch's finished items are then written and its unfinished ones run again with fragility run --resume runs/x. Ctrl-C again quits at once"
	if !stopped || !strings.Contains(w.String(), want) {
		t.Errorf("stopped %v, notice:\n%s\nwant it to contain:\n%s", stopped, w.String(), want)
	}

	// Before any token: no rate to go by.
	if n := (&runClock{batch: 8}).notice("d"); !strings.Contains(n, "(no token generated yet:") {
		t.Errorf("before any token: %s", n)
	}
	// The last items: fewer sequences than the batch.
	rc.wrap(nil)(probe.Event{Done: 99, Total: 100, Tokens: 400, Seconds: 10})
	if n := rc.notice("d"); !strings.Contains(n, "about 30ms: one step of 1 sequence(s)") {
		t.Errorf("last item: %s", n)
	}

	// The run returned: stop ends the context with no signal.
	ctx, cancel2 := context.WithCancel(context.Background())
	cancel2()
	w.Reset()
	rc.onInterrupt(ctx, func() {}, &w, "runs/x")
	if w.Len() != 0 {
		t.Errorf("no interrupt, yet: %s", w.String())
	}
}
