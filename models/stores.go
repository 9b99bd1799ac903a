package models

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/fragility/fragility/internal/suggest"
	gguf "github.com/gpustack/gguf-parser-go"
)

// The stores of other tools that fragility reads models from, in place
// (Source.Store, and the prefix of a model name: "ollama:NAME[:TAG]",
// "hf:ORG/REPO[@REV][:FILE]", "lmstudio:ORG/REPO[/FILE]").
const (
	StoreOllama   = "ollama"   // Ollama's store: manifests/HOST/NS/NAME/TAG and blobs/sha256-HEX
	StoreHF       = "hf"       // the Hugging Face hub cache: models--ORG--REPO/{refs,snapshots,blobs}
	StoreLMStudio = "lmstudio" // LM Studio's models folder: ORG/REPO/FILE.gguf
)

// Source records where a model named from another tool's store was found.
// A run writes it to its manifest beside the model's sha256; the file at
// Path is read where it lies, never copied.
type Source struct {
	Ref   string `json:"ref"`   // the name as the user gave it ("ollama:tiny", "tiny:latest", "hf:org/repo:file.gguf")
	Store string `json:"store"` // StoreOllama, StoreHF or StoreLMStudio
	// Name is the model's name in results, tables and plots: Ollama's
	// "[[HOST/]NS/]NAME:TAG" spelled as in its store (the default registry
	// and the library namespace left out, the tag always written), or
	// "ORG/REPO/FILE" without ".gguf" for the Hugging Face cache and LM
	// Studio.
	Name     string `json:"name"`
	Root     string `json:"root"`               // the store's directory
	Path     string `json:"path"`               // the GGUF file a loader opens, an absolute path with no symbolic link
	Manifest string `json:"manifest,omitempty"` // Ollama: the manifest file; Hugging Face: the snapshot's file (a link to Path)
	Revision string `json:"revision,omitempty"` // Hugging Face: the commit of the snapshot
	// Digest is "sha256:HEX", the digest the store names the file by (an
	// Ollama layer's digest, a Hugging Face LFS blob's name); Verify checks
	// the file's bytes against it. Empty when the store names none (LM
	// Studio, a Hugging Face file kept in git rather than LFS).
	Digest string `json:"digest,omitempty"`
	// Unused lists the layers of an Ollama manifest that fragility does not
	// use: the chat template (the GGUF's own template is used), the
	// parameters and system prompt (the run's recorded sampling and prompt
	// are used), the licence, a vision projector.
	Unused []Layer `json:"unused_layers,omitempty"`
}

// Layer is one layer of an Ollama manifest.
type Layer struct {
	MediaType string `json:"mediaType"`
	Digest    string `json:"digest"` // "sha256:HEX"
	Size      int64  `json:"size"`   // bytes
}

// Entry is one model of a store as `fragility models list --all` shows it.
type Entry struct {
	Name         string `json:"name"`  // what --model takes: "ollama:NAME:TAG", "hf:ORG/REPO:FILE", "lmstudio:ORG/REPO/FILE"
	Store        string `json:"store"` // StoreOllama, StoreHF or StoreLMStudio
	Root         string `json:"root"`  // the store's directory
	Path         string `json:"path"`  // the file a loader would open ("" when there is none)
	Size         int64  `json:"size"`  // bytes of that file (the model layer's for Ollama)
	Quantization string `json:"quantization,omitempty"`
	Architecture string `json:"architecture,omitempty"`
	// Runnable says that the file is there and its header is a GGUF model's
	// (not a vision projector); its bytes are checked only as DigestState
	// says.
	Runnable bool   `json:"runnable"`
	Why      string `json:"why,omitempty"` // why it cannot run
	// Digest is "sha256:HEX", the digest the store names the file by (see
	// Source.Digest); empty when it names none.
	Digest string `json:"digest,omitempty"`
	// DigestState says whether the file's bytes were checked against
	// Digest: DigestNotVerified until Verify hashes them, then
	// DigestVerified or DigestChanged; DigestNone when the store names no
	// digest. Empty when there is no file to check.
	DigestState string `json:"digest_state,omitempty"`
}

