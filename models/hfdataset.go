package models

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// HFDatasetPrefix starts the name of a dataset in the Hugging Face hub
// cache: hf:datasets/ORG/NAME[@REV][:CONFIG].
const HFDatasetPrefix = "hf:datasets/"

// HFDatasetSplitFile is the file of a dataset config that is read: the
// test split as JSON Lines (CONFIG/test.jsonl in the snapshot, as
// apple/GSM-Symbolic lays out its configs main, p1 and p2).
const HFDatasetSplitFile = "test.jsonl"

// HFDefaultConfig is the config read when a dataset name gives none.
const HFDefaultConfig = "main"

// IsHFDataset reports whether arg names a dataset of the Hugging Face hub
// cache (it starts with HFDatasetPrefix).
func IsHFDataset(arg string) bool { return strings.HasPrefix(arg, HFDatasetPrefix) }

// DatasetSource is where a dataset of the Hugging Face hub cache was found.
type DatasetSource struct {
	Ref      string // the name as given: hf:datasets/ORG/NAME[@REV][:CONFIG]
	Repo     string // ORG/NAME
	Config   string // the config read (HFDefaultConfig when the name gives none)
	Root     string // the hub cache folder (HFCacheDir)
	Revision string // the snapshot's commit
	Path     string // the file read: ROOT/datasets--ORG--NAME/snapshots/COMMIT/CONFIG/test.jsonl
}

// LookupHFDataset finds "hf:datasets/ORG/NAME[@REV][:CONFIG]" in the hub
// cache by the rules of hf: models (HFCacheDir; the snapshot refs/main
// points to, or of REV, a branch, tag or commit): the folder
// datasets--ORG--NAME, and in its snapshot the file CONFIG/test.jsonl
// (CONFIG HFDefaultConfig when not given). Every error is one line naming
// what is missing: the cache, the dataset (with the closest datasets the
// cache holds), the snapshot, the config (with the configs the snapshot
// holds) or the file.
func LookupHFDataset(ref string) (*DatasetSource, error) {
	form := fmt.Errorf("%s: not a Hugging Face dataset hf:datasets/ORG/NAME[@REVISION][:CONFIG]", ref)
	spec, ok := strings.CutPrefix(ref, HFDatasetPrefix)
	if !ok {
		return nil, form
	}
	repo, config, hasConfig := strings.Cut(spec, ":")
	repo, rev, hasRev := strings.Cut(repo, "@")
	if !hasRev {
		rev = "main"
	}
	if !hasConfig {
		config = HFDefaultConfig
	}
	parts := strings.Split(repo, "/")
	if len(parts) != 2 || rev == "" || strings.ContainsAny(rev, `/\`) || !cleanName(config) {
		return nil, form
	}
	for _, p := range parts {
		if !cleanName(p) || strings.Contains(p, "--") {
			return nil, form
		}
	}
	root := HFCacheDir()
	dir := filepath.Join(root, "datasets--"+strings.ReplaceAll(repo, "/", "--"))
	if _, err := os.Stat(dir); err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s: %v", ref, storeReadError(StoreHF, root, err))
		}
		exists, rerr := readableDir(root)
		switch {
		case rerr != nil:
			return nil, fmt.Errorf("%s: %v", ref, storeReadError(StoreHF, root, rerr))
		case !exists:
			return nil, fmt.Errorf("%s: no Hugging Face hub cache at %s (set HF_HUB_CACHE or HF_HOME; download with: hf download --repo-type dataset %s)", ref, root, repo)
		}
		have := hfDatasets(root)
		if len(have) == 0 {
			return nil, fmt.Errorf("%s: dataset %s is not in the Hugging Face hub cache at %s, which holds no dataset (download with: hf download --repo-type dataset %s)", ref, repo, root, repo)
		}
		return nil, fmt.Errorf("%s: dataset %s is not in the Hugging Face hub cache at %s (closest: %s; download with: hf download --repo-type dataset %s)", ref, repo, root, strings.Join(closest(repo, have, 3), ", "), repo)
	}
	commit, snap, err := hfSnapshot(ref, root, dir, rev)
	if err != nil {
		return nil, err
	}
	path := filepath.Join(snap, config, HFDatasetSplitFile)
	if st, err := os.Stat(path); err != nil || st.IsDir() {
		if _, lerr := os.Lstat(path); lerr == nil && err != nil {
			// The snapshot's link is there, its blob is not.
			return nil, fmt.Errorf("%s: missing blob of %s: %v (the download did not finish?)", ref, path, unwrapPath(err))
		}
		configs := hfConfigs(snap)
		have := "it holds none"
		if len(configs) > 0 {
			have = "configs: " + strings.Join(configs, ", ")
		}
		if st, err := os.Stat(filepath.Join(snap, config)); err == nil && st.IsDir() {
			return nil, fmt.Errorf("%s: config %s of snapshot %s has no %s (%s)", ref, config, snap, HFDatasetSplitFile, have)
		}
		return nil, fmt.Errorf("%s: no config %s in snapshot %s (%s)", ref, config, snap, have)
	}
	return &DatasetSource{Ref: ref, Repo: repo, Config: config, Root: root, Revision: commit, Path: path}, nil
}

// cleanName reports whether s is one path element: not empty, not . or
// .., without a separator.
func cleanName(s string) bool {
	return s != "" && s != "." && s != ".." && !strings.ContainsAny(s, `/\`)
}

// hfDatasets lists the dataset repositories ("ORG/NAME") of the hub cache.
func hfDatasets(root string) []string {
	ents, _ := os.ReadDir(root)
	var out []string
	for _, e := range ents {
		if r, ok := strings.CutPrefix(e.Name(), "datasets--"); ok && e.IsDir() {
			out = append(out, strings.ReplaceAll(r, "--", "/"))
		}
	}
	sort.Strings(out)
	return out
}

// hfConfigs lists the folders of snapshot snap that hold a test.jsonl.
func hfConfigs(snap string) []string {
	ents, _ := os.ReadDir(snap)
	var out []string
	for _, e := range ents {
		if _, err := os.Stat(filepath.Join(snap, e.Name(), HFDatasetSplitFile)); err == nil && e.IsDir() {
			out = append(out, e.Name())
		}
	}
	sort.Strings(out)
	return out
}
