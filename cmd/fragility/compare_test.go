package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/fragility/fragility/probe/compare"
	"github.com/fragility/fragility/probe/rundir"
	"github.com/fragility/fragility/probe/summary"
	"github.com/fragility/fragility/templates"
)

// compareDefinition is the run of the compare tests, given alike to
// compare and to run: the four templates of the run tests in base and noop
// (noop drawn on the symbolic instance under run's default --reference
// drawn), one instance, batches of 3, 4 tokens, one thread, no DDC.
func compareDefinition(t *testing.T) []string {
	return []string{"--templates", templateDir(t), "--variants", "base,noop", "--instances", "1", "--seed", "5",
		"--batch", "3", "--max-tokens", "4", "--n-ctx", "256", "--gpu-layers", "0", "--threads", "1", "--bootstrap", "200", "--no-ddc"}
}

var (
	tinyCmpOnce sync.Once
	tinyCmpDir  string
	tinyCmpRes  result
)

// tinyCompare runs `fragility compare` once on the two tiny models with
// compareDefinition, the second file named with --reference-model, and
// returns its directory and result.
func tinyCompare(t *testing.T) (string, result) {
	t.Helper()
	tinyCmpOnce.Do(func() {
		m := tinyModelFiles(t)
		d := filepath.Join(binDirOrTemp(t), "tiny-compare")
		args := append([]string{"compare", "--out", d, "--reference-model", m[1]}, compareDefinition(t)...)
		tinyCmpRes = fragility(t, nil, append(args, m...)...)
		tinyCmpDir = d
	})
	if tinyCmpRes.code != 0 {
		t.Fatalf("compare: exit %d\n%s", tinyCmpRes.code, tail(tinyCmpRes.stderr))
	}
	return tinyCmpDir, tinyCmpRes
}

// TestCompareRunAgree: compare and run given the same flags make the same
// run: compare pairs noop with the drawn symbolic instance as run does
// (reference drawn, symbolic and placebo added), and its results.csv
// (seconds aside), summary.json and narrative.md are run's byte for byte.
func TestCompareRunAgree(t *testing.T) {
	cmp, _ := tinyCompare(t)
	m := tinyModelFiles(t)
	run := filepath.Join(t.TempDir(), "run")
	args := append([]string{"run", "--quiet", "--no-compare", "--no-html", "--out", run, "--model", m[0], "--model", m[1]}, compareDefinition(t)...)
	if r := fragility(t, nil, args...); r.code != 0 {
		t.Fatalf("run: exit %d\n%s", r.code, tail(r.stderr))
	}
	man, err := rundir.ReadManifest(cmp)
	if err != nil {
		t.Fatal(err)
	}
	if man.Config.Reference != templates.ReferenceDrawn {
		t.Errorf("compare's manifest records reference %q, want %q as run's default", man.Config.Reference, templates.ReferenceDrawn)
	}
	if got, want := rowsWithoutSeconds(t, cmp), rowsWithoutSeconds(t, run); !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("compare's results.csv differs from run's with the same flags (seconds aside)")
	}
	for _, f := range []string{rundir.FileSummary, rundir.FileNarrative} {
		a, _ := os.ReadFile(filepath.Join(cmp, f))
		b, _ := os.ReadFile(filepath.Join(run, f))
		if len(a) == 0 || !bytes.Equal(a, b) {
			t.Errorf("compare's %s is not run's byte for byte (%d and %d bytes)", f, len(a), len(b))
		}
	}
	var sum summary.Summary
	readJSONFile(t, filepath.Join(cmp, rundir.FileSummary), &sum)
	if !slices.Contains(sum.Variants, "symbolic") || !slices.Contains(sum.Variants, "placebo") {
		t.Errorf("compare's run has variants %v: want symbolic and placebo added as run adds them", sum.Variants)
	}
	for _, ms := range sum.Models {
		if vs := ms.Variant("noop"); vs == nil || vs.Paired == nil || vs.Paired.Reference != "symbolic" {
			t.Errorf("%s: noop is not paired with the drawn symbolic instance", ms.Path)
		}
	}
}