// The states of a store file's bytes against the digest the store names it
// by (Entry.DigestState).
const (
	DigestNotVerified = "not verified" // not hashed: listing reads headers only (Entry.Verify hashes)
	DigestVerified    = "verified"     // hashed now: the bytes are the digest's
	DigestChanged     = "changed"      // hashed now: the bytes are not the digest's (changed or damaged since the store wrote them)
	DigestNone        = "no digest"    // the store names no digest to check against (LM Studio, a file kept in git)
)

// digestEntry sets the digest state of a runnable entry:
// DigestNotVerified when the store names a digest, else DigestNone.
func digestEntry(e Entry) Entry {
	switch {
	case !e.Runnable:
		// no file, or none a command would take: nothing to check
	case e.Digest != "":
		e.DigestState = DigestNotVerified
	default:
		e.DigestState = DigestNone
	}
	return e
}

// Verify hashes the entry's file (once per process and file version, as
// Source.Verify) and sets DigestState to DigestVerified or DigestChanged;
// a changed file is marked not runnable, with the two sums, since a
// command refuses it. An entry whose state is not DigestNotVerified is
// left as it is. The error is a file that cannot be read.
func (e *Entry) Verify() error {
	if e.DigestState != DigestNotVerified {
		return nil
	}
	sum, err := SHA256FileOnce(e.Path)
	if err != nil {
		return fmt.Errorf("%s: %s: %v", e.Name, e.Path, unwrapPath(err))
	}
	if "sha256:"+sum == e.Digest {
		e.DigestState = DigestVerified
		return nil
	}
	e.DigestState, e.Runnable = DigestChanged, false
	e.Why = fmt.Sprintf("the file's bytes changed since the store wrote them: sha256 %s, the store names it %s", sum, e.Digest)
	return nil
}

// IsStoreName reports whether arg names a model of another tool's store by
// its prefix ("ollama:", "hf:", "lmstudio:").
func IsStoreName(arg string) bool {
	store, _, ok := strings.Cut(arg, ":")
	return ok && (store == StoreOllama || store == StoreHF || store == StoreLMStudio)
}

// LookupStore finds the model a store name names ("ollama:NAME[:TAG]",
// "hf:ORG/REPO[@REV][:FILE]", "lmstudio:ORG/REPO[/FILE]") and checks that
// it is one GGUF file that can run. It does not hash the file: Verify does.
// Ollama names match as Ollama matches them, without regard to case, and
// may name a registry host with a port ("localhost:5000/team/tiny:t1").
// The error is one line naming the name and what is wrong: an unknown name
// (with the closest names the store holds), a missing manifest, snapshot or
// blob, a layer that is not GGUF, a name found in two folders of one store,
// an Ollama name that matches two manifests differing only in case (both
// named), an unreadable store.
func LookupStore(arg string) (*Source, error) {
	store, rest, _ := strings.Cut(arg, ":")
	return lookupIn(arg, store, rest)
}

// lookupIn looks name up in store; ref is what the user gave.
func lookupIn(ref, store, name string) (*Source, error) {
	if name == "" {
		return nil, fmt.Errorf("%s: no model name after %q", ref, store+":")
	}
	switch store {
	case StoreOllama:
		return lookupOllama(ref, name)
	case StoreHF:
		return lookupHF(ref, name)
	case StoreLMStudio:
		return lookupLMStudio(ref, name)
	}
	return nil, fmt.Errorf("%s: unknown store %q (known: ollama, hf, lmstudio)", ref, store)
}

