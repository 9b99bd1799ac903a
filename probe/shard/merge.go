package shard

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"

	"github.com/fragility/fragility/internal/jsonerr"
	"github.com/fragility/fragility/probe"
	"github.com/fragility/fragility/probe/rundir"
	"github.com/fragility/fragility/probe/summary"
	"github.com/fragility/fragility/templates"
)

// MergeOptions are the settings of Merge.
type MergeOptions struct {
	// Force overwrites the run files of an existing, non-empty output
	// directory (as `fragility run --force`).
	Force bool
	// AcceptEnvDiff merges shards whose environments differ in what can
	// change a logit but is not part of the plan or the binary (llama.cpp's
	// CPU feature line, the backend and device, GOOS/GOARCH); the
	// differences are listed in the merged manifest. Without it they refuse
	// the merge.
	AcceptEnvDiff bool
	// Log receives one-line notices; may be nil.
	Log io.Writer
}

// MergeResult is what Merge wrote.
type MergeResult struct {
	Out         string           `json:"out"`
	PlanSHA256  string           `json:"plan_sha256"`
	Shards      int              `json:"shards"`
	Items       int              `json:"items"`
	Differences []string         `json:"env_differences,omitempty"` // accepted with AcceptEnvDiff
	Summary     *summary.Summary `json:"summary"`
}

// shardRun is one shard directory given to Merge.
type shardRun struct {
	dir string
	man *rundir.Manifest
}

func (s shardRun) name() string { return fmt.Sprintf("shard %s (%s)", s.man.Config.Shard, s.dir) }

// Merge checks that dirs are the complete shards of one plan and writes
// their merge into out: one run directory as the whole run would have
// written it.
//
// Checks, each refusal naming the shard and the mismatch: every directory
// is a finished shard run (status "complete"); all were split into the same
// number of shards; they have the same model sha256s, binary (the manifest's
// tool version and binary sha256), llama.cpp commit and build flags; the
// same plan (Manifest.PlanSHA256, recomputed from the shards' set.jsonl and
// config); no shard is given twice or missing; each shard's results.csv and
// traces.jsonl hold exactly the items of its batches, once, in plan order.
// The environment (llama.cpp's CPU feature line, each model's backend,
// GOOS/GOARCH) must agree too unless opt.AcceptEnvDiff.
//
// Output: results.csv and traces.jsonl are the shards' records in shard
// order, which is the order of the whole run: the files are byte-identical
// to an unsharded run's except the `seconds` column, which keeps each
// shard's measured time. set.jsonl is the shards' (identical) set.
// summary.json and narrative.md are computed once over all trials by probe.WriteSummary (narrative.md by
// package report, called by the merge command),
// as `fragility report` does. manifest.json is the first shard's with the
// shard cleared, status "complete", started/finished the earliest start and
// latest finish, resumes and the seconds (embed, generation, wall) summed
// over the shards, each model's metadata and backend from a shard that
// loaded it, and merged_from listing every shard. The output is assembled in
// a temporary directory beside out and moved into place only when complete.
func Merge(out string, dirs []string, opt MergeOptions) (*MergeResult, error) {
	mg := &merger{out: out, opt: opt}
	defer func() { mg.lock.Unlock() }()
	for _, step := range []func() error{
		func() error { return mg.readShards(dirs) },
		mg.checkShards,
		mg.checkEnv,
		mg.recomputePlan,
		mg.collect,
	} {
		if err := step(); err != nil {
			return nil, err
		}
	}
	return mg.write()
}

// merger is the state of one Merge shared by its steps.
type merger struct {
	out     string // the output directory as given
	outAbs  string // and absolute
	opt     MergeOptions
	shards  []shardRun // in shard order
	ref     shardRun   // the first shard of the plan most shards share
	diffs   []string   // environment differences between the shards
	setData []byte     // the reference shard's set.jsonl
	batches []probe.PlanBatch
	batchOf map[string]int  // item ID -> batch of the plan
	header  []string        // results.csv's columns
	records [][]string      // results.csv's records, all shards in order
	traces  bytes.Buffer    // traces.jsonl, all shards in order
	lock    *rundir.DirLock // the output directory's, once it exists
}

