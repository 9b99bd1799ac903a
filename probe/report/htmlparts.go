package report

import (
	"encoding/base64"
	"fmt"
	"html/template"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/fragility/fragility/probe/rundir"
	"github.com/fragility/fragility/probe/summary"
)

// narrSection is one top-level section of the narrative as the page shows
// it: a folded <details> under its heading (Title), open when it is a
// model's own section; the text before the first section has no Title and
// is shown as it is.
type narrSection struct {
	Title string
	Open  bool
	Body  template.HTML
}

// narrativeSections splits the narrative's Markdown at its second-level
// headings ("## ") and renders each part (markdown). Sections named after a
// model of s (its verdict, accuracies and drops) are open; the rest (what
// the probe tests, the run's method, how the wording is decided) are
// folded, since the page's headline box already answers first.
func narrativeSections(src string, s *summary.Summary) ([]narrSection, error) {
	if strings.TrimSpace(src) == "" {
		return nil, nil
	}
	open := map[string]bool{}
	if s != nil {
		for _, m := range s.Models {
			open[m.Label] = true
		}
	}
	var out []narrSection
	add := func(title, body string) error {
		h, err := markdown(body)
		if err != nil {
			return err
		}
		if title != "" || strings.TrimSpace(body) != "" {
			out = append(out, narrSection{Title: title, Open: open[title], Body: h})
		}
		return nil
	}
	title, lines := "", []string{}
	for _, line := range strings.SplitAfter(src, "\n") {
		if strings.HasPrefix(line, "## ") {
			if err := add(title, strings.Join(lines, "")); err != nil {
				return nil, err
			}
			title, lines = strings.TrimSpace(strings.TrimPrefix(line, "## ")), nil
			continue
		}
		lines = append(lines, line)
	}
	if err := add(title, strings.Join(lines, "")); err != nil {
		return nil, err
	}
	return out, nil
}

// fileB64 returns the bytes of dir/name base64-encoded (standard encoding),
// or "" when the file cannot be read or is larger than max bytes (max > 0).
func fileB64(dir, name string, max int) string {
	if dir == "" {
		return ""
	}
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil || (max > 0 && len(b) > max) {
		return ""
	}
	return base64.StdEncoding.EncodeToString(b)
}

// runFile is one file of the run directory the page links to, with its size
// as text ("228 KB").
type runFile struct{ Name, Size string }

// runFiles lists the regular files of the run directory dir (hidden ones,
// the page itself and the run lock, rundir.FileLock, left out: the lock
// holds no result, and its size would make re-rendered pages differ), by
// name; nil when dir cannot be read.
func runFiles(dir string) []runFile {
	if dir == "" {
		return nil
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []runFile
	for _, e := range ents {
		if !e.Type().IsRegular() || strings.HasPrefix(e.Name(), ".") || e.Name() == FileHTML || e.Name() == rundir.FileLock {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue
		}
		out = append(out, runFile{Name: e.Name(), Size: sizeText(info.Size())})
	}
	slices.SortFunc(out, func(a, b runFile) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// sizeText writes a byte count in B, KB or MB (powers of 1000).
func sizeText(n int64) string {
	switch {
	case n < 1000:
		return fmt.Sprintf("%d B", n)
	case n < 1000_000:
		return fmt.Sprintf("%.0f KB", float64(n)/1000)
	}
	return fmt.Sprintf("%.1f MB", float64(n)/1e6)
}
