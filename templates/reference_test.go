package templates

import (
	"fmt"
	"strings"
	"testing"
)

// TestDrawnReference: with ReferenceDrawn, symbolic and placebo are
// generated whenever a clause or wording variant is asked for (placebo
// asks the symbolic question word for word), and instance i of noop,
// noop-seeming and paraphrase keeps the values and the answer of symbolic
// instance i and names it as its reference; the noop question is the
// symbolic question with the clause inserted, nothing else changed. With
// the original reference nothing of that holds and the noop instance keeps
// the template's own values.
func TestDrawnReference(t *testing.T) {
	ts := mustBuiltin(t)[:12]
	vs := []Variant{VariantNoop, VariantNoopSeeming, VariantParaphrase, VariantNames}
	set, err := Generate(ts, Options{Variants: vs, Instances: 3, Seed: 7, Reference: ReferenceDrawn})
	if err != nil {
		t.Fatal(err)
	}
	if got := set.Options.Variants; len(got) != 7 || got[1] != VariantSymbolic || got[2] != VariantPlacebo {
		t.Fatalf("variants %v, want symbolic and placebo added after base", got)
	}
	sym := map[string]Instance{}
	for _, in := range set.Instances {
		if in.Variant == VariantSymbolic {
			sym[fmt.Sprint(in.TemplateID, "/", in.Index)] = in
		}
	}
	checked := 0
	for _, in := range set.Instances {
		s, ok := sym[fmt.Sprint(in.TemplateID, "/", in.Index)]
		switch in.Variant {
		case VariantPlacebo:
			if !ok || in.Reference != VariantSymbolic || in.Question != s.Question || in.Answer != s.Answer {
				t.Errorf("%s: reference %q, question %q, want the symbolic instance's %q word for word", in.ID, in.Reference, in.Question, s.Question)
			}
		case VariantNoop, VariantNoopSeeming, VariantParaphrase:
			if !ok {
				t.Fatalf("%s: no symbolic instance of its index", in.ID)
			}
			if in.Reference != VariantSymbolic || in.Answer != s.Answer || !equalMaps(in.Values, s.Values) {
				t.Errorf("%s: reference %q, answer %s (symbolic %s), values %v (symbolic %v)", in.ID, in.Reference, in.Answer, s.Answer, in.Values, s.Values)
			}
			if in.Variant != VariantParaphrase && strings.Replace(in.Question, in.NoopClause, "", 1) == in.Question {
				t.Errorf("%s: clause %q not in %q", in.ID, in.NoopClause, in.Question)
			}
			if in.Variant == VariantNoop && len(in.Question) <= len(s.Question) {
				t.Errorf("%s: %q is not the symbolic question %q with a clause", in.ID, in.Question, s.Question)
			}
			checked++
		case VariantNames, VariantBase, VariantSymbolic:
			if in.Reference != "" {
				t.Errorf("%s: reference %q, want base", in.ID, in.Reference)
			}
		}
	}
	if checked == 0 {
		t.Fatal("no instance checked")
	}
	orig, err := Generate(ts, Options{Variants: vs, Instances: 1, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range orig.Instances {
		if in.Reference != "" || in.Variant == VariantSymbolic {
			t.Errorf("original reference: %s has reference %q", in.ID, in.Reference)
		}
	}
	if _, err := Generate(ts, Options{Variants: vs, Instances: 1, Reference: "nearby"}); err == nil || !strings.Contains(err.Error(), `unknown reference "nearby"`) {
		t.Errorf("unknown reference: %v", err)
	}
}

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}