// logf writes a one-line notice to opt.Log, if any.
func (mg *merger) logf(format string, args ...any) {
	if mg.opt.Log != nil {
		fmt.Fprintf(mg.opt.Log, format+"\n", args...)
	}
}

// readShards checks the output directory and reads the manifest of every
// shard directory, refusing one that is not a shard; it sorts the shards by
// index and picks the reference shard.
func (mg *merger) readShards(dirs []string) error {
	out := mg.out
	if out == "" {
		return fmt.Errorf("no output directory given")
	}
	if len(dirs) == 0 {
		return fmt.Errorf("no shard directory given")
	}
	outAbs, err := filepath.Abs(out)
	if err != nil {
		return err
	}
	mg.outAbs = outAbs
	if err := mg.lockOut(false); err != nil {
		return err
	}

	var shards []shardRun
	for _, d := range dirs {
		abs, err := filepath.Abs(d)
		if err != nil {
			return err
		}
		if abs == outAbs {
			return fmt.Errorf("%s: the output directory is one of the shards", d)
		}
		man, err := rundir.ReadManifest(d)
		if err != nil {
			return err
		}
		switch {
		case len(man.MergedFrom) > 0:
			return fmt.Errorf("%s: already a merged run (of %d shards), not a shard", d, len(man.MergedFrom))
		case man.Config.Shard == nil || man.Shard == nil:
			return fmt.Errorf("%s: not a shard (its manifest has no shard: it was not run with --shard K/N)", d)
		case man.PlanSHA256 == "":
			return fmt.Errorf("%s: its manifest has no plan sha256", d)
		}
		shards = append(shards, shardRun{dir: abs, man: man})
	}
	sort.SliceStable(shards, func(i, j int) bool { return shards[i].man.Config.Shard.Index < shards[j].man.Config.Shard.Index })
	// The reference is the first shard of the plan most shards share, so
	// that a foreign shard is the one named.
	votes := map[string]int{}
	for _, s := range shards {
		votes[s.man.PlanSHA256]++
	}
	ref := shards[0]
	for _, s := range shards {
		if votes[s.man.PlanSHA256] > votes[ref.man.PlanSHA256] {
			ref = s
		}
	}
	mg.shards, mg.ref = shards, ref
	return nil
}

// lockOut takes the output directory's lock (LockDir), when it exists or
// create is set, and refuses a directory that holds files (other than the
// lock) unless --force.
func (mg *merger) lockOut(create bool) error {
	if mg.lock == nil {
		if _, err := os.Lstat(mg.out); err != nil && !create {
			return nil
		}
		lock, err := rundir.LockDir(mg.out)
		if err != nil {
			return err
		}
		mg.lock = lock
	}
	if rundir.HasRunContent(mg.out) && !mg.opt.Force {
		return fmt.Errorf("output directory %s already exists and is not empty: use --force to overwrite its run files", mg.out)
	}
	return nil
}