// TestCompareReferenceFlags: --reference is the design in compare as in
// run; the model the others are compared with is --reference-model, and
// the old use, --reference FILE.gguf, is one line naming the new flag,
// exit 2, before anything runs.
func TestCompareReferenceFlags(t *testing.T) {
	dir, _ := tinyCompare(t)
	m := tinyModelFiles(t)
	var c compare.Comparison
	readJSONFile(t, filepath.Join(dir, rundir.FileCompareJSON), &c)
	if c.Reference != 1 || c.ReferenceRule != "given with --reference-model" {
		t.Errorf("compare.json: reference %d (%q), want 1 given with --reference-model", c.Reference, c.ReferenceRule)
	}
	out := filepath.Join(t.TempDir(), "old")
	// The run's flags too, so that a regression runs the tiny run, not the
	// default one.
	def := compareDefinition(t)
	for _, args := range [][]string{
		append([]string{"compare", "--reference", m[1], "--out", out, m[0], m[1]}, def...),
		append([]string{"compare", "--reference", "a-Q8_0.gguf", "--out", out, m[0], m[1]}, def...),
		{"compare", "--from", dir, "--reference", filepath.Base(m[1])},
	} {
		r := fragility(t, nil, args...)
		line, given := strings.TrimSuffix(r.stderr, "\n"), args[slices.Index(args, "--reference")+1]
		if r.code != exitUsage || strings.Contains(line, "\n") || !strings.Contains(line, "--reference-model "+given) {
			t.Errorf("%v: exit %d, stderr %q; want exit %d and one line naming --reference-model %s", args, r.code, r.stderr, exitUsage, given)
		}
	}
	if _, err := os.Stat(out); err == nil {
		t.Errorf("%s was created", out)
	}
	// A value that is no model gets run's own message.
	r := fragility(t, nil, append([]string{"compare", "--reference", "drwan", "--out", out, m[0], m[1]}, def...)...)
	if r.code != exitUsage || !strings.Contains(r.stderr, `--reference "drwan": want drawn or original`) {
		t.Errorf("--reference drwan: exit %d, stderr %q", r.code, r.stderr)
	}
	// run --reference with a model file: the line says where a reference
	// model is given.
	r = fragility(t, nil, "run", "--reference", "q8.gguf", "--model", m[0], "--out", out)
	if r.code != exitUsage || !strings.Contains(r.stderr, "compare's --reference-model") || strings.Count(r.stderr, "\n") != 1 {
		t.Errorf("run --reference q8.gguf: exit %d, stderr %q", r.code, r.stderr)
	}
}

// TestCompareNarrative: compare takes --no-ddc (the shared compare gives
// it) and writes narrative.md as run does, so report.html's Copy button
// works; the verdicts are shown as run shows them.
func TestCompareNarrative(t *testing.T) {
	dir, r := tinyCompare(t)
	narr, err := os.ReadFile(filepath.Join(dir, rundir.FileNarrative))
	if err != nil || len(narr) == 0 {
		t.Fatalf("compare wrote no narrative.md: %v", err)
	}
	page, err := os.ReadFile(filepath.Join(dir, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(page, []byte(`id="copy-narrative" disabled`)) {
		t.Error("report.html: the Copy narrative button is disabled")
	}
	if !strings.Contains(r.stdout, "The narrative (method, tables, every number): "+filepath.Join(dir, rundir.FileNarrative)) ||
		!strings.Contains(r.stdout, "Quantization comparison against ") || !strings.Contains(r.stdout, "Every table of the comparison: "+filepath.Join(dir, rundir.FileCompareMD)) {
		t.Errorf("compare's stdout lacks the verdicts or the comparison:\n%s", r.stdout)
	}
	// The terminal answers in a few lines: the verdict block, one line per
	// file compared, the paths; the tables are in the files.
	if n := strings.Count(r.stdout, "\n"); n > 25 || strings.Contains(r.stdout, "| file |") {
		t.Errorf("compare printed %d lines (tables included?):\n%s", n, r.stdout)
	}
}

// TestCompareSideBySideVariants: compare.md's side-by-side table has a
// column for every variant of the run, symbolic and placebo (added by the
// drawn reference) included, and says what noop's drop is taken against.
func TestCompareSideBySideVariants(t *testing.T) {
	dir, _ := tinyCompare(t)
	md, err := os.ReadFile(filepath.Join(dir, rundir.FileCompareMD))
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(md), "### Accuracy and drops side by side")
	if !ok {
		t.Fatalf("compare.md has no side-by-side table:\n%s", md)
	}
	var head string
	for _, l := range strings.Split(table, "\n") {
		if strings.HasPrefix(l, "| file |") {
			head = l
			break
		}
	}
	for _, v := range []string{"| base |", "| symbolic |", "| noop (against symbolic) |", "| placebo (against symbolic) |"} {
		if !strings.Contains(head, v) {
			t.Errorf("side-by-side head %q lacks %q", head, v)
		}
	}
	rows := rowsWithoutSeconds(t, dir)
	for _, want := range []string{"symbolic", "placebo"} {
		if !slices.ContainsFunc(rows, func(r []string) bool { return slices.Contains(r, want) }) {
			t.Errorf("results.csv has no %s rows", want)
		}
	}
}

// readJSONFile decodes the JSON file at path into v.
func readJSONFile(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}