// Verify checks the file's bytes against the digest the store names it by
// (nothing to check when Digest is empty). The sha256 is computed once per
// process and file version (SHA256FileOnce), so the run that records it
// next does not read the file again.
func (s *Source) Verify() error {
	if s.Digest == "" {
		return nil
	}
	want := strings.TrimPrefix(s.Digest, "sha256:")
	sum, err := SHA256FileOnce(s.Path)
	if err != nil {
		return fmt.Errorf("%s: %s: %v", s.Ref, s.Path, unwrapPath(err))
	}
	if sum != want {
		return fmt.Errorf("%s: %s has sha256 %s but the store names it %s: the file was changed or damaged since the store wrote it", s.Ref, s.Path, sum, s.Digest)
	}
	return nil
}

// ResolveSource is Resolve that also returns where a model named from
// another tool's store was found (nil for a path or a model of fragility's
// own cache). Besides what Resolve takes, it accepts "ollama:NAME[:TAG]",
// "hf:ORG/REPO[@REV][:FILE]", "lmstudio:ORG/REPO[/FILE]" and a bare Ollama
// name ("qwen3:8b", "user/qwen3:8b", "localhost:5000/user/qwen3:8b", or
// "qwen3" for "qwen3:latest") that is not a file; Ollama names match
// without regard to case, as Ollama matches them (see LookupStore). An Ollama or Hugging Face file is checked against its digest
// here, before anything runs. A bare name that is both a model of
// fragility's cache and one of Ollama's is refused, naming both.
func ResolveSource(arg, kind string) (string, *Source, error) {
	if arg == "" {
		return "", nil, errors.New("empty model name or path")
	}
	if _, err := os.Stat(arg); err == nil {
		return arg, nil, nil
	}
	if IsStoreName(arg) {
		if kind != "" && kind != "llm" {
			return "", nil, fmt.Errorf("%s: the stores of other tools hold LLMs, not an %s", arg, kind)
		}
		store, rest, _ := strings.Cut(arg, ":")
		return lookupVerified(arg, store, rest)
	}
	man, err := Load()
	if err != nil {
		return "", nil, err
	}
	ext := strings.ToLower(filepath.Ext(arg))
	modelExt := ext == ".gguf" || ext == ".onnx" || ext == ".bin"
	// A bare name: no model file extension, and no path separator unless
	// the last element has a tag ("user/qwen3:8b").
	bare := !modelExt && (!strings.ContainsRune(arg, os.PathSeparator) || strings.Contains(filepath.Base(arg), ":"))
	if md, err := man.Find(arg); err == nil {
		if kind != "" && md.Kind != kind {
			return "", nil, fmt.Errorf("model %s is an %s, not an %s", md.Name, md.Kind, kind)
		}
		if md.Kind == "llm" {
			if src, err := lookupIn(arg, StoreOllama, arg); err == nil {
				p, _ := md.Path()
				return "", nil, fmt.Errorf("%s: a name in two stores, fragility's cache (%s) and Ollama's (%s): give ollama:%s for Ollama's, or the path", arg, p, src.Manifest, arg)
			}
		}
		p, err := md.CachedPath()
		return p, nil, err
	}
	notFound := fmt.Errorf("%s: no such file, and no model of that name (%s; `fragility models list`)", arg, knownNames(arg, man.Names()))
	if !bare || (kind != "" && kind != "llm") {
		if !modelExt && !strings.ContainsRune(arg, os.PathSeparator) {
			return "", nil, notFound
		}
		return arg, nil, nil
	}
	if _, err := parseOllamaName(arg); err != nil {
		if strings.ContainsRune(arg, os.PathSeparator) {
			return arg, nil, nil
		}
		return "", nil, notFound
	}
	p, src, err := lookupVerified(arg, StoreOllama, arg)
	var un unknownName
	if err != nil && !strings.Contains(arg, ":") && errors.As(err, &un) {
		if un.noStore {
			return "", nil, notFound
		}
		return "", nil, fmt.Errorf("%s: no such file, and no model of that name (%s; `fragility models list`), nor in Ollama's store: %s", arg, knownNames(arg, man.Names()), strings.TrimPrefix(un.msg, arg+": "))
	}
	return p, src, err
}

