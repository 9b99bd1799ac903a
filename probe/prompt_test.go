package probe

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/fragility/fragility/templates/fixtures"

	"github.com/fragility/fragility/llm"
	"github.com/fragility/fragility/models"
	"github.com/fragility/fragility/probe/answer"
	"github.com/fragility/fragility/probe/internal/probetest"
	"github.com/fragility/fragility/probe/results"
	"github.com/fragility/fragility/probe/rundir"
	"github.com/fragility/fragility/templates"
)

// TestGSMSymbolicPrompt: the preset is the protocol's shape: the instruction
// line, 8 shots as "Q: ...\nA: Let's think step by step. ... The final answer
// is N.", then the problem and "A: Let's think step by step.".
func TestGSMSymbolicPrompt(t *testing.T) {
	p, err := GSMSymbolicPrompt("How many?", 8)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(p, GSMSymbolicInstruction+"\n\nQ: ") || !strings.HasSuffix(p, "\n\nQ: How many?\nA: Let's think step by step.") {
		t.Errorf("prompt shape: %q", p)
	}
	if n := strings.Count(p, "\nA: Let's think step by step. "); n != 8 {
		t.Errorf("%d worked shots, want 8", n)
	}
	if strings.Count(p, "Q: ") != 9 {
		t.Errorf("%d questions, want 9", strings.Count(p, "Q: "))
	}
	p0, _ := GSMSymbolicPrompt("How many?", 0)
	if p0 != GSMSymbolicInstruction+"\n\nQ: How many?\nA: Let's think step by step." {
		t.Errorf("0-shot: %q", p0)
	}
	if _, err := GSMSymbolicPrompt("x", 9); err == nil {
		t.Error("9 shots accepted")
	}
	// Each shot's final answer is right (checked by hand) and is what our
	// extractor reads from it.
	want := []string{"72", "8", "22", "360", "56", "7", "38", "19"}
	final := regexp.MustCompile(`The final answer is (\S+)\.$`)
	for i, ex := range GSMSymbolicExemplars {
		m := final.FindStringSubmatch(ex.Solution)
		if m == nil || m[1] != want[i] || !strings.HasPrefix(ex.Solution, "Let's think step by step. ") {
			t.Errorf("shot %d: %q", i+1, ex.Solution)
		}
		if got := answer.Extract(ex.Solution); got.Value != want[i] {
			t.Errorf("shot %d: extractor read %q", i+1, got.Value)
		}
	}
	for _, s := range []string{"", "fragility", "gsm-symbolic"} {
		if _, err := ParsePrompt(s); err != nil {
			t.Errorf("%q: %v", s, err)
		}
	}
	if _, err := ParsePrompt("gsm8k"); err == nil || !strings.Contains(err.Error(), `unknown prompt "gsm8k"`) {
		t.Errorf("unknown preset: %v", err)
	}
	if MaxShotsFor(PromptGSMSymbolic) != 8 || DefaultShotsFor(PromptGSMSymbolic) != 8 || DefaultShotsFor(PromptFragility) != 0 {
		t.Error("shot limits")
	}
	info := PromptRecord(rundir.Config{Prompt: PromptGSMSymbolic, Shots: 8})
	if info.Preset != PromptGSMSymbolic || info.Instruction != GSMSymbolicInstruction || len(info.Exemplars) != 8 || info.Stop[0] != "\nQ:" {
		t.Errorf("manifest record: %+v", info)
	}
}

// TestGSMSymbolicShotsAreOurs: no shot question is a GSM8K test question
// (the authors used GSM8K training problems; ours are written for this
// project).
func TestGSMSymbolicShotsAreOurs(t *testing.T) {
	path := filepath.Join("..", "..", "shared", "data", "gsm8k_test.jsonl")
	if d := os.Getenv("FRAGILITY_SHARED"); d != "" {
		path = filepath.Join(d, "data", "gsm8k_test.jsonl")
	}
	f, err := os.Open(path)
	if err != nil {
		t.Skipf("%s not found (GSM8K is not part of this repository)", path)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var row struct{ Question string }
		json.Unmarshal(sc.Bytes(), &row)
		for _, ex := range GSMSymbolicExemplars {
			if strings.EqualFold(strings.TrimSpace(row.Question), ex.Question) {
				t.Errorf("shot %q is a GSM8K test question", ex.Question)
			}
		}
	}
}

