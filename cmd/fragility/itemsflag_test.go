package main

import "testing"

// TestItemsMissingNamesFlag: an --items file that is not there is refused
// naming the flag (exit 1, one line), not as open(2)'s "open FILE: ...".
func TestItemsMissingNamesFlag(t *testing.T) {
	r := fragility(t, nil, "plan", "--items", "/no/such/items.jsonl")
	oneErrorLine(t, "plan --items missing", r, "--items /no/such/items.jsonl: no such file or directory")
}