// knownNames is "known: a, b, c" for the names of fragility's cache,
// after "did you mean NAME?" when one is near want (suggest.Closest).
func knownNames(want string, names []string) string {
	known := "known: " + strings.Join(names, ", ")
	if s := suggest.DidYouMean(want, "", names); s != "" {
		return s + " " + known
	}
	return known
}

// ResolveSources resolves each of args with ResolveSource (in order; the
// first error is returned) and refuses two of them that name one file: the
// same file once links are followed, such as "tiny" and "ollama:tiny", or
// two Ollama names of one blob (`ollama cp`). The error names the two names
// as given and the file once. sources[i] is nil for a path or a cached
// model.
func ResolveSources(args []string, kind string) (paths []string, sources []*Source, err error) {
	paths = make([]string, len(args))
	sources = make([]*Source, len(args))
	seen := map[string]int{}
	for i, a := range args {
		if paths[i], sources[i], err = ResolveSource(a, kind); err != nil {
			return nil, nil, err
		}
		key := fileKey(paths[i])
		if j, ok := seen[key]; ok {
			return nil, nil, fmt.Errorf("%s and %s name the same file, %s: give it once", args[j], a, paths[i])
		}
		seen[key] = i
	}
	return paths, sources, nil
}

// fileKey is the absolute path of p with links followed (as far as they
// resolve), so that two names of one file have one key.
func fileKey(p string) string {
	if abs, err := filepath.Abs(p); err == nil {
		p = abs
	}
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return p
}

// lookupVerified looks name up in store and checks the file against its
// digest (Source.Verify).
func lookupVerified(ref, store, name string) (string, *Source, error) {
	src, err := lookupIn(ref, store, name)
	if err != nil {
		return "", nil, err
	}
	if err := src.Verify(); err != nil {
		return "", nil, err
	}
	return src.Path, src, nil
}

// errUnknownName marks a lookup that found no model of the name (as opposed
// to a model that cannot run, or a store that cannot be read).
var errUnknownName = errors.New("unknown model name")

// unknownName is the error of a name a store does not hold: the message
// names the closest names it does hold.
type unknownName struct {
	msg     string
	noStore bool // the store's folder is not there at all
}

func (e unknownName) Error() string        { return e.msg }
func (e unknownName) Is(target error) bool { return target == errUnknownName }

// unknown builds the error of a name the store at roots does not hold,
// with up to three of its names closest to want.
func unknown(ref, what string, roots []string, want string, have []string) error {
	where := strings.Join(roots, " nor ")
	if len(have) == 0 {
		return unknownName{msg: fmt.Sprintf("%s: no model %s in %s (it holds none)", ref, what, where)}
	}
	return unknownName{msg: fmt.Sprintf("%s: no model %s in %s (closest: %s; `fragility models list --all`)", ref, what, where, strings.Join(closest(want, have, 3), ", "))}
}

// closest returns up to n of names nearest to want by edit distance
// (case-insensitive), nearest first, ties in name order.
func closest(want string, names []string, n int) []string {
	type cand struct {
		name string
		d    int
	}
	var cs []cand
	seen := map[string]bool{}
	for _, nm := range names {
		if !seen[nm] {
			seen[nm] = true
			cs = append(cs, cand{nm, suggest.Distance(strings.ToLower(want), strings.ToLower(nm))})
		}
	}
	sort.Slice(cs, func(i, j int) bool {
		if cs[i].d != cs[j].d {
			return cs[i].d < cs[j].d
		}
		return cs[i].name < cs[j].name
	})
	var out []string
	for i := 0; i < len(cs) && i < n; i++ {
		out = append(out, cs[i].name)
	}
	return out
}

