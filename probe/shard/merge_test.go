package shard

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fragility/fragility/llm"
	"github.com/fragility/fragility/probe"
	"github.com/fragility/fragility/probe/internal/probetest"
	"github.com/fragility/fragility/probe/rundir"
	"github.com/fragility/fragility/probe/verify"
	"github.com/fragility/fragility/templates"
)

func runOrFail(t *testing.T, cfg rundir.Config) {
	t.Helper()
	if _, err := probe.Run(context.Background(), cfg, probe.Options{ToolInfo: map[string]string{"name": "fragility", "version": "test"}}); err != nil {
		t.Fatalf("run %s (shard %v): %v", cfg.OutDir, cfg.Shard, err)
	}
}

// TestShardMergeByteIdentical runs one plan whole and as 3 shards on two
// tiny models, merges the shards, and checks that results.csv (seconds
// aside), traces.jsonl, set.jsonl and summary.json are
// byte-identical to the whole run's, that the merged directory verifies bit
// for bit, and that merge refuses a missing, duplicated, foreign, unfinished
// or cut shard, naming it.
func TestShardMergeByteIdentical(t *testing.T) {
	paths := probetest.TinyModels(t, 2)
	tdir := probetest.ShardTemplates(t)
	root := t.TempDir()
	whole := filepath.Join(root, "whole")
	runOrFail(t, probetest.ShardConfig(tdir, paths, whole))

	var shardDirs []string
	for k := 1; k <= 3; k++ {
		cfg := probetest.ShardConfig(tdir, paths, filepath.Join(root, "shard", string(rune('0'+k))))
		cfg.Shard = &rundir.Shard{Index: k, Count: 3}
		runOrFail(t, cfg)
		shardDirs = append(shardDirs, cfg.OutDir)
	}

	wm, err := rundir.ReadManifest(whole)
	if err != nil {
		t.Fatal(err)
	}
	if wm.PlanSHA256 == "" || wm.Shard != nil {
		t.Fatalf("whole run: plan sha256 %q, shard %+v", wm.PlanSHA256, wm.Shard)
	}
	items, crossModel := 0, false
	for i, d := range shardDirs {
		m, err := rundir.ReadManifest(d)
		if err != nil {
			t.Fatal(err)
		}
		if m.PlanSHA256 != wm.PlanSHA256 || m.Shard == nil || m.Shard.Index != i+1 || m.Shard.Count != 3 || m.Config.Shard == nil || m.Status != "complete" {
			t.Fatalf("shard %d manifest: plan %s (whole %s), shard %+v, status %s", i+1, m.PlanSHA256, wm.PlanSHA256, m.Shard, m.Status)
		}
		items += m.Shard.Items
		loaded := 0
		for _, me := range m.Models {
			if me.Metadata != nil {
				loaded++
			}
		}
		crossModel = crossModel || loaded == 2
		if rows := len(probetest.CSVRows(t, d)) - 1; rows != m.Shard.Items {
			t.Errorf("shard %d: %d rows, manifest says %d items", i+1, rows, m.Shard.Items)
		}
	}
	wholeRows := probetest.CSVRows(t, whole)
	if items != len(wholeRows)-1 {
		t.Fatalf("shards hold %d items, the whole run %d", items, len(wholeRows)-1)
	}
	if !crossModel {
		t.Errorf("no shard spans both models: the test no longer covers (model, batch) units across models")
	}
	skipCol := slices.Index(wholeRows[0], "skip_reason")
	skipped := 0
	for _, r := range wholeRows[1:] {
		if r[skipCol] != "" {
			skipped++
		}
	}
	if skipped == 0 || skipped == len(wholeRows)-1 {
		t.Fatalf("%d of %d items skipped: change shardTestNCtx so that some, not all, prompts are too long", skipped, len(wholeRows)-1)
	}

	merged := filepath.Join(root, "merged")
	res, err := Merge(merged, []string{shardDirs[2], shardDirs[0], shardDirs[1]}, MergeOptions{})
	if err != nil {
		t.Fatalf("merge: %v", err)
	}
	if res.Shards != 3 || res.Items != items || res.PlanSHA256 != wm.PlanSHA256 {
		t.Errorf("merge result %+v", res)
	}

	// results.csv: every column but seconds identical; seconds = the shards'.
	mergedRows := probetest.CSVRows(t, merged)
	sec := slices.Index(wholeRows[0], "seconds")
	drop := func(rows [][]string) [][]string {
		out := make([][]string, len(rows))
		for i, r := range rows {
			out[i] = slices.Delete(slices.Clone(r), sec, sec+1)
		}
		return out
	}
	if !slices.EqualFunc(drop(mergedRows), drop(wholeRows), slices.Equal) {
		t.Errorf("merged results.csv differs from the whole run's (seconds aside)")
	}
	var shardRows [][]string
	for _, d := range shardDirs {
		shardRows = append(shardRows, probetest.CSVRows(t, d)[1:]...)
	}
	if !slices.EqualFunc(mergedRows[1:], shardRows, slices.Equal) {
		t.Errorf("merged results.csv rows (with seconds) are not the shards' rows in shard order")
	}
	// With the whole run's seconds put in, the file is the whole run's byte for byte.
	for i := range mergedRows {
		mergedRows[i][sec] = wholeRows[i][sec]
	}
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	w.WriteAll(mergedRows)
	wantCSV, _ := os.ReadFile(filepath.Join(whole, rundir.FileResults))
	if !bytes.Equal(buf.Bytes(), wantCSV) {
		t.Errorf("merged results.csv with the whole run's seconds is not byte-identical to it")
	}
	for _, f := range []string{rundir.FileTraces, rundir.FileSet, rundir.FileSummary} {
		a, _ := os.ReadFile(filepath.Join(merged, f))
		b, _ := os.ReadFile(filepath.Join(whole, f))
		if len(a) == 0 || !bytes.Equal(a, b) {
			t.Errorf("merged %s (%d bytes) is not byte-identical to the whole run's (%d bytes)", f, len(a), len(b))
		}
	}
	mm, err := rundir.ReadManifest(merged)
	if err != nil {
		t.Fatal(err)
	}
	if mm.Status != "complete" || mm.Shard != nil || mm.Config.Shard != nil || len(mm.MergedFrom) != 3 || mm.PlanSHA256 != wm.PlanSHA256 ||
		mm.MergedFrom[0].Shard != "1/3" || mm.MergedFrom[2].Dir != shardDirs[2] {
		t.Errorf("merged manifest: status %s, shard %+v, merged_from %+v", mm.Status, mm.Shard, mm.MergedFrom)
	}
	for i, me := range mm.Models {
		if me.Metadata == nil || me.Backend == "" {
			t.Errorf("merged manifest: model %d has no metadata or backend", i)
		}
	}
	// The time split is the shards' summed.
	var decode float64
	for _, d := range shardDirs {
		sm, err := rundir.ReadManifest(d)
		if err != nil || sm.TimeSplit == nil {
			t.Fatalf("shard %s: %v, time split %v", d, err, sm.TimeSplit)
		}
		decode += sm.TimeSplit.DecodeSeconds
	}
	if mm.TimeSplit == nil || mm.TimeSplit.DecodeSeconds != decode || decode <= 0 {
		t.Errorf("merged time split %+v, the shards' decode seconds sum to %v", mm.TimeSplit, decode)
	}
	wc, mc := wm.Config, mm.Config
	if a, b := flatJSON(wc), flatJSON(mc); !mapsEqual(a, b) {
		t.Errorf("merged config differs from the whole run's: %v vs %v", b, a)
	}

	// The merged directory replays bit for bit.
	vr, err := verify.Verify(context.Background(), merged, verify.VerifyOptions{})
	if err != nil {
		t.Fatalf("verify merged: %v", err)
	}
	if !vr.OK() || vr.Items+vr.Skipped != items || vr.Skipped != skipped {
		t.Errorf("verify merged: %d items, %d skipped, %d divergences (first %v); want %d items, %d skipped", vr.Items, vr.Skipped, vr.Divergences, vr.First, items-skipped, skipped)
	}

	// Refusals.
	if _, err := Merge(merged, shardDirs, MergeOptions{}); err == nil || !strings.Contains(err.Error(), "--force") {
		t.Errorf("merge into an existing directory: %v, want a refusal naming --force", err)
	}
	if _, err := Merge(merged, shardDirs, MergeOptions{Force: true}); err != nil {
		t.Errorf("merge --force over the merged directory: %v", err)
	}
	foreign := filepath.Join(root, "foreign")
	fc := probetest.ShardConfig(tdir, paths, foreign)
	fc.Seed = 12
	fc.Shard = &rundir.Shard{Index: 2, Count: 3}
	runOrFail(t, fc)
	unfinished := probetest.CopyDir(t, shardDirs[2], filepath.Join(root, "unfinished"))
	probetest.EditManifest(t, unfinished, func(m *rundir.Manifest) { m.Status = "interrupted" })
	cut := probetest.CopyDir(t, shardDirs[1], filepath.Join(root, "cut"))
	data, _ := os.ReadFile(filepath.Join(cut, rundir.FileResults))
	lines := strings.SplitAfter(string(data), "\n")
	os.WriteFile(filepath.Join(cut, rundir.FileResults), []byte(strings.Join(append(lines[:2:2], lines[3:]...), "")), 0o644)
	otherBinary := probetest.CopyDir(t, shardDirs[1], filepath.Join(root, "other-binary"))
	probetest.EditManifest(t, otherBinary, func(m *rundir.Manifest) { m.Tool["version"] = "v9" })
	otherSplit := filepath.Join(root, "split2")
	sc := probetest.ShardConfig(tdir, paths, otherSplit)
	sc.Shard = &rundir.Shard{Index: 2, Count: 2}
	runOrFail(t, sc)

	for _, c := range []struct {
		name string
		dirs []string
		want []string
	}{
		{"missing", []string{shardDirs[0], shardDirs[2]}, []string{"shard 2/3 missing", "1/3, 3/3"}},
		{"duplicated", []string{shardDirs[0], shardDirs[1], shardDirs[1], shardDirs[2]}, []string{"shard 2/3 is given twice", shardDirs[1]}},
		{"foreign", []string{shardDirs[0], foreign, shardDirs[2]}, []string{"shard 2/3 (" + foreign + ")", "another plan", "seed 12 vs 11"}},
		{"unfinished", []string{shardDirs[0], shardDirs[1], unfinished}, []string{"shard 3/3 (" + unfinished + ")", `status "interrupted"`, "--resume"}},
		{"cut", []string{shardDirs[0], cut, shardDirs[2]}, []string{"shard 2/3 (" + cut + ")", "unfinished or its files were cut"}},
		{"other binary", []string{shardDirs[0], otherBinary, shardDirs[2]}, []string{"shard 2/3 (" + otherBinary + ")", "another binary", `version "v9"`}},
		{"other split", []string{shardDirs[0], otherSplit, shardDirs[2]}, []string{"shard 2/2 (" + otherSplit + ") is one of 2 shards"}},
		{"whole run", []string{whole, shardDirs[1]}, []string{whole, "not a shard"}},
		{"merged run", []string{merged}, []string{merged, "already a merged run"}},
	} {
		out := filepath.Join(root, "refused-"+strings.ReplaceAll(c.name, " ", "-"))
		_, err := Merge(out, c.dirs, MergeOptions{})
		if err == nil {
			t.Errorf("%s: merge succeeded", c.name)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q does not contain %q", c.name, err, w)
			}
		}
		if _, serr := os.Stat(out); serr == nil {
			t.Errorf("%s: a refused merge left %s behind", c.name, out)
		}
		t.Logf("%s: %v", c.name, err)
	}
	entries, _ := os.ReadDir(root)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			t.Errorf("temporary %s left in %s", e.Name(), root)
		}
	}
}

