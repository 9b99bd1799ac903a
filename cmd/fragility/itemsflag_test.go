package main

import "testing"

// TestItemsMissingNamesFlag: an --items file that is not there is refused
// naming the flag (exit 1, one line), not as open(2)'s "open FILE: ...".
func TestItemsMissingNamesFlag(t *testing.T) {
	r := fragility(t, nil, "plan", "--items", "/no/such/items.jsonl")
	oneErrorLine(t, "plan --items missing", r, "--items /no/such/items.jsonl: no such file or directory")
}

// TestMissingFilesNameFlag: a --protocol, --overrides or template source
// that is not there is refused in one line naming the flag or source and
// the file once, without open(2)'s or stat(2)'s "open FILE: ..." (exit 1,
// which oneErrorLine checks).
func TestMissingFilesNameFlag(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"plan", "--protocol", dir + "/no.json"}, "--protocol " + dir + "/no.json: no such file or directory"},
		{[]string{"templates", "check", dir + "/nodir"}, "templates " + dir + "/nodir: no such file or directory"},
		{[]string{"run", "--model", gemmaName, "--overrides", dir + "/no.jsonl", "--out", dir + "/out"}, "overrides " + dir + "/no.jsonl: no such file or directory"},
	} {
		oneErrorLine(t, c.args[0]+" "+c.args[1], fragility(t, nil, c.args...), c.want)
	}
}