// checkShards refuses shards that are not of one run (sameRun), one that
// is not complete, and a shard given twice or missing.
func (mg *merger) checkShards() error {
	shards, ref := mg.shards, mg.ref
	// One plan, one binary, one llama.cpp, the same models.
	for _, s := range shards {
		if s.dir == ref.dir && s.man == ref.man {
			continue
		}
		if err := sameRun(ref, s); err != nil {
			return err
		}
	}
	for _, s := range shards {
		if s.man.Status != "complete" {
			return fmt.Errorf("%s: status %q, not complete: finish it with `fragility run --resume %s`", s.name(), s.man.Status, s.dir)
		}
	}
	n := ref.man.Config.Shard.Count
	byIndex := map[int]shardRun{}
	for _, s := range shards {
		k := s.man.Config.Shard.Index
		if prev, ok := byIndex[k]; ok {
			return fmt.Errorf("shard %s is given twice: %s and %s", s.man.Config.Shard, prev.dir, s.dir)
		}
		byIndex[k] = s
	}
	var missing, given []string
	for k := 1; k <= n; k++ {
		if _, ok := byIndex[k]; ok {
			given = append(given, fmt.Sprintf("%d/%d", k, n))
		} else {
			missing = append(missing, fmt.Sprintf("%d/%d", k, n))
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("shard %s missing: the plan (sha256 %s) was split into %d shards and only %s are given", strings.Join(missing, ", "), rundir.ShortSHA(ref.man.PlanSHA256), n, strings.Join(given, ", "))
	}
	return nil
}

// checkEnv lists the shards' environment differences (envDiffs): they
// refuse the merge unless opt.AcceptEnvDiff, and are then logged.
func (mg *merger) checkEnv() error {
	for _, s := range mg.shards {
		if s.man != mg.ref.man {
			mg.diffs = append(mg.diffs, envDiffs(mg.ref, s)...)
		}
	}
	if len(mg.diffs) > 0 {
		if !mg.opt.AcceptEnvDiff {
			return fmt.Errorf("%s (%d difference(s) in all): use --accept-env-diff to merge anyway; the differences are then listed in the manifest", mg.diffs[0], len(mg.diffs))
		}
		for _, d := range mg.diffs {
			mg.logf("merge: accepted: %s", d)
		}
	}
	return nil
}

// recomputePlan recomputes the plan from the reference shard's set and
// config, refusing a shard whose plan sha256 does not match it, and maps
// every item to its batch.
func (mg *merger) recomputePlan() error {
	ref := mg.ref
	setData, set, err := readSetFile(ref)
	if err != nil {
		return err
	}
	mg.setData = setData
	cfg := ref.man.Config
	cfg.Shard = nil
	mg.batches = probe.PlanBatches(cfg, set)
	modelSHA := make([]string, len(ref.man.Models))
	for i, m := range ref.man.Models {
		modelSHA[i] = m.SHA256
	}
	if sum := probe.PlanSHA256(cfg, set, setData, modelSHA, ref.man.Embedder); sum != ref.man.PlanSHA256 {
		return fmt.Errorf("%s: its set.jsonl and config give plan sha256 %s, not the %s its manifest records: a file was changed, or the shard was written by another version", ref.name(), rundir.ShortSHA(sum), rundir.ShortSHA(ref.man.PlanSHA256))
	}
	mg.batchOf = map[string]int{}
	for bi, b := range mg.batches {
		for _, it := range b.Items {
			mg.batchOf[it.ID] = bi
		}
	}
	return nil
}

// collect reads every shard's results and traces in shard order.
func (mg *merger) collect() error {
	seen := map[string]string{} // item ID -> shard that holds it
	for _, s := range mg.shards {
		if err := mg.collectShard(s, seen); err != nil {
			return err
		}
	}
	return nil
}

// collectShard checks one shard's set.jsonl and batch range against the
// plan and appends its results.csv records and traces, refusing a shard
// whose files do not hold exactly the items of its batches.
func (mg *merger) collectShard(s shardRun, seen map[string]string) error {
	ref, batches := mg.ref, mg.batches
	if s.man != ref.man {
		data, _, err := readSetFile(s)
		if err != nil {
			return err
		}
		if !bytes.Equal(data, mg.setData) {
			return fmt.Errorf("%s: set.jsonl differs from %s's", s.name(), ref.name())
		}
	}
	lo, hi := rundir.ShardBatches(*s.man.Config.Shard, len(batches))
	if s.man.Shard.FirstBatch != lo || s.man.Shard.Batches != hi-lo {
		return fmt.Errorf("%s: its manifest records batches %d..%d, but shard %s of this plan is batches %d..%d", s.name(), s.man.Shard.FirstBatch+1, s.man.Shard.FirstBatch+s.man.Shard.Batches, s.man.Config.Shard, lo+1, hi)
	}
	want := 0
	for _, b := range batches[lo:hi] {
		want += len(b.Items)
	}
	h, recs, err := readShardResults(s, mg.batchOf, lo, hi, seen)
	if err != nil {
		return err
	}
	if mg.header == nil {
		mg.header = h
	} else if !slices.Equal(mg.header, h) {
		return fmt.Errorf("%s: results.csv has other columns than %s's", s.name(), ref.name())
	}
	if len(recs) != want {
		var first string
		for _, b := range batches[lo:hi] {
			for _, it := range b.Items {
				if seen[it.ID] == "" && first == "" {
					first = it.ID
				}
			}
		}
		return fmt.Errorf("%s: results.csv holds %d of the shard's %d items (first missing: %s): the shard is unfinished or its files were cut", s.name(), len(recs), want, first)
	}
	if err := readShardTraces(s, recs, slices.Index(h, "item_id"), &mg.traces); err != nil {
		return err
	}
	if err := checkShardFiles(s); err != nil {
		return err
	}
	mg.records = append(mg.records, recs...)
	return nil
}

// checkShardFiles cross-checks a shard's results.csv against its
// traces.jsonl and its plan as verify does (probe.CheckScores, probe.CheckResponses,
// probe.CheckRecords), so that an edited row is refused naming the shard's own
// file and row.
func checkShardFiles(s shardRun) error {
	path := filepath.Join(s.dir, rundir.FileResults)
	trials, err := rundir.ReadResults(path)
	if err != nil {
		return fmt.Errorf("%s: %w", s.name(), err)
	}
	if err := probe.CheckScores(path, s.man.ExtractionRules, s.man.ErrorRules, trials); err != nil {
		return fmt.Errorf("%s: %w", s.name(), err)
	}
	traces, err := rundir.ReadTraces(s.dir)
	if err != nil {
		return fmt.Errorf("%s: %w", s.name(), err)
	}
	if err := probe.CheckResponses(path, s.man, trials, traces); err != nil {
		return fmt.Errorf("%s: %w", s.name(), err)
	}
	ids := make([]string, len(traces))
	for i := range traces {
		ids[i] = traces[i].ItemID
	}
	if err := probe.CheckRecords(s.dir, s.man, trials, ids); err != nil {
		return fmt.Errorf("%s: %w", s.name(), err)
	}
	return nil
}

// write assembles the merged directory beside out (set, results, traces,
// manifest, summary), then moves it into place.
func (mg *merger) write() (*MergeResult, error) {
	out, outAbs := mg.out, mg.outAbs
	if err := mg.lockOut(true); err != nil {
		return nil, err
	}
	parent := filepath.Dir(outAbs)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return nil, fmt.Errorf("output directory %s: %w", out, err)
	}
	stage, err := os.MkdirTemp(parent, "."+filepath.Base(outAbs)+".merge-")
	if err != nil {
		return nil, fmt.Errorf("output directory %s: %w", out, err)
	}
	defer os.RemoveAll(stage)
	if err := os.Chmod(stage, 0o755); err != nil {
		return nil, err
	}
	var rb bytes.Buffer
	w := csv.NewWriter(&rb)
	w.Write(mg.header)
	w.WriteAll(mg.records)
	if err := w.Error(); err != nil {
		return nil, err
	}
	man := mergedManifest(mg.shards)
	man.MergeDifferences = mg.diffs
	for _, f := range []struct {
		name string
		data []byte
	}{{rundir.FileSet, mg.setData}, {rundir.FileResults, rb.Bytes()}, {rundir.FileTraces, mg.traces.Bytes()}} {
		if err := rundir.WriteFileAtomic(filepath.Join(stage, f.name), f.data); err != nil {
			return nil, err
		}
	}
	if err := rundir.WriteJSONAtomic(filepath.Join(stage, rundir.FileManifest), man); err != nil {
		return nil, err
	}
	sum, err := probe.WriteSummary(stage)
	if err != nil {
		return nil, err
	}
	if err := moveInto(stage, outAbs); err != nil {
		return nil, err
	}
	ref := mg.ref
	mg.logf("merge: %d shards, %d items, plan sha256 %s -> %s", len(mg.shards), len(mg.records), rundir.ShortSHA(ref.man.PlanSHA256), out)
	return &MergeResult{Out: out, PlanSHA256: ref.man.PlanSHA256, Shards: len(mg.shards), Items: len(mg.records), Differences: mg.diffs, Summary: sum}, nil
}

