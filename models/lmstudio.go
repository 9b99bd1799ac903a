package models

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// LM Studio keeps each downloaded model as a plain file
// ORG/REPO/FILE.gguf under its models folder: ~/.lmstudio/models, or
// ~/.cache/lm-studio/models in older versions.

// LMStudioRoots returns the folders searched for LM Studio models.
func LMStudioRoots() []string {
	h := homeDir()
	return []string{filepath.Join(h, ".lmstudio", "models"), filepath.Join(h, ".cache", "lm-studio", "models")}
}

// lookupLMStudio finds "ORG/REPO[/FILE]" in the LM Studio roots: the GGUF
// file FILE names (see chooseGGUF), or the one GGUF file of the folder.
func lookupLMStudio(ref, spec string) (*Source, error) {
	parts := strings.Split(spec, "/")
	for _, p := range parts {
		if p == "" || p == "." || p == ".." {
			return nil, fmt.Errorf("%s: not an LM Studio model ORG/REPO[/FILE]", ref)
		}
	}
	if len(parts) < 2 {
		return nil, fmt.Errorf("%s: not an LM Studio model ORG/REPO[/FILE]", ref)
	}
	repo, file := parts[0]+"/"+parts[1], strings.Join(parts[2:], "/")
	var found []*Source
	var miss storeMisses
	for _, root := range LMStudioRoots() {
		dir := filepath.Join(root, filepath.FromSlash(repo))
		if _, err := os.Stat(dir); err != nil {
			miss.add(StoreLMStudio, root, err, lmstudioRepos)
			continue
		}
		rel, p, path, err := openGGUF(ref, StoreLMStudio, root, dir, file, "lmstudio:"+repo+"/FILE", "missing file %s: %v")
		if err != nil {
			return nil, err
		}
		found = append(found, &Source{Ref: ref, Store: StoreLMStudio, Name: repo + "/" + stem(rel), Root: root, Path: path, Manifest: p})
	}
	switch {
	case len(found) > 1:
		return nil, fmt.Errorf("%s: a name in two stores, %s and %s: give the path of the one to use", ref, found[0].Manifest, found[1].Manifest)
	case len(found) == 1:
		return found[0], nil
	case miss.unreadable != nil:
		return nil, fmt.Errorf("%s: %v", ref, miss.unreadable)
	case len(miss.searched) == 0:
		return nil, unknownName{fmt.Sprintf("%s: no LM Studio models folder at %s", ref, strings.Join(LMStudioRoots(), " nor ")), true}
	}
	return nil, unknown(ref, repo, miss.searched, repo, miss.have)
}

// lmstudioRepos lists the ORG/REPO folders of an LM Studio root.
func lmstudioRepos(root string) ([]string, error) {
	orgs, err := os.ReadDir(root)
	var out []string
	for _, o := range orgs {
		if !o.IsDir() || strings.HasPrefix(o.Name(), ".") {
			continue
		}
		repos, _ := os.ReadDir(filepath.Join(root, o.Name()))
		for _, r := range repos {
			if r.IsDir() && !strings.HasPrefix(r.Name(), ".") {
				out = append(out, o.Name()+"/"+r.Name())
			}
		}
	}
	sort.Strings(out)
	return out, err
}

// listLMStudio lists the GGUF files of every LM Studio root.
func listLMStudio() ([]Entry, []string) {
	return listRoots(StoreLMStudio, LMStudioRoots(), func(root string) (entries []Entry, problems []string) {
		repos, _ := lmstudioRepos(root)
		for _, repo := range repos {
			dir := filepath.Join(root, filepath.FromSlash(repo))
			files, err := ggufFiles(dir)
			if err != nil {
				problems = append(problems, storeReadError(StoreLMStudio, root, err).Error())
			}
			for _, f := range files {
				e := Entry{Name: "lmstudio:" + repo + "/" + f, Store: StoreLMStudio, Root: root}
				entries = append(entries, digestEntry(headerEntry(e, filepath.Join(dir, filepath.FromSlash(f)))))
			}
		}
		return entries, problems
	})
}

// openGGUF picks the GGUF file of the folder dir of a store's repository
// (file names it, by chooseGGUF's rules; hint is how to name one), follows
// it to the real file and checks that it is GGUF. It returns the file's
// name in dir, its path there and the real file. Errors begin with ref;
// missing formats a file that points nowhere (its path, the cause).
func openGGUF(ref, store, root, dir, file, hint, missing string) (rel, link, path string, err error) {
	files, err := ggufFiles(dir)
	if err != nil {
		return "", "", "", fmt.Errorf("%s: %v", ref, storeReadError(store, root, err))
	}
	if rel, err = chooseGGUF(ref, dir, files, file, hint); err != nil {
		return "", "", "", err
	}
	link = filepath.Join(dir, filepath.FromSlash(rel))
	if path, _, err = realFile(link); err != nil {
		return "", "", "", fmt.Errorf("%s: "+missing, ref, link, unwrapPath(err))
	}
	if err := checkGGUFMagic(path); err != nil {
		return "", "", "", fmt.Errorf("%s: not runnable: %v", ref, err)
	}
	return rel, link, path, nil
}
