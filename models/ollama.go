package models

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/fragility/fragility/internal/jsonerr"
)

// Ollama's store (https://github.com/ollama/ollama): a model NAME:TAG of
// namespace NS on registry HOST is the JSON manifest
// manifests/HOST/NS/NAME/TAG, whose "layers" each name a blob by its
// digest "sha256:HEX", stored as blobs/sha256-HEX. The weights are the one
// layer of media type ollamaModelLayer, a GGUF file; the template, params
// and system layers hold Ollama's chat template, sampling parameters and
// system prompt, which fragility does not use.
const (
	ollamaDefaultHost = "registry.ollama.ai"
	ollamaDefaultNS   = "library"
	ollamaDefaultTag  = "latest"

	ollamaModelLayer   = "application/vnd.ollama.image.model"
	ollamaTensorLayer  = "application/vnd.ollama.image.tensor" // one tensor of a safetensors import (with parameters)
	ollamaAdapterLayer = "application/vnd.ollama.image.adapter"
)

// OllamaServiceDir is the store of Ollama's Linux service (user ollama),
// searched after ~/.ollama/models when OLLAMA_MODELS is not set.
var OllamaServiceDir = "/usr/share/ollama/.ollama/models"

// OllamaRoots returns the folders searched for Ollama models: $OLLAMA_MODELS
// alone when it is set, else ~/.ollama/models and OllamaServiceDir.
func OllamaRoots() []string {
	if d := os.Getenv("OLLAMA_MODELS"); d != "" {
		return []string{d}
	}
	var out []string
	if h := homeDir(); h != "" {
		out = append(out, filepath.Join(h, ".ollama", "models"))
	}
	return append(out, OllamaServiceDir)
}

// ollamaName is a parsed Ollama model name HOST/NS/NAME:TAG.
type ollamaName struct{ host, ns, name, tag string }

// parseOllamaName parses "[[HOST/]NS/]NAME[:TAG]" with Ollama's defaults,
// as Ollama does (types/model.ParseNameBare): the tag is what follows the
// last ":" after the last "/", so a registry host may carry a port
// ("localhost:5000/team/tiny:t1"). No part may be empty, "." or "..",
// hold a "/", "\" or a control character, nor (but the host) a ":".
func parseOllamaName(s string) (ollamaName, error) {
	n := ollamaName{host: ollamaDefaultHost, ns: ollamaDefaultNS, tag: ollamaDefaultTag}
	rest := s
	if i := strings.LastIndex(s, ":"); i > strings.LastIndex(s, "/") {
		rest, n.tag = s[:i], s[i+1:]
	}
	parts := strings.Split(rest, "/")
	switch len(parts) {
	case 1:
		n.name = parts[0]
	case 2:
		n.ns, n.name = parts[0], parts[1]
	case 3:
		n.host, n.ns, n.name = parts[0], parts[1], parts[2]
	default:
		return n, fmt.Errorf("%s: not an Ollama name [[HOST[:PORT]/]NAMESPACE/]NAME[:TAG]", s)
	}
	if !n.valid() {
		return n, fmt.Errorf("%s: not an Ollama name [[HOST[:PORT]/]NAMESPACE/]NAME[:TAG]", s)
	}
	return n, nil
}

// valid reports whether every part of n can be a part of an Ollama name
// and a folder of its store (see parseOllamaName).
func (n ollamaName) valid() bool {
	for i, p := range []string{n.host, n.ns, n.name, n.tag} {
		bad := `\:/`
		if i == 0 {
			bad = `\/`
		}
		if p == "" || p == "." || p == ".." || strings.ContainsAny(p, bad) || strings.ContainsFunc(p, func(r rune) bool { return r <= ' ' }) {
			return false
		}
	}
	return true
}

// String is the name as Ollama prints it: the default host and the library
// namespace left out, the tag always written.
func (n ollamaName) String() string {
	switch {
	case n.host != ollamaDefaultHost:
		return n.host + "/" + n.ns + "/" + n.name + ":" + n.tag
	case n.ns != ollamaDefaultNS:
		return n.ns + "/" + n.name + ":" + n.tag
	}
	return n.name + ":" + n.tag
}

func (n ollamaName) manifest(root string) string {
	return filepath.Join(root, "manifests", n.host, n.ns, n.name, n.tag)
}

