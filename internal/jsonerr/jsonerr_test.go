package jsonerr

import (
	"encoding/json"
	"strings"
	"testing"
)

type entry struct {
	Name string `json:"name"`
}

type doc struct {
	Version string            `json:"version"`
	Count   int               `json:"count"`
	Rate    float64           `json:"rate"`
	On      bool              `json:"on"`
	Models  []entry           `json:"models"`
	Sub     *entry            `json:"sub"`
	Tags    map[string]string `json:"tags"`
}

// TestDescribe: every type mismatch names the field and JSON kinds, the
// line it is on, and no Go type; a syntax error keeps its line.
func TestDescribe(t *testing.T) {
	cases := []struct {
		in, want string
		line     int
	}{
		{"{\n\"version\": 5}", `field "version" has the wrong type (a number, want a string)`, 2},
		{`{"count": "x"}`, `field "count" has the wrong type (a string, want a whole number)`, 1},
		{`{"count": 1.5}`, `field "count" has the wrong type (a number 1.5, want a whole number)`, 1},
		{`{"rate": true}`, `field "rate" has the wrong type (a boolean, want a number)`, 1},
		{`{"on": []}`, `field "on" has the wrong type (a list, want a boolean)`, 1},
		{`{"models": 3}`, `field "models" has the wrong type (a number, want a list)`, 1},
		{`{"models": [{"name": 1}]}`, `field "models.name" has the wrong type (a number, want a string)`, 1},
		{`{"sub": "x"}`, `field "sub" has the wrong type (a string, want an object)`, 1},
		{`{"tags": [1]}`, `field "tags" has the wrong type (a list, want an object)`, 1},
		{`[1, 2]`, `the JSON is a list, want an object`, 1},
		{"{\n\n\"version\": \"1\",,}", `JSON syntax error: invalid character ','`, 3},
	}
	for _, c := range cases {
		var d doc
		err := json.Unmarshal([]byte(c.in), &d)
		if err == nil {
			t.Fatalf("%s: decoded", c.in)
		}
		msg, line := Describe([]byte(c.in), err)
		if !strings.HasPrefix(msg, c.want) || line != c.line {
			t.Errorf("%s: %q line %d, want %q line %d", c.in, msg, line, c.want, c.line)
		}
		if strings.Contains(msg, "jsonerr.") || strings.Contains(msg, "[]") || strings.Contains(msg, "Go ") {
			t.Errorf("%s: a Go type in %q", c.in, msg)
		}
	}
	if msg := Text(nil, json.Unmarshal([]byte(`{}`), new(chan int))); msg == "" || strings.HasPrefix(msg, "json: ") {
		t.Errorf("other error: %q", msg)
	}
}

// TestKindOf: each JSON value decoded into any is named by its JSON kind.
func TestKindOf(t *testing.T) {
	for in, want := range map[string]string{`null`: "null", `true`: "a boolean", `42`: "a number", `"x"`: "a string", `[1]`: "a list", `{}`: "an object"} {
		var v any
		if err := json.Unmarshal([]byte(in), &v); err != nil {
			t.Fatal(err)
		}
		if got := KindOf(v); got != want {
			t.Errorf("%s: %q, want %q", in, got, want)
		}
	}
}
