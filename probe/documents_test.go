package probe

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fragility/fragility/llm"
	"github.com/fragility/fragility/probe/docqa"
	"github.com/fragility/fragility/probe/internal/probetest"
	"github.com/fragility/fragility/probe/results"
	"github.com/fragility/fragility/probe/rundir"
	"github.com/fragility/fragility/templates"
)

// TestRunDocQA runs six items of examples/docqa.jsonl on Gemma 3 270M and
// checks that every file is written as for templates, that each prompt holds
// the passages its row names in that order, and the documents section.
func TestRunDocQA(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a real model")
	}
	f, err := os.Open(filepath.Join("..", "examples", "docqa.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() && len(lines) < 6 {
		lines = append(lines, sc.Text())
	}
	f.Close()
	items := filepath.Join(t.TempDir(), "items.jsonl")
	if err := os.WriteFile(items, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	vs, err := docqa.ParseVariants("base,paraphrase,distractor,shuffle")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cfg := rundir.Config{Models: []string{probetest.GemmaModel(t)}, Items: items, Prompt: PromptDocQA, Variants: vs, Instances: 1, Seed: 2,
		MaxTokens: 16, Params: llm.Params{Threads: 1, NCtx: 1024, NSeq: 4}, OutDir: dir}
	sum, err := Run(context.Background(), cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{rundir.FileManifest, rundir.FileResults, rundir.FileTraces, rundir.FileSummary, rundir.FileSet} {
		if st, err := os.Stat(filepath.Join(dir, name)); err != nil || st.Size() == 0 {
			t.Errorf("%s missing or empty: %v", name, err)
		}
	}
	const want = 6 * 5 // base, paraphrase-1, paraphrase-2, distractor-1, shuffle
	rf, _ := os.Open(filepath.Join(dir, rundir.FileResults))
	trials, err := results.ReadCSV(rf)
	rf.Close()
	if err != nil || len(trials) != want || sum.Trials != want {
		t.Fatalf("%d rows (%v), summary %d, want %d", len(trials), err, sum.Trials, want)
	}
	sf, _ := os.Open(filepath.Join(dir, rundir.FileSet))
	set, err := templates.ReadSet(sf)
	sf.Close()
	if err != nil {
		t.Fatal(err)
	}
	text := map[string]string{} // "item/id" -> passage text
	for _, in := range set.Instances {
		for _, p := range in.Passages {
			text[p.Item+"/"+p.ID] = p.Text
		}
	}
	traces, err := rundir.ReadTraces(dir)
	if err != nil {
		t.Fatal(err)
	}
	for i, tr := range trials {
		if tr.ScoreRule == "" || tr.Passages == "" || tr.F1 < 0 || tr.F1 > 1 || (tr.Correct && tr.F1 != 1) || (tr.NotStated && tr.Correct) {
			t.Errorf("%s: score_rule %q passages %q f1 %v correct %v not_stated %v", tr.ItemID, tr.ScoreRule, tr.Passages, tr.F1, tr.Correct, tr.NotStated)
		}
		prompt := traces[i].Prompt
		if traces[i].ItemID != tr.ItemID || !strings.Contains(prompt, docqa.Instruction) || !strings.Contains(prompt, "Question: "+tr.Question) {
			t.Errorf("%s: prompt lacks the instruction or question:\n%s", tr.ItemID, prompt)
		}
		at := 0
		for j, ref := range strings.Fields(tr.Passages) {
			label := "[" + string(rune('1'+j)) + "] " + text[strings.TrimPrefix(ref, "+")]
			k := strings.Index(prompt[at:], label)
			if k < 0 {
				t.Errorf("%s: passage %s is not number %d of the prompt, after the ones before it", tr.ItemID, ref, j+1)
				break
			}
			at += k + len(label)
		}
		if strings.HasPrefix(tr.Variant, "distractor-") != strings.Contains(tr.Passages, "+") {
			t.Errorf("%s: passages %q", tr.ItemID, tr.Passages)
		}
	}
	if sum.Documents == nil || sum.Documents.Items != 6 {
		t.Fatalf("documents section: %+v", sum.Documents)
	}
	pairs := map[string]int{}
	for _, c := range sum.Documents.Models[0].Changes {
		pairs[c.Group] = c.Pairs
	}
	if pairs["reworded"] != 12 || pairs["distractor"] != 6 || pairs["shuffled"] != 6 {
		t.Errorf("pairs per group: %v", pairs)
	}
	man, err := rundir.ReadManifest(dir)
	if err != nil || man.Prompt.Preset != PromptDocQA || man.Prompt.Version != docqa.PromptVersion || man.Config.Items != items {
		t.Errorf("manifest prompt %+v, items %q (%v)", man.Prompt, man.Config.Items, err)
	}
}
