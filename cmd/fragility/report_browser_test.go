package main

import (
	"context"
	"encoding/csv"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/fragility/fragility/models"
	"github.com/fragility/fragility/templates"
)

// chromiumPath returns the headless browser the report test drives: Debian's
// chromium (make test installs it), else another Chromium build on PATH.
func chromiumPath() (string, bool) {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "headless-shell"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, true
		}
	}
	return "", false
}

// TestReportInChromium makes a small real run with the tiny model and a Q4_0
// quantization of it (so the run also compares the two files), lets
// `fragility run` write report.html, opens it from disk in headless
// Chromium and checks that it loads with no console error and no request but
// the file itself, that every plot is drawn with a caption, that the trial
// filters and the detail view work, that the headline box comes first,
// that Copy narrative puts narrative.md on the clipboard (clipboard API and
// its fallback), that Export CSV saves results.csv byte for byte and that
// the trial table sorts, and writes a screenshot to the test's temporary
// directory. Without Chromium it skips, except under CI=true, where it
// fails.
func TestReportInChromium(t *testing.T) {
	chrome, ok := chromiumPath()
	if !ok && os.Getenv("CI") == "true" {
		t.Fatal("CI=true and no Chromium on PATH: the browser test of report.html cannot run (make test installs Debian's chromium as root: apt-get update && apt-get install -y chromium)")
	}
	if !ok {
		t.Skip("no Chromium on PATH: install Debian's chromium (as root: apt-get update && apt-get install -y chromium; make test does this) to run the browser test of report.html")
	}
	tok, err := models.DefaultPath("embedder")
	if err != nil {
		t.Skipf("default embedder not in the cache (make models fetches it): %v", err)
	}
	tok = filepath.Join(tok, "tokenizer.json")
	dir := t.TempDir()
	tiny, q4 := filepath.Join(dir, "tiny.gguf"), filepath.Join(dir, "tiny-q4_0.gguf")
	out := filepath.Join(dir, "run")
	tdir := smallTemplateSet(t, filepath.Join(dir, "templates"))
	for _, args := range [][]string{
		{"tiny-model", "--seed", "3", "--tokenizer", tok, tiny},
		{"quantize", "--type", "Q4_0", "--allow-requantize", tiny, q4},
		{"run", "--quiet", "--model", tiny, "--model", q4, "--templates", tdir, "--variants", "base,symbolic,noop", "--instances", "1",
			"--max-tokens", "24", "--seed", "5", "--out", out},
	} {
		if r := fragility(t, nil, args...); r.code != 0 {
			t.Fatalf("fragility %s: exit %d\n%s", strings.Join(args, " "), r.code, r.stderr)
		}
	}
	page := filepath.Join(out, "report.html")
	st, err := os.Stat(page)
	if err != nil {
		t.Fatalf("fragility run wrote no report.html: %v", err)
	}
	t.Logf("report.html: %d bytes", st.Size())
	trials := readTrialsCSV(t, filepath.Join(out, "results.csv"))

	ctx, cancel := chromiumContext(t, chrome, 1000)
	defer cancel()

	var mu sync.Mutex
	var problems, requests []string
	chromedp.ListenTarget(ctx, func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		switch ev := ev.(type) {
		case *runtime.EventConsoleAPICalled:
			if ev.Type == runtime.APITypeError || ev.Type == runtime.APITypeAssert {
				var args []string
				for _, a := range ev.Args {
					args = append(args, string(a.Value)+a.Description)
				}
				problems = append(problems, "console."+string(ev.Type)+": "+strings.Join(args, " "))
			}
		case *runtime.EventExceptionThrown:
			problems = append(problems, "exception: "+ev.ExceptionDetails.Error())
		case *cdplog.EventEntryAdded:
			if ev.Entry.Level == cdplog.LevelError {
				problems = append(problems, "log: "+ev.Entry.Text+" "+ev.Entry.URL)
			}
		case *network.EventRequestWillBeSent:
			requests = append(requests, ev.Request.URL)
		}
	})

	url := "file://" + page
	if err := chromedp.Run(ctx,
		network.Enable(), cdplog.Enable(), runtime.Enable(),
		chromedp.Navigate(url),
		chromedp.WaitReady("#trial-table tbody tr.row", chromedp.ByQuery),
	); err != nil {
		t.Fatalf("loading %s in %s: %v", url, chrome, err)
	}

	// Every plot: an SVG with drawn shapes and text, a visible size and a
	// caption.
	type fig struct {
		ID      string  `json:"id"`
		Shapes  int     `json:"shapes"`
		Texts   int     `json:"texts"`
		W       float64 `json:"w"`
		H       float64 `json:"h"`
		Caption string  `json:"caption"`
	}
	var figs []fig
	var notes []string
	if err := chromedp.Run(ctx,
		chromedp.Evaluate(`Array.from(document.querySelectorAll("figure.plot")).map(f => {
			const s = f.querySelector("svg"), r = s ? s.getBoundingClientRect() : {width: 0, height: 0};
			return {id: f.id, shapes: s ? s.querySelectorAll("path, rect, circle, line, polyline, polygon").length : 0,
				texts: s ? s.querySelectorAll("text").length : 0, w: r.width, h: r.height,
				caption: (f.querySelector("figcaption") || {textContent: ""}).textContent};
		})`, &figs),
		chromedp.Evaluate(`Array.from(document.querySelectorAll("figure.plot-note")).map(f => f.id + ": " + f.textContent)`, &notes),
	); err != nil {
		t.Fatal(err)
	}
	if len(notes) > 0 {
		t.Errorf("figures without a plot: %q", notes)
	}
	want := []string{"fig-accuracy", "fig-flips", "fig-drop", "fig-errors", "fig-templates", "fig-answer-entropy",
		"fig-position-entropy", "fig-ddc", "fig-difficulty", "fig-compare"}
	var got []string
	for _, f := range figs {
		got = append(got, f.ID)
		if f.Shapes < 5 || f.Texts < 3 || f.W < 200 || f.H < 100 {
			t.Errorf("%s: plot looks empty: %d shapes, %d texts, %.0f×%.0f px", f.ID, f.Shapes, f.Texts, f.W, f.H)
		}
		if len(f.Caption) < 80 {
			t.Errorf("%s: caption too short: %q", f.ID, f.Caption)
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("plots = %v, want %v", got, want)
	}
	for _, id := range []string{"fig-accuracy", "fig-drop"} {
		for _, f := range figs {
			if f.ID == id && !strings.Contains(f.Caption, "95% interval") {
				t.Errorf("%s: caption does not name the 95%% interval: %q", id, f.Caption)
			}
		}
	}

	// The table holds every trial; the filters narrow it.
	rows := func() int {
		var n int
		if err := chromedp.Run(ctx, chromedp.Evaluate(`document.querySelectorAll("#trial-table tbody tr.row").length`, &n)); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := rows(); n != len(trials) {
		t.Errorf("trial table: %d rows, results.csv has %d trials", n, len(trials))
	}
	selectOption := func(id, text string) {
		t.Helper()
		var value string
		if err := chromedp.Run(ctx, chromedp.Evaluate(fmt.Sprintf(
			`(Array.from(document.querySelectorAll("#%s option")).find(o => o.textContent === %q) || {value: "missing"}).value`, id, text), &value)); err != nil {
			t.Fatal(err)
		}
		if value == "missing" {
			t.Fatalf("filter %s has no option %q", id, text)
		}
		// Select it as a user does: set the value and fire the change event.
		if err := chromedp.Run(ctx,
			chromedp.SetValue("#"+id, value, chromedp.ByQuery),
			chromedp.Evaluate(fmt.Sprintf(`document.getElementById(%q).dispatchEvent(new Event("change"))`, id), nil),
		); err != nil {
			t.Fatal(err)
		}
	}
	count := func(keep func(r map[string]string) bool) int {
		n := 0
		for _, r := range trials {
			if keep(r) {
				n++
			}
		}
		return n
	}
	selectOption("f-variant", "noop")
	if n, w := rows(), count(func(r map[string]string) bool { return r["variant"] == "noop" }); n != w || n == 0 {
		t.Errorf("variant filter noop: %d rows, want %d", n, w)
	}
	selectOption("f-correct", "wrong")
	if n, w := rows(), count(func(r map[string]string) bool {
		return r["variant"] == "noop" && r["correct"] == "false" && r["skip_reason"] == ""
	}); n != w {
		t.Errorf("variant noop and outcome wrong: %d rows, want %d", n, w)
	}
	selectOption("f-correct", "all")
	selectOption("f-variant", "all")
	selectOption("f-cut", "cut")
	if n, w := rows(), count(func(r map[string]string) bool { return r["stop_reason"] == "max_tokens" }); n != w {
		t.Errorf("budget filter cut: %d rows, want %d", n, w)
	}
	selectOption("f-cut", "not cut")
	if n, w := rows(), count(func(r map[string]string) bool { return r["stop_reason"] != "max_tokens" }); n != w {
		t.Errorf("budget filter not cut: %d rows, want %d", n, w)
	}
	selectOption("f-cut", "all")
	tmpl := trials[0]["template"]
	selectOption("f-template", tmpl)
	if n, w := rows(), count(func(r map[string]string) bool { return r["template"] == tmpl }); n != w || n == 0 {
		t.Errorf("template filter %s: %d rows, want %d", tmpl, n, w)
	}

	// A click opens the trial: prompt, response and its tokens coloured by
	// entropy.
	var detail struct {
		Pre    int    `json:"pre"`
		Tokens int    `json:"tokens"`
		Title  string `json:"title"`
		BG     string `json:"bg"`
	}
	if err := chromedp.Run(ctx,
		chromedp.Click("#trial-table tbody tr.row", chromedp.ByQuery, chromedp.NodeVisible),
		chromedp.WaitVisible("#trial-table tr.detail", chromedp.ByQuery),
		chromedp.Evaluate(`(() => { const d = document.querySelector("#trial-table tr.detail"), t = d.querySelector(".tok");
			return {pre: d.querySelectorAll("pre").length, tokens: d.querySelectorAll(".tok").length,
				title: t ? t.title : "", bg: t ? getComputedStyle(t).backgroundColor : ""}; })()`, &detail),
	); err != nil {
		t.Fatal(err)
	}
	if detail.Pre < 2 || detail.Tokens == 0 || !strings.Contains(detail.Title, "bits") || detail.BG == "" {
		t.Errorf("detail view of the first trial: %+v", detail)
	}

	// The tokens the page outlines as the answer are the ones results.csv's
	// answer entropy is the mean of (to the page's 0.01-bit rounding).
	var spans [][]any
	if err := chromedp.Run(ctx, chromedp.Evaluate(`JSON.parse(document.getElementById("trial-data").textContent).rows
		.filter(r => r.k && r.c !== -1 && r.w[1] > r.w[0])
		.map(r => { const xs = r.b.slice(r.w[0], r.w[1]); return [r.id, xs.reduce((a, b) => a + b, 0) / xs.length / 100, r.h]; })`, &spans)); err != nil {
		t.Fatal(err)
	}
	for _, s := range spans {
		if m, h := s[1].(float64), s[2].(float64); math.Abs(m-h) > 0.006 {
			t.Errorf("%v: mean entropy of the outlined answer tokens %.4f, results.csv %.4f", s[0], m, h)
		}
	}
	t.Logf("%d trials with an extracted answer: outlined tokens match results.csv's answer entropy", len(spans))

	// The page answers first; its buttons copy narrative.md and save
	// results.csv byte for byte; its columns sort.
	checkHeadline(t, ctx, 2)
	checkCopy(t, ctx, out)
	checkExport(t, ctx, out)
	checkSorting(t, ctx)
	checkDiff(t, ctx)

	var png []byte
	if err := chromedp.Run(ctx, chromedp.FullScreenshot(&png, 100)); err != nil {
		t.Fatal(err)
	}
	shot := filepath.Join(t.TempDir(), "report.png")
	if err := os.WriteFile(shot, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s (%d bytes)", shot, len(png))
	if len(png) < 10_000 {
		t.Errorf("screenshot is only %d bytes", len(png))
	}

	mu.Lock()
	defer mu.Unlock()
	if len(problems) > 0 {
		t.Errorf("console errors or exceptions:\n%s", strings.Join(problems, "\n"))
	}
	for _, u := range requests {
		if u != url && !strings.HasPrefix(u, "blob:") { // blob: is the exported CSV, made in the page
			t.Errorf("request other than the page itself: %s", u)
		}
	}
	if !slices.Contains(requests, url) {
		t.Errorf("the page's own request was not seen (requests: %q)", requests)
	}
}

// readTrialsCSV reads results.csv as maps from column name to value.
// chromiumContext starts headless Chromium at chrome in a 1280 × height
// window with a throw-away profile and no network chatter, and returns a
// chromedp context bounded to 90 s and the function that stops it.
func chromiumContext(t *testing.T, chrome string, height int) (context.Context, context.CancelFunc) {
	allocOpts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chrome),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, height),
	}
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), allocOpts...)
	ctx, cancelB := chromedp.NewContext(actx)
	ctx, cancelT := context.WithTimeout(ctx, 90*time.Second)
	return ctx, func() { cancelT(); cancelB(); cancelA() }
}

