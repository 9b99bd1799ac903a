package main

import (
	"io"
	"os"
	"strings"
	"testing"
)

// TestCompareProgressPlain (round-4 retry): compare's progress on a pipe
// or a log is plain lines, the first and the last at least, never a
// carriage return.
func TestCompareProgressPlain(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	p := compareProgress(w)
	for i := 1; i <= 15; i++ {
		p(i, 15)
	}
	w.Close()
	b, _ := io.ReadAll(r)
	got := string(b)
	if strings.Contains(got, "\r") || !strings.HasPrefix(got, "compare: 1/15 items scored against the reference\n") || !strings.HasSuffix(got, "compare: 15/15 items scored against the reference\n") {
		t.Errorf("%q", got)
	}
}