// storeReadError is the error of a store folder that exists but cannot be
// read (permissions, a file where a folder should be).
func storeReadError(store, root string, err error) error {
	return fmt.Errorf("%s: cannot read %s store: %v", root, storeTitle(store), unwrapPath(err))
}

func storeTitle(store string) string {
	switch store {
	case StoreOllama:
		return "Ollama's"
	case StoreHF:
		return "the Hugging Face hub cache's"
	default:
		return "LM Studio's"
	}
}

// unwrapPath returns the cause of a *fs.PathError (its path is named by the
// caller's message), or err.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// checkGGUFMagic fails unless the file at path starts with the GGUF magic.
func checkGGUFMagic(path string) error {
	fh, err := os.Open(path)
	if err != nil {
		return err
	}
	defer fh.Close()
	var b [4]byte
	if _, err := io.ReadFull(fh, b[:]); err != nil || string(b[:]) != "GGUF" {
		return fmt.Errorf("%s is not a GGUF file (it does not start with the GGUF magic)", path)
	}
	return nil
}

// ggufHeader reads the architecture and quantization type (llama.cpp's
// name: "Q4_K_M", "F16") from a GGUF file's header.
func ggufHeader(path string) (arch, quant string, err error) {
	if err := checkGGUFMagic(path); err != nil {
		return "", "", err
	}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%s: corrupt GGUF header (%v)", path, r)
		}
	}()
	f, err := gguf.ParseGGUFFile(path, gguf.SkipLargeMetadata())
	if err != nil {
		return "", "", fmt.Errorf("%s: corrupt or truncated GGUF: %v", path, err)
	}
	md := f.Metadata()
	// gguf-parser-go names llama.cpp's file types "MOSTLY_Q4_K_M"; llama.cpp
	// and results.csv say "Q4_K_M".
	return md.Architecture, strings.TrimPrefix(md.FileType.String(), "MOSTLY_"), nil
}

// isProjector reports whether a GGUF file is a vision projector (general
// architecture "clip"), kept beside a model in the same folder.
func isProjector(path string) bool {
	arch, _, err := ggufHeader(path)
	return err == nil && arch == "clip"
}

// ggufFiles returns the paths (relative to dir, slash-separated, sorted) of
// the files under dir whose name ends in ".gguf", following links to files.
func ggufFiles(dir string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || !strings.HasSuffix(strings.ToLower(d.Name()), ".gguf") {
			return nil
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		out = append(out, filepath.ToSlash(rel))
		return nil
	})
	sort.Strings(out)
	return out, err
}

// chooseGGUF picks the file want names among files (GGUF paths relative to
// dir): the path itself, the path without ".gguf", a unique base name, or a
// unique base name containing want (case-insensitive: "Q4_K_M"). With want
// empty, the one file that is not a vision projector. ref and usage name
// the model and how to give a file in errors.
func chooseGGUF(ref, dir string, files []string, want, usage string) (string, error) {
	if len(files) == 0 {
		return "", fmt.Errorf("%s: %s holds no GGUF file", ref, dir)
	}
	pick := func(cands []string, how string) (string, bool, error) {
		switch len(cands) {
		case 0:
			return "", false, nil
		case 1:
			return cands[0], true, nil
		}
		return "", true, fmt.Errorf("%s: %s holds %d GGUF files %s (%s): give one as %s", ref, dir, len(cands), how, strings.Join(cands, ", "), usage)
	}
	if want == "" {
		var models []string
		for _, f := range files {
			if !isProjector(filepath.Join(dir, filepath.FromSlash(f))) {
				models = append(models, f)
			}
		}
		if f, ok, err := pick(models, ""); ok || err != nil {
			return f, err
		}
		return "", fmt.Errorf("%s: %s holds only vision projectors (%s), no model", ref, dir, strings.Join(files, ", "))
	}
	var base, sub []string
	for _, f := range files {
		if f == want || f == want+".gguf" {
			return f, nil
		}
		b := filepath.Base(filepath.FromSlash(f))
		if b == want || b == want+".gguf" {
			base = append(base, f)
		}
		if strings.Contains(strings.ToLower(b), strings.ToLower(want)) {
			sub = append(sub, f)
		}
	}
	if f, ok, err := pick(base, "of that name"); ok || err != nil {
		return f, err
	}
	if f, ok, err := pick(sub, "whose name contains "+want); ok || err != nil {
		return f, err
	}
	return "", unknownName{msg: fmt.Sprintf("%s: %s holds no GGUF file %s (it holds: %s)", ref, dir, want, strings.Join(files, ", "))}
}