// sameRun returns an error naming s and the first way in which it is not a
// shard of ref's run.
func sameRun(ref, s shardRun) error {
	a, b := ref.man, s.man
	if b.Config.Shard.Count != a.Config.Shard.Count {
		return fmt.Errorf("%s is one of %d shards, but %s one of %d: not one split", s.name(), b.Config.Shard.Count, ref.name(), a.Config.Shard.Count)
	}
	if len(a.Models) != len(b.Models) {
		return fmt.Errorf("%s: %d model(s), %s has %d: another plan", s.name(), len(b.Models), ref.name(), len(a.Models))
	}
	for i := range a.Models {
		if a.Models[i].SHA256 != b.Models[i].SHA256 {
			return fmt.Errorf("%s: model %d (%s) has sha256 %s, %s's (%s) has %s", s.name(), i, b.Models[i].Path, rundir.ShortSHA(b.Models[i].SHA256), ref.name(), a.Models[i].Path, rundir.ShortSHA(a.Models[i].SHA256))
		}
	}
	for _, k := range slices.Sorted(maps.Keys(mergeKeys(a.Tool, b.Tool))) {
		if a.Tool[k] != b.Tool[k] {
			return fmt.Errorf("%s: another binary: %s %q, %s's %q", s.name(), k, b.Tool[k], ref.name(), a.Tool[k])
		}
	}
	if a.LlamaCommit != b.LlamaCommit || a.LlamaModule != b.LlamaModule {
		return fmt.Errorf("%s: llama.cpp commit %s (%s), %s's %s (%s)", s.name(), b.LlamaCommit, b.LlamaModule, ref.name(), a.LlamaCommit, a.LlamaModule)
	}
	if a.BuildFlags != b.BuildFlags {
		return fmt.Errorf("%s: build flags %q, %s's %q", s.name(), b.BuildFlags, ref.name(), a.BuildFlags)
	}
	if a.PlanSHA256 != b.PlanSHA256 {
		return fmt.Errorf("%s: plan sha256 %s, %s's %s: a shard of another plan (%s)", s.name(), rundir.ShortSHA(b.PlanSHA256), ref.name(), rundir.ShortSHA(a.PlanSHA256), planDifference(ref, s))
	}
	return nil
}

