package templates

import (
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
)

//go:embed builtin/*.yaml
var builtinFS embed.FS

// Builtin returns the built-in templates (embedded YAML files in the own
// format), sorted by file name. Their Source is "builtin/<file>".
func Builtin() ([]*Template, error) {
	entries, err := fs.ReadDir(builtinFS, "builtin")
	if err != nil {
		return nil, fmt.Errorf("built-in templates: %w", err)
	}
	var out []*Template
	for _, e := range entries {
		data, err := builtinFS.ReadFile(path.Join("builtin", e.Name()))
		if err != nil {
			return nil, fmt.Errorf("built-in templates: %w", err)
		}
		ts, err := ParseOwn(path.Join("builtin", e.Name()), data)
		if err != nil {
			return nil, err
		}
		out = append(out, ts...)
	}
	return out, uniqueIDs(out)
}

// maxFileSize bounds a template file read by Load.
const maxFileSize = 256 << 20

// Load reads templates from src: "builtin"; a directory (every .yaml, .yml,
// .json and .jsonl file in it, not recursive, in name order); or one file. A
// .yaml/.yml file is in the own format; a .json file is a GSM-Symbolic
// annotated template when it has a "question_annotated" field and the own
// format otherwise; a .jsonl file holds GSM8K rows. Every template is checked
// at its base values; the first problem is returned as an error naming the
// file and line. Template IDs must be unique across everything loaded.
func Load(src string) ([]*Template, error) {
	if src == "builtin" {
		return Builtin()
	}
	st, err := os.Stat(src)
	if err != nil {
		return nil, fmt.Errorf("templates: %w", err)
	}
	if !st.IsDir() {
		ts, err := LoadFile(src)
		if err != nil {
			return nil, err
		}
		return ts, uniqueIDs(ts)
	}
	files, err := templateFiles(src)
	if err != nil {
		return nil, err
	}
	var out []*Template
	for _, f := range files {
		ts, err := LoadFile(f)
		if err != nil {
			return nil, err
		}
		out = append(out, ts...)
	}
	return out, uniqueIDs(out)
}

// templateFiles lists the template files of a directory in name order.
func templateFiles(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("templates: %w", err)
	}
	var files []string
	for _, e := range entries {
		if e.IsDir() || !knownExt(e.Name()) {
			continue
		}
		files = append(files, filepath.Join(dir, e.Name()))
	}
	sort.Strings(files)
	if len(files) == 0 {
		return nil, fmt.Errorf("%s: no template files (.yaml, .yml, .json, .jsonl)", dir)
	}
	return files, nil
}

func knownExt(name string) bool {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".yaml", ".yml", ".json", ".jsonl":
		return true
	}
	return false
}

// LoadFile reads the templates of one file, choosing the parser by extension
// and content as Load describes.
func LoadFile(name string) ([]*Template, error) {
	st, err := os.Stat(name)
	if err != nil {
		return nil, fmt.Errorf("templates: %w", err)
	}
	if st.Size() > maxFileSize {
		return nil, fmt.Errorf("%s: larger than %d MiB", name, maxFileSize>>20)
	}
	data, err := os.ReadFile(name)
	if err != nil {
		return nil, fmt.Errorf("templates: %w", err)
	}
	return ParseFile(name, data)
}

// ParseFile parses data as the template file name (by its extension).
func ParseFile(name string, data []byte) ([]*Template, error) {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".yaml", ".yml":
		return ParseOwn(name, data)
	case ".json":
		var probe map[string]json.RawMessage
		if json.Unmarshal(data, &probe) == nil {
			if _, ok := probe["question_annotated"]; ok {
				return ParseGSMSymbolic(name, data)
			}
		}
		return ParseOwn(name, data)
	case ".jsonl":
		return ParseGSM8K(name, data)
	}
	return nil, fmt.Errorf("%s: unknown template file type (want .yaml, .yml, .json or .jsonl)", name)
}

func uniqueIDs(ts []*Template) error {
	seen := map[string]*Template{}
	for _, t := range ts {
		if p, ok := seen[t.ID]; ok {
			return fmt.Errorf("template ID %q is used twice: %s:%d and %s:%d", t.ID, p.Source, p.Line, t.Source, t.Line)
		}
		seen[t.ID] = t
	}
	return nil
}

// Find returns the template with the given ID.
func Find(ts []*Template, id string) (*Template, error) {
	for _, t := range ts {
		if t.ID == id {
			return t, nil
		}
	}
	return nil, errors.New("no template with ID " + id)
}