// stem is a GGUF file's relative path without ".gguf".
func stem(rel string) string {
	if strings.HasSuffix(strings.ToLower(rel), ".gguf") {
		return rel[:len(rel)-len(".gguf")]
	}
	return rel
}

// realFile resolves links to an absolute path and checks that it is a
// regular file; a dangling link or a missing file is reported as missing.
func realFile(p string) (string, os.FileInfo, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", nil, err
	}
	r, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", nil, err
	}
	st, err := os.Stat(r)
	if err != nil {
		return "", nil, err
	}
	if !st.Mode().IsRegular() {
		return "", nil, fmt.Errorf("%s is not a regular file", r)
	}
	return r, st, nil
}

// ListStores returns every model the stores of other tools hold (Ollama's,
// the Hugging Face hub cache, LM Studio's), each with its size, the
// quantization type and architecture from its GGUF header, and whether it
// can run and why not. A store that is not there holds nothing; problems
// lists one line for each store folder that cannot be read.
func ListStores() (entries []Entry, problems []string) {
	for _, f := range []func() ([]Entry, []string){listOllama, listHF, listLMStudio} {
		e, p := f()
		entries = append(entries, e...)
		problems = append(problems, p...)
	}
	return entries, problems
}

// headerEntry fills an entry's size, quantization and architecture from the
// file at path, or marks it not runnable with the reason.
func headerEntry(e Entry, path string) Entry {
	e.Path = path
	r, st, err := realFile(path)
	if err != nil {
		e.Why = fmt.Sprintf("missing file: %v", unwrapPath(err))
		return e
	}
	e.Size = st.Size()
	arch, quant, err := ggufHeader(r)
	if err != nil {
		e.Why = err.Error()
		return e
	}
	e.Architecture, e.Quantization, e.Runnable = arch, quant, true
	if arch == "clip" {
		e.Runnable, e.Why = false, "a vision projector, not a model"
	}
	return e
}

// homeDir is os.UserHomeDir, or "" when there is none.
func homeDir() string {
	h, _ := os.UserHomeDir()
	return h
}

// readableDir reports whether dir exists (false, nil when it does not) and
// an error when it exists but cannot be listed.
func readableDir(dir string) (bool, error) {
	if _, err := os.ReadDir(dir); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return false, nil
		}
		return true, err
	}
	return true, nil
}

// storeMisses collects, over the roots of one store, what a name lookup
// learnt where the name was not found: the first root that could not be
// read, the roots searched and the names they hold (for the "did you mean"
// message).
type storeMisses struct {
	unreadable error
	searched   []string
	have       []string
}

// add records a root of store where the name's path gave err: an
// unreadable root or an error other than not-exist is kept (the first
// one); an existing root is searched and its names listed by list.
func (m *storeMisses) add(store, root string, err error, list func(root string) ([]string, error)) {
	exists, rerr := readableDir(root)
	switch {
	case rerr != nil && m.unreadable == nil:
		m.unreadable = storeReadError(store, root, rerr)
	case !errors.Is(err, fs.ErrNotExist) && m.unreadable == nil:
		m.unreadable = storeReadError(store, root, err)
	case exists:
		m.searched = append(m.searched, root)
		names, _ := list(root)
		m.have = append(m.have, names...)
	}
}
