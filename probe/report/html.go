package report

import (
	"bytes"
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"path/filepath"
	"strings"

	"github.com/fragility/fragility/probe/rundir"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/text"
)

//go:embed assets/page.html
var pageHTML string

//go:embed assets/report.css
var reportCSS string

//go:embed assets/report.js
var reportJS string

//go:embed assets/actions.js
var actionsJS string

var pageTemplate = template.Must(template.New("page").Parse(pageHTML))

// Options tune the page.
type Options struct {
	// MaxDetailTokens is the most generated tokens, over all trials, whose
	// entropies the trial table colours (0: DefaultMaxDetailTokens). It keeps
	// the page of a large run to a size a browser opens quickly; trials
	// beyond it show their prompt and response without token colouring.
	MaxDetailTokens int
	// MaxEmbedBytes is the largest results.csv the page embeds for its
	// Export CSV button (0: DefaultMaxEmbedBytes); a larger one is linked
	// beside the page instead, so the page of a large run stays small.
	MaxEmbedBytes int
}

// DefaultMaxEmbedBytes is the default of Options.MaxEmbedBytes: 2 MiB.
const DefaultMaxEmbedBytes = 2 << 20

// page is what the template renders.
type page struct {
	Title     string
	Dir       string
	Headlines []headline
	Facts     []fact
	Models    []modelFact
	Narrative []narrSection
	// NarrativeB64 and CSVB64 are narrative.md and results.csv, byte for
	// byte, base64-encoded, for the Copy and Export CSV buttons ("" when
	// the file is absent).
	NarrativeB64, CSVB64 string
	Files                []runFile
	Figures              []Figure
	Compare              *compareTable
	Table                tableData
	CSS                  template.CSS
	JS                   template.JS
	Version              string
}

type fact struct{ Name, Value string }

type modelFact struct {
	Label, Path, Quantization, SHA256, Verdict, Worst string
	Trials, Skipped                                   int
}

// Render writes the HTML report of r to w.
func Render(w io.Writer, r *Run, opt Options) error {
	if opt.MaxDetailTokens <= 0 {
		opt.MaxDetailTokens = DefaultMaxDetailTokens
	}
	if opt.MaxEmbedBytes <= 0 {
		opt.MaxEmbedBytes = DefaultMaxEmbedBytes
	}
	v := newView(r)
	figs, err := v.figures()
	if err != nil {
		return err
	}
	narr, err := narrativeSections(r.Narrative, r.Summary)
	if err != nil {
		return fmt.Errorf("%s: %w", rundir.FileNarrative, err)
	}
	p := page{
		Title:     "fragility report: " + filepath.Base(filepath.Clean(r.Dir)),
		Dir:       r.Dir,
		Headlines: headlines(r.Summary),
		Facts:     facts(r),
		Models:    modelFacts(r),
		Narrative: narr,
		Figures:   figs,
		Compare:   newCompareTable(r),
		Table:     v.buildTable(opt.MaxDetailTokens),
		CSS:       template.CSS(reportCSS),
		JS:        template.JS(reportJS + "\n" + actionsJS),
	}
	if r.Manifest != nil {
		p.Version = r.Manifest.Tool["version"]
	}
	p.NarrativeB64, p.CSVB64 = fileB64(r.Dir, rundir.FileNarrative, 0), fileB64(r.Dir, rundir.FileResults, opt.MaxEmbedBytes)
	p.Files = runFiles(r.Dir)
	var b bytes.Buffer
	if err := pageTemplate.Execute(&b, p); err != nil {
		return err
	}
	_, err = w.Write(b.Bytes())
	return err
}

// WriteHTML reads the run directory dir and writes its report to
// dir/report.html through a temporary file renamed into place, so a reader
// never sees half a page. It returns the path written.
func WriteHTML(dir string, opt Options) (string, error) {
	r, err := Load(dir)
	if err != nil {
		return "", err
	}
	var b bytes.Buffer
	if err := Render(&b, r, opt); err != nil {
		return "", fmt.Errorf("%s: %w", dir, err)
	}
	path := filepath.Join(dir, FileHTML)
	if err := rundir.WriteFileAtomic(path, b.Bytes()); err != nil {
		return "", err
	}
	return path, nil
}

// markdown renders the narrative (GitHub-flavoured tables, no raw HTML) with
// every heading one level down, under the page's own title.
func markdown(src string) (template.HTML, error) {
	if strings.TrimSpace(src) == "" {
		return "", nil
	}
	md := goldmark.New(goldmark.WithExtensions(extension.Table))
	doc := md.Parser().Parse(text.NewReader([]byte(src)))
	ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if h, ok := n.(*ast.Heading); ok && entering {
			h.Level = min(h.Level+1, 6)
		}
		return ast.WalkContinue, nil
	})
	var b bytes.Buffer
	if err := md.Renderer().Render(&b, []byte(src), doc); err != nil {
		return "", err
	}
	return template.HTML(b.String()), nil
}

// facts lists what defines the run, from the manifest and the summary.
func facts(r *Run) []fact {
	var out []fact
	add := func(name, value string) {
		if value != "" {
			out = append(out, fact{name, value})
		}
	}
	s := r.Summary
	add("trials", fmt.Sprintf("%d (%d skipped), %d templates, variants %s", s.Trials, s.Skipped, len(s.Templates), strings.Join(s.Variants, ", ")))
	if m := r.Manifest; m != nil {
		c := m.Config
		add("status", strings.TrimSpace(m.Status+" "+m.Started+" → "+m.Finished))
		add("templates", c.Templates)
		add("design", fmt.Sprintf("%d %s per template and variant, seed %d, %d worked %s, at most %d tokens", c.Instances, plural(c.Instances, "instances", "instance"), c.Seed, c.Shots, plural(c.Shots, "examples", "example"), c.MaxTokens))
		add("decoding", m.Sampler)
		add("batching", fmt.Sprintf("%d sequences per batch", c.Params.NSeq))
		add("llama.cpp", m.LlamaCommit)
		add("build", m.BuildFlags)
		if m.Embedder != nil {
			add("embedder (DDC)", fmt.Sprintf("%s, %s level", m.Embedder.Name, m.Embedder.Level))
		}
		add("extraction rules", m.ExtractionRules)
	}
	return out
}

// modelFacts lists the models with their file identity and verdict.
func modelFacts(r *Run) []modelFact {
	var out []modelFact
	for _, m := range r.Summary.Models {
		mf := modelFact{Label: m.Label, Path: m.Path, Quantization: m.Quantization, Trials: m.Trials, Skipped: m.Skipped}
		mf.Verdict, mf.Worst = verdictOf(r.Summary, m.Label)
		if r.Manifest != nil {
			for _, e := range r.Manifest.Models {
				if e.Path == m.Path {
					mf.SHA256 = e.SHA256
				}
			}
		}
		out = append(out, mf)
	}
	return out
}
