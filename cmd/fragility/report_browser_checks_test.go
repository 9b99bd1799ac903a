package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// checkHeadline checks the box report.html opens with: one verdict block
// per model, each with a row per paired variant, above the narrative and
// the run table and within the first screen.
func checkHeadline(t *testing.T, ctx context.Context, models int) {
	t.Helper()
	var h struct {
		Blocks    int     `json:"blocks"`
		Rows      int     `json:"rows"`
		Verdicts  int     `json:"verdicts"`
		Top       float64 `json:"top"`
		Narrative float64 `json:"narrative"`
		Run       float64 `json:"run"`
		Cut       int     `json:"cut"`
	}
	if err := chromedp.Run(ctx, chromedp.Evaluate(`(() => {
		const top = id => document.getElementById(id).getBoundingClientRect().top + window.scrollY;
		const box = document.getElementById("headline");
		return {blocks: box.querySelectorAll(".model-verdict").length, rows: box.querySelectorAll(".headline-table tbody tr").length,
			verdicts: Array.from(box.querySelectorAll(".verdict")).filter(v => v.textContent.trim() !== "").length,
			top: top("headline"), narrative: top("narrative"), run: top("run"),
			cut: Array.from(box.querySelectorAll(".headline-table td:last-child")).filter(td => / → /.test(td.textContent)).length};
	})()`, &h)); err != nil {
		t.Fatal(err)
	}
	if h.Blocks != models || h.Verdicts != models || h.Rows < models || h.Cut != h.Rows {
		t.Errorf("headline box: %+v, want %d verdict blocks each with its variants' rows and cut shares", h, models)
	}
	if !(h.Top < h.Narrative && h.Narrative < h.Run) || h.Top > 400 {
		t.Errorf("headline box at %.0f px, narrative at %.0f, run table at %.0f: the box must come first, on the first screen", h.Top, h.Narrative, h.Run)
	}
}

// checkCopy clicks Copy narrative twice, once through the clipboard API and
// once with the API refusing (the page's textarea fallback), and checks
// that the clipboard then holds narrative.md.
func checkCopy(t *testing.T, ctx context.Context, run string) {
	t.Helper()
	want, err := os.ReadFile(filepath.Join(run, "narrative.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"clipboard-read", "clipboard-write"} {
		if err := chromedp.Run(ctx, browser.SetPermission(&browser.PermissionDescriptor{Name: name}, browser.PermissionSettingGranted)); err != nil {
			t.Fatalf("granting %s: %v", name, err)
		}
	}
	for _, way := range []string{"clipboard API", "textarea fallback"} {
		setup := `navigator.clipboard.writeText("(cleared)")`
		if way == "textarea fallback" {
			setup = `navigator.clipboard.writeText("(cleared)").then(() => { navigator.clipboard.writeText = () => Promise.reject(new Error("refused")); })`
		}
		var got string
		if err := chromedp.Run(ctx,
			chromedp.Evaluate(setup, nil, awaitPromise),
			chromedp.Click("#copy-narrative", chromedp.ByQuery),
			chromedp.Poll(`document.getElementById("action-status").textContent.includes("copied")`, nil, chromedp.WithPollingTimeout(10*time.Second)),
			chromedp.Evaluate(`navigator.clipboard.readText()`, &got, awaitPromise),
			chromedp.Evaluate(`document.getElementById("action-status").textContent = ""`, nil),
		); err != nil {
			t.Fatalf("Copy narrative (%s): %v", way, err)
		}
		if got != string(want) {
			t.Errorf("Copy narrative (%s): the clipboard holds %d bytes, narrative.md has %d", way, len(got), len(want))
		}
	}
}

// awaitPromise makes chromedp.Evaluate wait for a returned promise.
func awaitPromise(p *runtime.EvaluateParams) *runtime.EvaluateParams { return p.WithAwaitPromise(true) }

// checkExport clicks Export CSV with downloads going to a temporary
// directory and checks that the file saved is results.csv byte for byte.
func checkExport(t *testing.T, ctx context.Context, run string) {
	t.Helper()
	want, err := os.ReadFile(filepath.Join(run, "results.csv"))
	if err != nil {
		t.Fatal(err)
	}
	dl := t.TempDir()
	if err := chromedp.Run(ctx,
		browser.SetDownloadBehavior(browser.SetDownloadBehaviorBehaviorAllow).WithDownloadPath(dl),
		chromedp.Click("#export-csv", chromedp.ByQuery),
	); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dl, "results.csv")
	var got []byte
	for end := time.Now().Add(15 * time.Second); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		if got, err = os.ReadFile(path); err == nil && len(got) == len(want) {
			break
		}
	}
	if !bytes.Equal(got, want) {
		t.Errorf("Export CSV saved %d bytes (%v), results.csv has %d: not byte for byte", len(got), err, len(want))
	}
}