func mergeKeys(a, b map[string]string) map[string]bool {
	out := map[string]bool{}
	for k := range a {
		out[k] = true
	}
	for k := range b {
		out[k] = true
	}
	return out
}

// planDifference says how two shards' plans differ: the first differing
// config fields, else the embedder, the item set or the version.
func planDifference(a, b shardRun) string {
	ca, cb := a.man.Config, b.man.Config
	ca.Shard, cb.Shard = nil, nil
	fa, fb := flatJSON(ca), flatJSON(cb)
	var diffs []string
	for _, k := range slices.Sorted(maps.Keys(mergeKeys(fa, fb))) {
		if fa[k] != fb[k] {
			diffs = append(diffs, fmt.Sprintf("%s %s vs %s", k, orNone(fb[k]), orNone(fa[k])))
		}
	}
	if len(diffs) > 0 {
		if len(diffs) > 3 {
			diffs = append(diffs[:3], fmt.Sprintf("%d more", len(diffs)-3))
		}
		return "config differs: " + strings.Join(diffs, "; ")
	}
	if !reflect.DeepEqual(embKey(a.man.Embedder), embKey(b.man.Embedder)) {
		return "the DDC embedder differs"
	}
	da, _, errA := readSetFile(a)
	db, _, errB := readSetFile(b)
	if errA == nil && errB == nil && !bytes.Equal(da, db) {
		return "the item sets (set.jsonl) differ: other templates"
	}
	return "same config and set: written by another version"
}