func readTrialsCSV(t *testing.T, path string) []map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	var out []map[string]string
	for _, rec := range recs[1:] {
		m := map[string]string{}
		for i, h := range recs[0] {
			m[h] = rec[i]
		}
		out = append(out, m)
	}
	if len(out) == 0 {
		t.Fatalf("%s: no trials", path)
	}
	return out
}

// smallTemplateSet copies six built-in templates into dir, so that the test's
// cost does not grow with the library: the first of each step count (in ID
// order, so the difficulty plot has groups), then the next ones in ID order.
func smallTemplateSet(t *testing.T, dir string) string {
	t.Helper()
	ts, err := templates.Load("builtin")
	if err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(ts, func(a, b *templates.Template) int { return strings.Compare(a.ID, b.ID) })
	var pick []*templates.Template
	steps := map[int]bool{}
	for _, tp := range ts {
		if !steps[tp.Steps] && len(steps) < 3 {
			steps[tp.Steps] = true
			pick = append(pick, tp)
		}
	}
	for _, tp := range ts {
		if len(pick) >= 6 {
			break
		}
		if !slices.ContainsFunc(pick, func(p *templates.Template) bool { return p.ID == tp.ID }) {
			pick = append(pick, tp)
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tp := range pick {
		name := filepath.Base(tp.Source)
		b, err := os.ReadFile(filepath.Join("..", "..", "templates", "builtin", name))
		if err != nil {
			t.Fatalf("template %s: %v", tp.ID, err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}
