package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fragility/fragility/probe"
)

// TestProgressEstimate: the time left comes from tokens, not items, and
// only once an item of this process has finished (before that the prompts'
// time weighs on the rate: 8 tokens in 20 s said hours for minutes); a
// resumed run counts only its own items; off a terminal the progress is
// plain lines, the last one at the end.
func TestProgressEstimate(t *testing.T) {
	var pe progressEstimate
	ev := probe.Event{Done: 0, Total: 16, Tokens: 100, Seconds: 10}
	pe.update(ev)
	if got := pe.left(ev); got != "time left: estimating" {
		t.Errorf("before any item: %q", got)
	}
	ev = probe.Event{Done: 8, Total: 16, Tokens: 800, DoneTokens: 800, Seconds: 80}
	if got := pe.left(ev); got != "about 1m20s left" {
		t.Errorf("8 items of 100 tokens done: %q", got)
	}
	// 1 item of 100 tokens done and a batch of 8 under way with 700 tokens
	// so far: 15 items × 100 − 700 = 800 tokens at 10 tokens/s. Counting
	// the batch's tokens against the one item done said 800 per item: 3h.
	ev = probe.Event{Done: 1, Total: 16, Tokens: 800, DoneTokens: 100, Seconds: 80}
	if got := pe.left(ev); got != "about 1m20s left" {
		t.Errorf("1 item done, a batch under way: %q", got)
	}
	var resumed progressEstimate
	resumed.update(probe.Event{Done: 10, Total: 16})
	if got := resumed.left(probe.Event{Done: 13, Total: 16, Tokens: 300, DoneTokens: 300, Seconds: 30}); got != "about 30s left" {
		t.Errorf("resumed run: %q", got)
	}
	if got := resumed.left(probe.Event{Done: 10, Total: 16}); got != "time left: estimating" {
		t.Errorf("no tokens yet: %q", got)
	}
	// The demo's first line: the first batch's prompts (about 20 s), then
	// a few tokens, no item done.
	var fresh progressEstimate
	fresh.update(probe.Event{Total: 176})
	if got := fresh.left(probe.Event{Total: 176, Tokens: 13, Seconds: 19}); got != "time left: estimating" {
		t.Errorf("first event after the prompts: %q", got)
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	p := newProgress(filepath.Base, w)
	p(probe.Event{Model: "/m/a.gguf", Done: 0, Total: 4, Tokens: 10, Seconds: 1})
	p(probe.Event{Model: "/m/a.gguf", Done: 2, Total: 4, Tokens: 20, Seconds: 2})
	p(probe.Event{Model: "/m/a.gguf", Done: 4, Total: 4, Tokens: 40, Seconds: 4})
	w.Close()
	out, _ := io.ReadAll(r)
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 2 || strings.Contains(string(out), "\r") || !strings.HasPrefix(lines[1], "fragility: 4/4 items, a.gguf, 10.0 tokens/s, about 0s left") {
		t.Errorf("plain progress:\n%s", out)
	}
}