func embKey(e *rundir.Embedder) [2]string {
	if e == nil {
		return [2]string{}
	}
	return [2]string{e.SHA256, e.Level}
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// flatJSON renders v's JSON as "a.b" -> value, for naming differences.
func flatJSON(v any) map[string]string {
	data, _ := json.Marshal(v)
	var m any
	json.Unmarshal(data, &m)
	out := map[string]string{}
	var walk func(prefix string, x any)
	walk = func(prefix string, x any) {
		if obj, ok := x.(map[string]any); ok {
			for k, v := range obj {
				p := k
				if prefix != "" {
					p = prefix + "." + k
				}
				walk(p, v)
			}
			return
		}
		b, _ := json.Marshal(x)
		out[prefix] = string(b)
	}
	walk("", m)
	return out
}

// envDiffs lists what differs between the environments of two shards of one
// plan that can change a logit: llama.cpp's CPU feature line, GOOS/GOARCH,
// and each model's backend where both loaded it.
func envDiffs(ref, s shardRun) []string {
	var out []string
	add := func(what, got, want string) {
		if got != want {
			out = append(out, fmt.Sprintf("%s: %s %q, %s's %q", s.name(), what, got, ref.name(), want))
		}
	}
	add("llama.cpp system info (CPU features)", s.man.SystemInfo, ref.man.SystemInfo)
	add("GOOS/GOARCH", s.man.GOOS+"/"+s.man.GOARCH, ref.man.GOOS+"/"+ref.man.GOARCH)
	for i := range ref.man.Models {
		if a, b := ref.man.Models[i].Backend, s.man.Models[i].Backend; a != "" && b != "" {
			add(fmt.Sprintf("backend of model %d", i), b, a)
		}
	}
	return out
}

// readSetFile reads a shard's set.jsonl: its bytes and the parsed set.
func readSetFile(s shardRun) ([]byte, *templates.Set, error) {
	name := s.man.SetFile
	if name == "" {
		name = rundir.FileSet
	}
	path := filepath.Join(s.dir, name)
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", s.name(), err)
	}
	set, err := templates.ReadSet(bytes.NewReader(data))
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %s: %w", s.name(), path, err)
	}
	return data, set, nil
}

// readShardResults reads a shard's results.csv and checks that every record
// is an item of the shard's batches [lo, hi), seen nowhere before, in plan
// order. seen maps item IDs to the shard that holds them, across shards.
func readShardResults(s shardRun, batchOf map[string]int, lo, hi int, seen map[string]string) ([]string, [][]string, error) {
	path := filepath.Join(s.dir, rundir.FileResults)
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", s.name(), err)
	}
	defer f.Close()
	r := csv.NewReader(bufio.NewReader(f))
	header, err := r.Read()
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %s: no header: %w", s.name(), path, err)
	}
	col := slices.Index(header, "item_id")
	if col < 0 {
		return nil, nil, fmt.Errorf("%s: %s: no item_id column", s.name(), path)
	}
	var recs [][]string
	last := lo
	for {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %s: %w", s.name(), path, err)
		}
		line, _ := r.FieldPos(0)
		id := rec[col]
		b, ok := batchOf[id]
		switch {
		case !ok:
			return nil, nil, fmt.Errorf("%s: %s line %d: item %s is not in the plan", s.name(), path, line, id)
		case seen[id] != "":
			return nil, nil, fmt.Errorf("%s: %s line %d: item %s is also in %s", s.name(), path, line, id, seen[id])
		case b < lo || b >= hi:
			return nil, nil, fmt.Errorf("%s: %s line %d: item %s belongs to batch %d, outside the shard's batches %d..%d", s.name(), path, line, id, b+1, lo+1, hi)
		case b < last:
			return nil, nil, fmt.Errorf("%s: %s line %d: item %s (batch %d) comes after batch %d: not in plan order", s.name(), path, line, id, b+1, last+1)
		}
		last = b
		seen[id] = s.name()
		recs = append(recs, rec)
	}
	return header, recs, nil
}

// readShardTraces appends a shard's traces.jsonl lines to w, checking that
// line i is the trace of record i of its results.csv.
func readShardTraces(s shardRun, recs [][]string, idCol int, w *bytes.Buffer) error {
	path := filepath.Join(s.dir, rundir.FileTraces)
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("%s: %w", s.name(), err)
	}
	lines := bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n"))
	if len(data) == 0 {
		lines = nil
	}
	if len(lines) != len(recs) {
		return fmt.Errorf("%s: %s has %d lines for %d results.csv rows", s.name(), path, len(lines), len(recs))
	}
	for i, line := range lines {
		var t struct {
			ItemID string `json:"item_id"`
		}
		if err := json.Unmarshal(line, &t); err != nil {
			return fmt.Errorf("%s: %s:%d: %s", s.name(), path, i+1, jsonerr.Text(line, err))
		}
		if t.ItemID != recs[i][idCol] {
			return fmt.Errorf("%s: %s:%d is item %s, but results.csv row %d is item %s", s.name(), path, i+1, t.ItemID, i+1, recs[i][idCol])
		}
		w.Write(line)
		w.WriteByte('\n')
	}
	return nil
}