// checkSorting clicks the trial table's answer-entropy header and checks
// the rows ascend, then descend after a second click, and that the header
// says so; the column must hold two different values at least, so that the
// order is a test.
func checkSorting(t *testing.T, ctx context.Context) {
	t.Helper()
	col := func() (vals []float64, sort string) {
		var r struct {
			Vals []string `json:"vals"`
			Sort string   `json:"sort"`
		}
		if err := chromedp.Run(ctx, chromedp.Evaluate(`(() => {
			const ths = Array.from(document.querySelectorAll("#trial-table thead th")), i = ths.findIndex(th => th.textContent === "answer H, bits");
			return {vals: Array.from(document.querySelectorAll("#trial-table tbody tr.row")).map(tr => tr.children[i].textContent),
				sort: ths[i].getAttribute("aria-sort") || ""};
		})()`, &r)); err != nil {
			t.Fatal(err)
		}
		for _, v := range r.Vals {
			n, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatalf("answer entropy cell %q", v)
			}
			vals = append(vals, n)
		}
		return vals, r.Sort
	}
	click := chromedp.Evaluate(`Array.from(document.querySelectorAll("#trial-table thead th")).find(th => th.textContent === "answer H, bits").click()`, nil)
	if err := chromedp.Run(ctx, click); err != nil {
		t.Fatal(err)
	}
	up, s := col()
	if len(slices.Compact(slices.Clone(up))) < 2 {
		t.Fatalf("the answer entropies of the run are all equal (%v): sorting cannot be checked", up)
	}
	if !slices.IsSorted(up) || s != "ascending" {
		t.Errorf("after one click on answer H: %v (aria-sort %q), want ascending", up, s)
	}
	if err := chromedp.Run(ctx, click); err != nil {
		t.Fatal(err)
	}
	down, s := col()
	slices.Reverse(down)
	if !slices.IsSorted(down) || s != "descending" || len(down) != len(up) {
		t.Errorf("after two clicks on answer H: %v (aria-sort %q), want descending", down, s)
	}
}

// checkDiff opens the first noop trial and checks that its question is shown
// against its reference's with the added clause highlighted.
func checkDiff(t *testing.T, ctx context.Context) {
	t.Helper()
	var d struct {
		Ins  int    `json:"ins"`
		Head string `json:"head"`
	}
	if err := chromedp.Run(ctx, chromedp.Evaluate(`(() => {
		const row = Array.from(document.querySelectorAll("#trial-table tbody tr.row")).find(tr => tr.children[2].textContent === "noop");
		if (!row) return {ins: -1, head: ""};
		row.click();
		const det = row.nextElementSibling;
		return {ins: det.querySelectorAll("p.diff ins").length, head: (det.querySelector("h4") || {textContent: ""}).textContent};
	})()`, &d)); err != nil {
		t.Fatal(err)
	}
	if d.Ins < 1 || !strings.Contains(d.Head, "against its reference") {
		t.Errorf("noop trial's detail: %d highlighted insertions, first heading %q; want the added clause highlighted against the reference", d.Ins, d.Head)
	}
}
