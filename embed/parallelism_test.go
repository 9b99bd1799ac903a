package embed

import (
	"io"
	"math"
	"os"
	"strings"
	"testing"
)

// TestSequentialSameBits checks that WithSequential changes only the
// scheduling: the vectors of texts of several lengths are bit-identical to
// the default (worker-pool) mode, and opening it writes nothing to stdout.
func TestSequentialSameBits(t *testing.T) {
	def := openDefault(t)
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout := os.Stdout
	os.Stdout = w
	seq, err := Open(def.dir, WithSequential())
	os.Stdout = stdout
	w.Close()
	printed, _ := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	defer seq.Close()
	if len(printed) > 0 {
		t.Errorf("opening a sequential embedder printed %q on stdout", printed)
	}
	texts := []string{"Mia has 3 apples.", fiftyWords, strings.Repeat("A train leaves the station at noon. ", 12)}
	a, err := def.Embed(texts)
	if err != nil {
		t.Fatal(err)
	}
	b, err := seq.Embed(texts)
	if err != nil {
		t.Fatal(err)
	}
	for i := range texts {
		for j := range a[i] {
			if math.Float32bits(a[i][j]) != math.Float32bits(b[i][j]) {
				t.Fatalf("text %d dim %d: default %v, sequential %v", i, j, a[i][j], b[i][j])
			}
		}
	}
}
