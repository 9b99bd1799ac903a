package models

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fragility/fragility/templates/fixtures"
)

// TestLookupHFDataset: hf:datasets/ORG/NAME[@REV][:CONFIG] is found by the
// rules of hf: models: $HF_HUB_CACHE, else $HF_HOME/hub, else
// ~/.cache/huggingface/hub; the snapshot of refs/main unless @REV (a
// branch or a commit); CONFIG/test.jsonl, main when no config is given.
func TestLookupHFDataset(t *testing.T) {
	dir := t.TempDir()
	commit, old := "0123456789abcdef0123456789abcdef01234567", "fedcba9876543210fedcba9876543210fedcba98"
	cache := filepath.Join(dir, "home", ".cache", "huggingface", "hub")
	repo, err := fixtures.WriteHFDataset(cache, "apple/GSM-Symbolic", commit, map[string]string{
		"main": fixtures.Dataset("main", 2, 3), "p1": fixtures.Dataset("p1", 2, 3)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fixtures.WriteHFDataset(cache, "apple/GSM-Symbolic", old, map[string]string{"main": fixtures.Dataset("main", 1, 1)}); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(repo, "refs", "main"), []byte(commit+"\n"), 0o644)
	os.WriteFile(filepath.Join(repo, "refs", "v1"), []byte(old), 0o644)
	t.Setenv("HOME", filepath.Join(dir, "home"))
	t.Setenv("HF_HUB_CACHE", "")
	t.Setenv("HF_HOME", "")
	snap := filepath.Join(repo, "snapshots")
	for _, tc := range []struct{ ref, config, commit string }{
		{"hf:datasets/apple/GSM-Symbolic", "main", commit},
		{"hf:datasets/apple/GSM-Symbolic:p1", "p1", commit},
		{"hf:datasets/apple/GSM-Symbolic@main:main", "main", commit},
		{"hf:datasets/apple/GSM-Symbolic@v1", "main", old},
		{"hf:datasets/apple/GSM-Symbolic@" + old + ":main", "main", old},
	} {
		src, err := LookupHFDataset(tc.ref)
		if err != nil {
			t.Errorf("%s: %v", tc.ref, err)
			continue
		}
		want := filepath.Join(snap, tc.commit, tc.config, "test.jsonl")
		if src.Path != want || src.Revision != tc.commit || src.Config != tc.config || src.Repo != "apple/GSM-Symbolic" || src.Root != cache || src.Ref != tc.ref {
			t.Errorf("%s: %+v, want %s", tc.ref, src, want)
		}
	}
	// $HF_HOME/hub, then $HF_HUB_CACHE, win over the home folder's cache.
	for _, env := range [][2]string{{"HF_HOME", filepath.Join(dir, "hfhome")}, {"HF_HUB_CACHE", filepath.Join(dir, "hubcache")}} {
		root := env[1]
		if env[0] == "HF_HOME" {
			root = filepath.Join(root, "hub")
		}
		if _, err := fixtures.WriteHFDataset(root, "apple/GSM-Symbolic", commit, map[string]string{"main": "{}\n"}); err != nil {
			t.Fatal(err)
		}
		t.Setenv(env[0], env[1])
		if src, err := LookupHFDataset("hf:datasets/apple/GSM-Symbolic"); err != nil || src.Root != root {
			t.Errorf("%s set: %+v %v, want the cache %s", env[0], src, err, root)
		}
	}
}

// TestLookupHFDatasetErrors: each way a name is not there is one line
// naming what is missing.
func TestLookupHFDatasetErrors(t *testing.T) {
	dir := t.TempDir()
	commit := "0123456789abcdef0123456789abcdef01234567"
	cache := filepath.Join(dir, "hub")
	t.Setenv("HF_HUB_CACHE", cache)
	t.Setenv("HF_HOME", "")
	ref := "hf:datasets/apple/GSM-Symbolic"
	if _, err := LookupHFDataset(ref); err == nil || !strings.Contains(err.Error(), "no Hugging Face hub cache at "+cache+" (set HF_HUB_CACHE or HF_HOME; download with: hf download --repo-type dataset apple/GSM-Symbolic)") {
		t.Errorf("no cache: %v", err)
	}
	os.MkdirAll(cache, 0o755)
	if _, err := LookupHFDataset(ref); err == nil || !strings.Contains(err.Error(), "dataset apple/GSM-Symbolic is not in the Hugging Face hub cache at "+cache+", which holds no dataset") {
		t.Errorf("empty cache: %v", err)
	}
	repo, err := fixtures.WriteHFDataset(cache, "apple/GSM-Symbolic", commit, map[string]string{"main": "{}\n", "p1": "{}\n"})
	if err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(repo, "snapshots", commit, "p2"), 0o755) // a config folder without its file
	snap := filepath.Join(repo, "snapshots", commit)
	for _, tc := range []struct{ ref, want string }{
		{"hf:datasets/apple/GSM-Symbolc", "hf:datasets/apple/GSM-Symbolc: dataset apple/GSM-Symbolc is not in the Hugging Face hub cache at " + cache + " (closest: apple/GSM-Symbolic; download with: hf download --repo-type dataset apple/GSM-Symbolc)"},
		{ref + ":p3", ref + ":p3: no config p3 in snapshot " + snap + " (configs: main, p1)"},
		{ref + ":p2", ref + ":p2: config p2 of snapshot " + snap + " has no test.jsonl (configs: main, p1)"},
		{ref + "@v9", ref + "@v9: missing snapshot " + filepath.Join(repo, "snapshots", "v9") + " for revision v9 (refs: main)"},
		{"hf:datasets/apple", "hf:datasets/apple: not a Hugging Face dataset hf:datasets/ORG/NAME[@REVISION][:CONFIG]"},
		{"hf:datasets/apple/GSM-Symbolic/main", "not a Hugging Face dataset"},
		{"hf:datasets/apple/GSM-Symbolic:", "not a Hugging Face dataset"},
		{"hf:datasets/apple/GSM-Symbolic:../x", "not a Hugging Face dataset"},
		{"hf:apple/GSM-Symbolic", "not a Hugging Face dataset"},
	} {
		_, err := LookupHFDataset(tc.ref)
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v\nwant %s", tc.ref, err, tc.want)
		}
	}
	// A link whose blob is gone: the download did not finish.
	blobs, _ := os.ReadDir(filepath.Join(repo, "blobs"))
	for _, b := range blobs {
		os.Remove(filepath.Join(repo, "blobs", b.Name()))
	}
	if _, err := LookupHFDataset(ref); err == nil || !strings.Contains(err.Error(), "missing blob of "+filepath.Join(snap, "main", "test.jsonl")) || !strings.Contains(err.Error(), "(the download did not finish?)") {
		t.Errorf("missing blob: %v", err)
	}
	if !IsHFDataset(ref) || IsHFDataset("hf:org/repo") || IsHFDataset("data/test.jsonl") {
		t.Error("IsHFDataset")
	}
}