// mergedManifest builds the manifest of the merge of shards (sorted by
// index, all of one plan).
func mergedManifest(shards []shardRun) *rundir.Manifest {
	m := *shards[0].man
	m.Config.Shard = nil
	m.Shard = nil
	m.Status = "complete"
	m.Models = slices.Clone(m.Models)
	m.Resumes, m.EmbedSeconds, m.EmbedWaitSeconds, m.GenerationSeconds, m.WallSeconds = 0, 0, 0, 0, 0
	m.TimeSplit = nil
	m.Prompt.Rendering = nil
	m.Devices = nil
	m.MergedFrom = nil
	for _, s := range shards {
		sm := s.man
		if m.Started == "" || (sm.Started != "" && sm.Started < m.Started) {
			m.Started = sm.Started
		}
		if sm.Finished > m.Finished {
			m.Finished = sm.Finished
		}
		m.Resumes += sm.Resumes
		m.EmbedSeconds += sm.EmbedSeconds
		m.EmbedWaitSeconds += sm.EmbedWaitSeconds
		m.GenerationSeconds += sm.GenerationSeconds
		m.WallSeconds += sm.WallSeconds
		if sm.TimeSplit != nil {
			if m.TimeSplit == nil {
				m.TimeSplit = &rundir.TimeSplit{}
			}
			m.TimeSplit.Add(sm.TimeSplit)
		}
		if m.Devices == nil {
			m.Devices = sm.Devices
		}
		backends := make([]string, len(sm.Models))
		for i, me := range sm.Models {
			backends[i] = me.Backend
			if m.Models[i].Metadata == nil && me.Metadata != nil {
				m.Models[i].Metadata, m.Models[i].Backend = me.Metadata, me.Backend
			}
		}
		for k, v := range sm.Prompt.Rendering {
			if m.Prompt.Rendering == nil {
				m.Prompt.Rendering = map[string]string{}
			}
			if _, ok := m.Prompt.Rendering[k]; !ok {
				m.Prompt.Rendering[k] = v
			}
		}
		m.MergedFrom = append(m.MergedFrom, rundir.MergedShard{
			Dir: s.dir, Shard: sm.Config.Shard.String(), Source: sm.Shard.Source, Host: sm.Shard.Host,
			FirstBatch: sm.Shard.FirstBatch, Batches: sm.Shard.Batches, Items: sm.Shard.Items,
			Started: sm.Started, Finished: sm.Finished, Resumes: sm.Resumes,
			GenerationSeconds: sm.GenerationSeconds, WallSeconds: sm.WallSeconds,
			SystemInfo: sm.SystemInfo, Backends: backends, Devices: sm.Devices,
		})
	}
	return &m
}

// moveInto moves the files of stage into dir: a rename of the directory
// when dir does not exist (or is empty), else file by file after removing
// dir's run files (the caller checked --force).
func moveInto(stage, dir string) error {
	if entries, err := os.ReadDir(dir); err != nil || len(entries) == 0 {
		if err == nil {
			if err := os.Remove(dir); err != nil {
				return fmt.Errorf("output directory %s: %w", dir, err)
			}
		}
		if err := os.Rename(stage, dir); err != nil {
			return fmt.Errorf("output directory %s: %w", dir, err)
		}
		return nil
	}
	for _, name := range rundir.RunFiles {
		os.Remove(filepath.Join(dir, name))
	}
	entries, err := os.ReadDir(stage)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if err := os.Rename(filepath.Join(stage, e.Name()), filepath.Join(dir, e.Name())); err != nil {
			return fmt.Errorf("output directory %s: %w", dir, err)
		}
	}
	return nil
}
