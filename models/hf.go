package models

import (
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// The Hugging Face hub cache (https://huggingface.co/docs/hub/local-cache):
// repository ORG/REPO is the folder models--ORG--REPO; refs/REF holds the
// commit a branch or tag points to; snapshots/COMMIT/FILE is a link to
// blobs/ETAG, where the ETAG of a file stored with git LFS (every GGUF) is
// its sha256 in hex.

// HFCacheDir returns the hub cache folder: $HF_HUB_CACHE, else
// $HF_HOME/hub, else ~/.cache/huggingface/hub.
func HFCacheDir() string {
	if d := os.Getenv("HF_HUB_CACHE"); d != "" {
		return d
	}
	if d := os.Getenv("HF_HOME"); d != "" {
		return filepath.Join(d, "hub")
	}
	return filepath.Join(homeDir(), ".cache", "huggingface", "hub")
}

// hfRepoDir is the cache folder of repository repo ("ORG/REPO" or "REPO").
func hfRepoDir(root, repo string) string {
	return filepath.Join(root, "models--"+strings.ReplaceAll(repo, "/", "--"))
}

// lookupHF finds "ORG/REPO[@REV][:FILE]" (or "ORG/REPO/FILE") in the hub
// cache: the snapshot of
// refs/main (or of REV, a branch, tag or commit), and in it the GGUF file
// FILE names (see chooseGGUF), or the one GGUF file it holds.
func lookupHF(ref, spec string) (*Source, error) {
	repo, file, _ := strings.Cut(spec, ":")
	repo, rev, hasRev := strings.Cut(repo, "@")
	if !hasRev {
		rev = "main"
	}
	parts := strings.Split(repo, "/")
	if len(parts) > 2 && file == "" { // hf:ORG/REPO/FILE, as LM Studio names files
		repo, file, parts = parts[0]+"/"+parts[1], strings.Join(parts[2:], "/"), parts[:2]
	}
	for _, p := range parts {
		if p == "" || p == "." || p == ".." || strings.Contains(p, "--") {
			return nil, fmt.Errorf("%s: not a Hugging Face repository ORG/REPO[@REVISION][:FILE]", ref)
		}
	}
	if len(parts) > 2 || rev == "" || strings.ContainsAny(rev, `/\`) {
		return nil, fmt.Errorf("%s: not a Hugging Face repository ORG/REPO[@REVISION][:FILE]", ref)
	}
	root := HFCacheDir()
	dir := hfRepoDir(root, repo)
	if _, err := os.Stat(dir); err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s: %v", ref, storeReadError(StoreHF, root, err))
		}
		exists, rerr := readableDir(root)
		switch {
		case rerr != nil:
			return nil, fmt.Errorf("%s: %v", ref, storeReadError(StoreHF, root, rerr))
		case !exists:
			return nil, unknownName{fmt.Sprintf("%s: no Hugging Face hub cache at %s (set HF_HUB_CACHE or HF_HOME)", ref, root), true}
		}
		repos, _ := hfRepos(root)
		return nil, unknown(ref, repo, []string{root}, repo, repos)
	}
	commit, snap, err := hfSnapshot(ref, root, dir, rev)
	if err != nil {
		return nil, err
	}
	rel, link, path, err := openGGUF(ref, StoreHF, root, snap, file, "hf:"+repo+":FILE", "missing blob of %s: %v (the download did not finish?)")
	if err != nil {
		return nil, err
	}
	return &Source{Ref: ref, Store: StoreHF, Name: repo + "/" + stem(rel), Root: root, Path: path, Manifest: link, Revision: commit, Digest: hfBlobDigest(path)}, nil
}

// hfBlobDigest is "sha256:HEX" for a real file blobs/HEX of the hub cache
// whose name is a sha256 (a file stored with git LFS), else "".
func hfBlobDigest(path string) string {
	if b := filepath.Base(path); len(b) == 64 && filepath.Base(filepath.Dir(path)) == "blobs" {
		if _, err := hex.DecodeString(b); err == nil {
			return "sha256:" + b
		}
	}
	return ""
}

// hfRepos lists the model repositories ("ORG/REPO") of the hub cache.
func hfRepos(root string) ([]string, error) {
	ents, err := os.ReadDir(root)
	var out []string
	for _, e := range ents {
		if r, ok := strings.CutPrefix(e.Name(), "models--"); ok && e.IsDir() {
			out = append(out, strings.ReplaceAll(r, "--", "/"))
		}
	}
	sort.Strings(out)
	return out, err
}

// listHF lists the GGUF files of every repository's refs/main snapshot (or
// of each snapshot, named with @COMMIT, when there is no refs/main).
func listHF() ([]Entry, []string) {
	root := HFCacheDir()
	if exists, err := readableDir(root); err != nil {
		return nil, []string{storeReadError(StoreHF, root, err).Error()}
	} else if !exists {
		return nil, nil
	}
	repos, _ := hfRepos(root)
	var entries []Entry
	var problems []string
	for _, repo := range repos {
		dir := hfRepoDir(root, repo)
		snaps := map[string]string{} // commit -> "@COMMIT" or ""
		if b, err := os.ReadFile(filepath.Join(dir, "refs", "main")); err == nil {
			snaps[strings.TrimSpace(string(b))] = ""
		} else {
			ents, _ := os.ReadDir(filepath.Join(dir, "snapshots"))
			for _, e := range ents {
				snaps[e.Name()] = "@" + e.Name()
			}
		}
		for commit, at := range snaps {
			snap := filepath.Join(dir, "snapshots", commit)
			files, err := ggufFiles(snap)
			if err != nil && !errors.Is(err, fs.ErrNotExist) {
				problems = append(problems, storeReadError(StoreHF, root, err).Error())
			}
			for _, f := range files {
				e := Entry{Name: "hf:" + repo + at + ":" + f, Store: StoreHF, Root: root}
				link := filepath.Join(snap, filepath.FromSlash(f))
				e = headerEntry(e, link)
				if r, _, err := realFile(link); err == nil {
					e.Digest = hfBlobDigest(r)
				}
				entries = append(entries, digestEntry(e))
			}
		}
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].Name < entries[j].Name })
	return entries, problems
}

// hfSnapshot resolves revision rev (a ref name under refs/, or a commit) of
// the hub-cache repository folder dir to its commit and snapshot folder;
// the error names ref, the snapshot looked for and the refs there.
func hfSnapshot(ref, root, dir, rev string) (commit, snap string, err error) {
	commit = rev
	if b, err := os.ReadFile(filepath.Join(dir, "refs", rev)); err == nil {
		commit = strings.TrimSpace(string(b))
	} else if !errors.Is(err, fs.ErrNotExist) {
		return "", "", fmt.Errorf("%s: %v", ref, storeReadError(StoreHF, root, err))
	}
	snap = filepath.Join(dir, "snapshots", commit)
	if st, err := os.Stat(snap); err != nil || !st.IsDir() || commit == "" || strings.ContainsAny(commit, `/\`) {
		refs, _ := os.ReadDir(filepath.Join(dir, "refs"))
		var names []string
		for _, r := range refs {
			names = append(names, r.Name())
		}
		return "", "", fmt.Errorf("%s: missing snapshot %s for revision %s (refs: %s)", ref, snap, rev, strings.Join(names, ", "))
	}
	return commit, snap, nil
}