func mapsEqual(a, b map[string]string) bool {
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

// TestShardTooMany: a run refuses more shards than its plan has batches,
// before any model loads.
func TestShardTooMany(t *testing.T) {
	paths := probetest.TinyModels(t, 1)
	tdir := probetest.ShardTemplates(t)
	cfg := probetest.ShardConfig(tdir, paths, filepath.Join(t.TempDir(), "s"))
	cfg.Shard = &rundir.Shard{Index: 1, Count: 500}
	ts, err := templates.Load(cfg.Templates)
	if err != nil {
		t.Fatal(err)
	}
	set, err := templates.Generate(ts, templates.Options{Variants: cfg.Variants, Instances: cfg.Instances, Seed: cfg.Seed, Reference: cfg.Reference})
	if err != nil {
		t.Fatal(err)
	}
	b := len(probe.PlanBatches(cfg, set))
	_, err = probe.Run(context.Background(), cfg, probe.Options{})
	if want := fmt.Sprintf("so at most %d shards", b); err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("500 shards of a %d-batch plan: %v, want a refusal containing %q", b, err, want)
	}
}

// TestShardInterruptResume: a shard interrupted after its first batch and
// resumed keeps its shard and gives the uninterrupted shard's files.
func TestShardInterruptResume(t *testing.T) {
	paths := probetest.TinyModels(t, 2)
	tdir := probetest.ShardTemplates(t)
	root := t.TempDir()
	straight := probetest.ShardConfig(tdir, paths, filepath.Join(root, "straight"))
	straight.Shard = &rundir.Shard{Index: 2, Count: 3}
	runOrFail(t, straight)

	cfg := straight
	cfg.OutDir = filepath.Join(root, "interrupted")
	ctx, cancel := context.WithCancel(context.Background())
	_, err := probe.Run(ctx, cfg, probe.Options{Progress: func(ev probe.Event) {
		if ev.Done >= 2 {
			cancel()
		}
	}})
	cancel()
	if err == nil || !errors.Is(err, llm.ErrAborted) {
		t.Fatalf("interrupted shard: %v, want llm.ErrAborted", err)
	}
	if m, _ := rundir.ReadManifest(cfg.OutDir); m == nil || m.Status != "interrupted" || m.Shard == nil || m.Shard.Index != 2 {
		t.Fatalf("interrupted shard manifest: %+v", m)
	}
	if _, err := probe.Run(context.Background(), rundir.Config{OutDir: cfg.OutDir}, probe.Options{Resume: true}); err != nil {
		t.Fatalf("resume: %v", err)
	}
	m, err := rundir.ReadManifest(cfg.OutDir)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := rundir.ReadManifest(straight.OutDir)
	if m.Status != "complete" || m.Resumes != 1 || m.Shard == nil || *m.Config.Shard != *straight.Shard || m.PlanSHA256 != want.PlanSHA256 || m.Shard.Items != want.Shard.Items {
		t.Errorf("resumed shard manifest: status %s, resumes %d, shard %+v, plan %s (want %s)", m.Status, m.Resumes, m.Shard, m.PlanSHA256, want.PlanSHA256)
	}
	for i, me := range m.Models {
		if (me.Metadata == nil) != (want.Models[i].Metadata == nil) {
			t.Errorf("resumed shard: model %d metadata kept %v, straight %v", i, me.Metadata != nil, want.Models[i].Metadata != nil)
		}
	}
	a, _ := os.ReadFile(filepath.Join(cfg.OutDir, rundir.FileTraces))
	b, _ := os.ReadFile(filepath.Join(straight.OutDir, rundir.FileTraces))
	if !bytes.Equal(a, b) {
		t.Errorf("resumed shard traces.jsonl differs from the uninterrupted shard's")
	}
}

