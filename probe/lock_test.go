package probe

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fragility/fragility/probe/rundir"
)

// TestLockDir: a second lock of a run directory in use is refused naming
// the directory and the holder's pid; released, it can be taken again;
// taking it creates the directory and removes the temporary files a killed
// writer left; the lock file does not make a directory "not empty".
func TestLockDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	l, err := rundir.LockDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	_, err = rundir.LockDir(dir)
	want := fmt.Sprintf("%s: in use by another fragility process (pid %d)", dir, os.Getpid())
	if !errors.Is(err, rundir.ErrInUse) || !strings.HasPrefix(err.Error(), want) {
		t.Fatalf("second lock: %v, want %q", err, want)
	}
	l.Unlock()
	l.Unlock() // a second release does nothing
	if rundir.HasRunContent(dir) {
		t.Error("the lock file alone counts as run content")
	}
	if err := prepareDir(dir, false, false); err != nil {
		t.Errorf("a directory holding only the lock file: %v", err)
	}
	os.WriteFile(filepath.Join(dir, "."+rundir.FileResults+".tmp-123"), []byte("half"), 0o600)
	os.WriteFile(filepath.Join(dir, ".probe-write-9"), nil, 0o600)
	os.WriteFile(filepath.Join(dir, ".mine"), nil, 0o600)
	l, err = rundir.LockDir(dir)
	if err != nil {
		t.Fatalf("lock after release: %v", err)
	}
	defer l.Unlock()
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if got := strings.Join(names, ","); got != ".mine,"+rundir.FileLock {
		t.Errorf("after the lock the directory holds %s, want .mine and the lock file", got)
	}
}

// TestStreamsStartedFresh: a run killed after its manifest and before its
// first batch (no results.csv, or a header alone, and no trace) resumes
// with empty streams instead of failing; one with a record does not.
func TestStreamsStartedFresh(t *testing.T) {
	dir := t.TempDir()
	res, tr := filepath.Join(dir, rundir.FileResults), filepath.Join(dir, rundir.FileTraces)
	s, err := openStreams(dir, true)
	if err != nil {
		t.Fatalf("resume with no streams: %v", err)
	}
	s.close()
	if b, _ := os.ReadFile(res); !strings.HasPrefix(string(b), "item_id") || strings.Count(string(b), "\n") != 1 {
		t.Errorf("fresh results.csv: %q", b)
	}
	os.Remove(tr)
	if s, err = openStreams(dir, true); err != nil {
		t.Fatalf("resume with a header alone: %v", err)
	}
	s.close()
	if streamsStarted(res, tr) {
		t.Error("a header alone counts as started")
	}
	os.WriteFile(tr, []byte("{\"item_id\":\"a\"}\n"), 0o644)
	if !streamsStarted(res, tr) {
		t.Error("a trace line does not count as started")
	}
}

// TestMergeChecksShardRows runs a plan as 2 shards on a tiny model, edits
// the correct column of one row of the second shard's results.csv, and
// checks that merge refuses it naming that shard's file and row (as verify
// does), not the merge's temporary directory; the unedited shards merge.
func TestMergeChecksShardRows(t *testing.T) {
	paths := tinyModels(t, 1)
	tdir := shardTemplates(t)
	root := t.TempDir()
	var dirs []string
	for k := 1; k <= 2; k++ {
		cfg := shardConfig(tdir, paths, filepath.Join(root, fmt.Sprint("shard", k)))
		cfg.Shard = &rundir.Shard{Index: k, Count: 2}
		runOrFail(t, cfg)
		dirs = append(dirs, cfg.OutDir)
	}
	if _, err := Merge(filepath.Join(root, "merged"), dirs, MergeOptions{}); err != nil {
		t.Fatalf("merge of the unedited shards: %v", err)
	}
	recs := csvRows(t, dirs[1])
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