// matchOllama returns the names of the manifests of root that match n as
// Ollama matches names: host, namespace, model and tag each compared
// without regard to case (strings.EqualFold, as Ollama's Name.EqualFold).
// Each is spelled as it is on disk. It reads only the folders on n's way;
// a folder that is not there matches nothing, one that cannot be read is
// the error.
func matchOllama(root string, n ollamaName) ([]ollamaName, error) {
	type dir struct {
		path  string
		parts []string
	}
	dirs := []dir{{filepath.Join(root, "manifests"), nil}}
	want := []string{n.host, n.ns, n.name, n.tag}
	for level, w := range want {
		var next []dir
		for _, d := range dirs {
			ents, err := os.ReadDir(d.path)
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) {
					continue
				}
				return nil, err
			}
			for _, e := range ents {
				if !strings.EqualFold(e.Name(), w) {
					continue
				}
				if last := level == len(want)-1; last == e.IsDir() && e.Type()&fs.ModeSymlink == 0 {
					continue // a manifest is a file; the folders above it are folders
				}
				next = append(next, dir{filepath.Join(d.path, e.Name()), append(append([]string(nil), d.parts...), e.Name())})
			}
		}
		dirs = next
	}
	out := make([]ollamaName, len(dirs))
	for i, d := range dirs {
		out[i] = ollamaName{d.parts[0], d.parts[1], d.parts[2], d.parts[3]}
	}
	return out, nil
}

// caseAmbiguous is the error of a name that matches several manifests of
// one store, names that differ only in case: Ollama would take either.
func caseAmbiguous(ref, root string, names []ollamaName) error {
	sort.Slice(names, func(i, j int) bool { return names[i].String() < names[j].String() })
	s := make([]string, len(names))
	for i, n := range names {
		s[i] = n.String()
	}
	return fmt.Errorf("%s: ambiguous: Ollama's store %s holds %s, names that differ only in case, which Ollama does not tell apart: remove all but one of their manifests (under %s) to use it", ref, root, strings.Join(s, " and "), filepath.Join(root, "manifests"))
}

// ollamaManifest is the part of an Ollama manifest fragility reads.
type ollamaManifest struct {
	SchemaVersion int     `json:"schemaVersion"`
	Layers        []Layer `json:"layers"`
}

// lookupOllama finds [[HOST/]NS/]NAME[:TAG] in the Ollama roots, matching
// names without regard to case as Ollama does (matchOllama). Two names of
// one root that differ only in case are refused, naming both; found in two
// roots with different weights, it is refused naming both manifests; found
// in none, the error names the closest names (or the first root that
// cannot be read).
func lookupOllama(ref, name string) (*Source, error) {
	n, err := parseOllamaName(name)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", ref, err)
	}
	var found []*Source
	var miss storeMisses
	for _, root := range OllamaRoots() {
		names, err := matchOllama(root, n)
		if err == nil && len(names) == 0 {
			err = fs.ErrNotExist
		}
		if err != nil {
			miss.add(StoreOllama, root, err, ollamaNames)
			continue
		}
		if len(names) > 1 {
			return nil, caseAmbiguous(ref, root, names)
		}
		src, err := readOllama(ref, root, names[0], names[0].manifest(root))
		if err != nil {
			return nil, err
		}
		found = append(found, src)
	}
	switch {
	case len(found) > 1 && found[0].Digest != found[1].Digest:
		return nil, fmt.Errorf("%s: a name in two stores, %s and %s, with different weights: set OLLAMA_MODELS to the one to use", ref, found[0].Manifest, found[1].Manifest)
	case len(found) > 0:
		return found[0], nil
	case miss.unreadable != nil:
		return nil, fmt.Errorf("%s: %v", ref, miss.unreadable)
	case len(miss.searched) == 0:
		return nil, unknownName{fmt.Sprintf("%s: no Ollama store at %s (set OLLAMA_MODELS to its folder)", ref, strings.Join(OllamaRoots(), " nor ")), true}
	}
	return nil, unknown(ref, n.String(), miss.searched, n.String(), miss.have)
}