// TestMergeChecksShardRows runs a plan as 2 shards on a tiny model, edits
// the correct column of one row of the second shard's results.csv, and
// checks that merge refuses it naming that shard's file and row (as verify
// does), not the merge's temporary directory; the unedited shards merge.
func TestMergeChecksShardRows(t *testing.T) {
	paths := probetest.TinyModels(t, 1)
	tdir := probetest.ShardTemplates(t)
	root := t.TempDir()
	var dirs []string
	for k := 1; k <= 2; k++ {
		cfg := probetest.ShardConfig(tdir, paths, filepath.Join(root, fmt.Sprint("shard", k)))
		cfg.Shard = &rundir.Shard{Index: k, Count: 2}
		runOrFail(t, cfg)
		dirs = append(dirs, cfg.OutDir)
	}
	if _, err := Merge(filepath.Join(root, "merged"), dirs, MergeOptions{}); err != nil {
		t.Fatalf("merge of the unedited shards: %v", err)
	}
	recs := probetest.CSVRows(t, dirs[1])
	col, stop := slices.Index(recs[0], "correct"), slices.Index(recs[0], "stop_reason")
	row := slices.IndexFunc(recs[1:], func(r []string) bool { return r[stop] != "skipped" })
	if row < 0 {
		t.Fatal("every item of the second shard was skipped")
	}
	if recs[row+1][col] == "true" {
		recs[row+1][col] = "false"
	} else {
		recs[row+1][col] = "true"
	}
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	w.WriteAll(recs)
	path := filepath.Join(dirs[1], rundir.FileResults)
	os.WriteFile(path, buf.Bytes(), 0o644)
	_, err := Merge(filepath.Join(root, "merged2"), dirs, MergeOptions{})
	want := fmt.Sprintf("%s: line %d (item %s): correct is", path, rundir.RowLine(path, row), recs[row+1][slices.Index(recs[0], "item_id")])
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("merge of an edited shard: %v, want %q", err, want)
	}
	if _, serr := os.Stat(filepath.Join(root, "merged2", rundir.FileResults)); serr == nil {
		t.Error("the refused merge wrote results.csv")
	}
}
