package results

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// TestReadCSVTornRow: a row cut short, one with a field too many and one
// whose quoted field does not close are each a *TornRowError naming the
// row's line and what to do, not encoding/csv's "wrong number of fields".
func TestReadCSVTornRow(t *testing.T) {
	var b bytes.Buffer
	rows := []Trial{{ItemID: "m0/a/base/0", Response: "two\nlines"}, {ItemID: "m0/a/base/1"}}
	if err := WriteCSV(&b, rows); err != nil {
		t.Fatal(err)
	}
	whole := b.String()
	lines := strings.SplitAfter(whole, "\n")
	// lines: header, row 1 (two lines: a newline in the response), row 2.
	last := lines[len(lines)-2]
	for _, c := range []struct {
		name, data, want string
		line             int
	}{
		{"cut short", strings.TrimSuffix(whole, last) + last[:len(last)/3] + "\n", "fields where the header has", 4},
		{"a field too many", strings.TrimSuffix(whole, "\n") + ",extra\n", "fields where the header has", 4},
		{"quote open", strings.TrimSuffix(whole, last) + `m0/a/base/1,"no end` + "\n", "a quoted field that does not close", 4},
	} {
		_, err := ReadCSV(strings.NewReader(c.data))
		var torn *TornRowError
		if !errors.As(err, &torn) {
			t.Errorf("%s: %v, want a TornRowError", c.name, err)
			continue
		}
		msg := err.Error()
		if torn.Line != c.line || !strings.Contains(msg, c.want) || strings.Contains(msg, "wrong number of fields") ||
			!strings.Contains(msg, "restore the file from a copy") || !strings.Contains(msg, "`fragility run --resume RUN_DIR`") {
			t.Errorf("%s: line %d (want %d): %s", c.name, torn.Line, c.line, msg)
		}
	}
}