// readOllama reads the manifest at p of the model n in root and checks that
// its weights are one GGUF layer whose blob is there with the manifest's
// size. It does not hash the blob (Source.Verify does).
func readOllama(ref, root string, n ollamaName, p string) (*Source, error) {
	data, err := os.ReadFile(p)
	if err != nil {
		return nil, fmt.Errorf("%s: manifest %s: %v", ref, p, unwrapPath(err))
	}
	var m ollamaManifest
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("%s: manifest %s is not an Ollama manifest: %s", ref, p, jsonerr.Text(data, err))
	}
	src := &Source{Ref: ref, Store: StoreOllama, Name: n.String(), Root: root, Manifest: p}
	var weights []Layer
	tensors, adapters := 0, 0
	for _, l := range m.Layers {
		mt, _, _ := strings.Cut(l.MediaType, ";")
		switch strings.TrimSpace(mt) {
		case ollamaModelLayer:
			weights = append(weights, l)
		case ollamaTensorLayer:
			tensors++
		case ollamaAdapterLayer:
			adapters++
		default:
			src.Unused = append(src.Unused, l)
		}
	}
	switch {
	case tensors > 0:
		return nil, fmt.Errorf("%s: not runnable: its weights are %d tensor layers (a safetensors import), not one GGUF layer (manifest %s)", ref, tensors, p)
	case len(weights) != 1:
		return nil, fmt.Errorf("%s: not runnable: %d model layers in manifest %s, want one GGUF layer", ref, len(weights), p)
	case adapters > 0:
		return nil, fmt.Errorf("%s: not runnable: manifest %s has an adapter layer (LoRA), which fragility does not apply", ref, p)
	}
	w := weights[0]
	hexSum, ok := strings.CutPrefix(w.Digest, "sha256:")
	if _, err := hex.DecodeString(hexSum); !ok || err != nil || len(hexSum) != 64 {
		return nil, fmt.Errorf("%s: manifest %s: model layer digest %q is not sha256:HEX", ref, p, w.Digest)
	}
	blob := filepath.Join(root, "blobs", "sha256-"+hexSum)
	st, err := os.Stat(blob)
	if err != nil {
		return nil, fmt.Errorf("%s: missing blob %s of manifest %s: %v (`ollama pull %s` fetches it again)", ref, blob, p, unwrapPath(err), n.String())
	}
	if st.Size() != w.Size {
		return nil, fmt.Errorf("%s: blob %s has %d bytes, manifest %s says %d: the file was changed or damaged", ref, blob, st.Size(), p, w.Size)
	}
	if err := checkGGUFMagic(blob); err != nil {
		return nil, fmt.Errorf("%s: not runnable: the model layer %v", ref, err)
	}
	if src.Path, err = filepath.Abs(blob); err != nil {
		return nil, err
	}
	src.Digest = w.Digest
	return src, nil
}

// ollamaManifests returns the names of the manifests of the store at root
// (manifests/HOST/NS/NAME/TAG), spelled as on disk, sorted by how Ollama
// prints them. A file at another depth, or whose name starts with ".", is
// not a manifest.
func ollamaManifests(root string) ([]ollamaName, error) {
	var out []ollamaName
	base := filepath.Join(root, "manifests")
	err := filepath.WalkDir(base, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == base && errors.Is(err, fs.ErrNotExist) {
				return fs.SkipAll
			}
			return err
		}
		if d.IsDir() || strings.HasPrefix(d.Name(), ".") {
			return nil
		}
		rel, _ := filepath.Rel(base, p)
		parts := strings.Split(filepath.ToSlash(rel), "/")
		if len(parts) != 4 {
			return nil
		}
		out = append(out, ollamaName{parts[0], parts[1], parts[2], parts[3]})
		return nil
	})
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out, err
}

// ollamaNames lists the names of the models in the store at root, as
// Ollama prints them, sorted.
func ollamaNames(root string) ([]string, error) {
	names, err := ollamaManifests(root)
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = n.String()
	}
	return out, err
}

// listOllama lists every model of every Ollama root. A manifest whose name
// fragility cannot take, or that differs only in case from another of its
// root (which Ollama's matching cannot tell apart), is listed as not
// runnable with the reason.
func listOllama() ([]Entry, []string) {
	return listRoots(StoreOllama, OllamaRoots(), func(root string) (entries []Entry, problems []string) {
		names, err := ollamaManifests(root)
		if err != nil {
			problems = append(problems, storeReadError(StoreOllama, root, err).Error())
		}
		folded := map[string][]string{}
		for _, n := range names {
			k := strings.ToLower(n.String())
			folded[k] = append(folded[k], n.String())
		}
		for _, n := range names {
			e := Entry{Name: StoreOllama + ":" + n.String(), Store: StoreOllama, Root: root}
			if !n.valid() {
				e.Why = fmt.Sprintf("not an Ollama name fragility can take (manifest %s)", n.manifest(root))
				entries = append(entries, e)
				continue
			}
			if same := folded[strings.ToLower(n.String())]; len(same) > 1 {
				e.Why = fmt.Sprintf("ambiguous: %s differ only in case, and Ollama matches names without regard to case", strings.Join(same, " and "))
				entries = append(entries, e)
				continue
			}
			src, err := readOllama(e.Name, root, n, n.manifest(root))
			if err != nil {
				e.Why = strings.TrimPrefix(err.Error(), e.Name+": ")
				entries = append(entries, e)
				continue
			}
			e = headerEntry(e, src.Path)
			e.Digest = src.Digest
			entries = append(entries, digestEntry(e))
		}
		return entries, problems
	})
}

// listRoots lists the models of a store's roots: list runs on every root
// that exists and can be read, in order; a root that cannot be read is one
// problem line, one that does not exist is left out.
func listRoots(store string, roots []string, list func(root string) ([]Entry, []string)) ([]Entry, []string) {
	var entries []Entry
	var problems []string
	for _, root := range roots {
		if exists, err := readableDir(root); err != nil {
			problems = append(problems, storeReadError(store, root, err).Error())
			continue
		} else if !exists {
			continue
		}
		e, p := list(root)
		entries, problems = append(entries, e...), append(problems, p...)
	}
	return entries, problems
}