// TestRunGSMSymbolicPreset runs the fast Gemma model with the gsm-symbolic
// preset on our P1 fixture: the prompt is the raw Q:/A: text, the manifest
// records the preset, the level reaches results.csv, and generation stops
// before the model writes the next "Q:".
func TestRunGSMSymbolicPreset(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a real model")
	}
	dir := t.TempDir()
	cfg := rundir.Config{
		Models:    []string{probetest.GemmaModel(t)},
		Templates: filepath.Join(gsmsymP1(t), "p1"),
		Variants:  []templates.Variant{templates.VariantBase},
		Instances: 1,
		Seed:      1,
		MaxTokens: 200,
		Shots:     8,
		Prompt:    PromptGSMSymbolic,
		Params:    llm.Params{Threads: 2, NCtx: 2048, NSeq: 1},
		OutDir:    dir,
	}
	if _, err := Run(context.Background(), cfg, Options{}); err != nil {
		t.Fatal(err)
	}
	man, err := rundir.ReadManifest(dir)
	if err != nil {
		t.Fatal(err)
	}
	if man.Prompt.Preset != PromptGSMSymbolic || man.Prompt.Version != GSMSymbolicPromptVersion || man.Prompt.Rendering["0"] != "raw" || man.Config.Prompt != PromptGSMSymbolic {
		t.Errorf("manifest prompt: %+v, config prompt %q", man.Prompt, man.Config.Prompt)
	}
	f, _ := os.Open(filepath.Join(dir, rundir.FileResults))
	trials, err := results.ReadCSV(f)
	f.Close()
	if err != nil || len(trials) != 1 {
		t.Fatalf("%d trials: %v", len(trials), err)
	}
	tr := trials[0]
	// At level p1 the base instance is a valid draw (the original's values
	// are a record only): 13 rolls, 2 given away, 6 more, so 17.
	if tr.Level != "p1" || tr.Expected != "17" {
		t.Errorf("level %q expected %q", tr.Level, tr.Expected)
	}
	traces, err := rundir.ReadTraces(dir)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := GSMSymbolicPrompt(tr.Question, 8)
	if traces[0].Prompt != want {
		t.Errorf("rendered prompt is not the raw preset text:\n%q", traces[0].Prompt)
	}
	if strings.Contains(tr.Response, "\nQ:") {
		t.Errorf("generation did not stop at the next question: %q", tr.Response)
	}
	t.Logf("stop %s, %d tokens, extracted %q by %s (expected %s): %q", tr.StopReason, tr.Tokens, tr.Extracted, tr.Rule, tr.Expected, tr.Response)
}

// TestKeptPrefix checks the prefix a run keeps (DecodeKeepPrefix) on the
// chat model and on Gemma (no chat template: the plain fallback), for both
// conditions and the gsm-symbolic preset: every prompt of the built-in
// library starts with it, and it reaches past the last worked example, so
// that a batch decodes little more than its problems.
func TestKeptPrefix(t *testing.T) {
	if testing.Short() {
		t.Skip("loads real models")
	}
	ts, err := templates.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{probetest.ChatName, probetest.GemmaName} {
		p, err := models.PathOf(name)
		if err != nil {
			t.Fatal(err)
		}
		m, err := llm.Load(p, llm.Params{Threads: 1, NCtx: 512})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			cfg  rundir.Config
			cond string
			last string // text the kept prefix must hold: the end of its last worked example
		}{
			{rundir.Config{Shots: 3, CalcCalls: 10}, results.ConditionNone, "Final answer: 66"},
			{rundir.Config{Shots: 2, CalcCalls: 10}, results.ConditionCalculator, "Final answer: 28"},
			{rundir.Config{Prompt: PromptGSMSymbolic, Shots: 8}, results.ConditionNone, "The final answer is 19."},
		} {
			keep, err := KeptPrefix(m, c.cfg, c.cond)
			if err != nil {
				t.Fatal(err)
			}
			text, err := m.Detokenize(keep, false, true)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(text, c.last) {
				t.Errorf("%s %s/%s: the kept prefix (%d tokens) ends before %q:\n%s", name, c.cfg.Prompt, c.cond, len(keep), c.last, text)
			}
			for _, tp := range ts {
				// Under the fragility preset the placebo's wording keeps the prefix too.
				for _, placebo := range []bool{false, c.cfg.Prompt == ""} {
					r, err := RenderCondition(m, c.cfg, tp.BaseQuestion(), c.cond, placebo)
					if err != nil {
						t.Fatal(err)
					}
					toks, err := m.Tokenize(r.Text, true, true)
					if err != nil {
						t.Fatal(err)
					}
					if len(toks) <= len(keep) || !slices.Equal(toks[:len(keep)], keep) {
						t.Errorf("%s %s/%s: the prompt of %s (placebo %v) does not start with the kept prefix", name, c.cfg.Prompt, c.cond, tp.ID, placebo)
					}
				}
			}
		}
		m.Close()
	}
}

// TestDecodeProcedure: Validate records the kept-prefix procedure when none
// is given, keeps a named one, and refuses an unknown one as wrong usage.
func TestDecodeProcedure(t *testing.T) {
	for _, c := range []struct{ in, want string }{{"", DecodeKeepPrefix}, {DecodePerBatch, DecodePerBatch}, {DecodeKeepPrefix, DecodeKeepPrefix}, {DecodeKeepPrefixV1, DecodeKeepPrefixV1}, {"whole/9", ""}} {
		cfg := rundir.Config{Instances: 1, MaxTokens: 8, Decode: c.in}
		err := ValidateOptions(&cfg)
		var oe OptionError
		switch {
		case c.want == "" && !errors.As(err, &oe):
			t.Errorf("decode %q: error %v, want an OptionError", c.in, err)
		case c.want != "" && (err != nil || cfg.Decode != c.want):
			t.Errorf("decode %q: got %q, %v; want %q", c.in, cfg.Decode, err, c.want)
		}
	}
}

// gsmsymP1 writes the GSM-Symbolic-format test fixtures of package templates
// (fixtures.GSMSym) into a temporary folder and returns it.
func gsmsymP1(t *testing.T) string {
	dir, err := fixtures.WriteGSMSym(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return dir
}
