package templates

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strconv"

	"github.com/fragility/fragility/internal/readlimit"
)

// The development/test split of templates (Template.Split): instructions,
// prompts and parsers are tuned on dev templates and then frozen
// (protocol.Protocol) before the test templates are run.
const (
	SplitDev  = "dev"
	SplitTest = "test"
	SplitAll  = "all"
	// DevShare is the expected share of templates in SplitDev.
	DevShare = 0.3
)

// ParseSplit checks a split given by a user: dev, test, all or "" (all).
func ParseSplit(s string) (string, error) {
	switch s {
	case "", SplitAll:
		return "", nil
	case SplitDev, SplitTest:
		return s, nil
	}
	return "", fmt.Errorf("unknown split %q (dev, test or all)", s)
}

// Split returns the template's split, SplitDev or SplitTest, from a hash of
// its content: the first 8 bytes of SHA-256("fragility/split/v1|" + ID +
// "|" + the base question), read as a big-endian fraction of 2^64, below
// DevShare is dev. It is stable: it changes only when the template's ID or
// text does, never with the other templates of a set.
func (t *Template) Split() string {
	h := sha256.Sum256([]byte("fragility/split/v1|" + t.ID + "|" + t.BaseQuestion()))
	if float64(binary.BigEndian.Uint64(h[:8]))/(1<<64) < DevShare {
		return SplitDev
	}
	return SplitTest
}

// SourceSHA256 returns the sha256 (hex) of the template source src as Load
// reads it ("builtin", a directory of template files or level folders, or
// one file): over its files in load order, each file's path relative to
// src, its length and its bytes. A changed, added or removed file changes
// it. Several sources (JoinSources) hash as the sha256 of their hashes,
// one per line in order. Errors name the source.
func SourceSHA256(src string, o LoadOptions) (string, error) {
	if srcs := SplitSources(src); len(srcs) > 1 {
		h := sha256.New()
		for _, s := range srcs {
			sum, err := sourceSHA256(s, o)
			if err != nil {
				return "", err
			}
			h.Write([]byte(sum + "\n"))
		}
		return hex.EncodeToString(h.Sum(nil)), nil
	}
	return sourceSHA256(src, o)
}

// sourceSHA256 is SourceSHA256 for one source.
func sourceSHA256(src string, o LoadOptions) (string, error) {
	h := sha256.New()
	add := func(name string, data []byte) {
		h.Write([]byte(name + "\x00" + strconv.Itoa(len(data)) + "\x00"))
		h.Write(data)
	}
	if src == "builtin" {
		entries, err := fs.ReadDir(builtinFS, "builtin")
		if err != nil {
			return "", fmt.Errorf("built-in templates: %w", err)
		}
		for _, e := range entries {
			data, err := builtinFS.ReadFile(path.Join("builtin", e.Name()))
			if err != nil {
				return "", fmt.Errorf("built-in templates: %w", err)
			}
			add(e.Name(), data)
		}
		return hex.EncodeToString(h.Sum(nil)), nil
	}
	st, err := os.Stat(src)
	if err != nil {
		return "", fmt.Errorf("templates %s: %w", src, BarePathError(err))
	}
	files := []string{src}
	if st.IsDir() {
		if files, err = templateFiles(src, o); err != nil {
			return "", err
		}
	}
	for _, f := range files {
		data, err := readlimit.ReadFile(f, maxFileSize)
		if readlimit.IsTooLarge(err) {
			return "", err
		}
		if err != nil {
			return "", fmt.Errorf("templates: %w", err)
		}
		rel, err := filepath.Rel(src, f)
		if err != nil || rel == "." {
			rel = filepath.Base(f)
		}
		add(filepath.ToSlash(rel), data)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
