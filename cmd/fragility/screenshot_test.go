package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestReportScreenshot writes the first screen of a finished run's
// report.html, as headless Chromium shows it in a 1280 × 900 window, to a
// PNG: the README's figure of the demo (make demo-figure). It runs only
// when FRAGILITY_SCREENSHOT_RUN names the run directory and
// FRAGILITY_SCREENSHOT_OUT the PNG to write; it fails when the page does
// not load or the PNG is implausibly small.
func TestReportScreenshot(t *testing.T) {
	run, out := os.Getenv("FRAGILITY_SCREENSHOT_RUN"), os.Getenv("FRAGILITY_SCREENSHOT_OUT")
	if run == "" || out == "" {
		t.Skip("FRAGILITY_SCREENSHOT_RUN and FRAGILITY_SCREENSHOT_OUT not set (make demo-figure sets them)")
	}
	chrome, ok := chromiumPath()
	if !ok {
		t.Fatal("no Chromium on PATH: as root, apt-get update && apt-get install -y chromium")
	}
	page, err := filepath.Abs(filepath.Join(run, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(page); err != nil {
		t.Fatalf("%s: %v (a finished run writes it)", run, err)
	}
	ctx, cancel := chromiumContext(t, chrome, 900)
	defer cancel()
	var png []byte
	if err := chromedp.Run(ctx, chromedp.Navigate("file://"+page), chromedp.WaitReady("body", chromedp.ByQuery),
		chromedp.CaptureScreenshot(&png)); err != nil {
		t.Fatal(err)
	}
	if len(png) < 10_000 {
		t.Fatalf("screenshot of %s is only %d bytes", page, len(png))
	}
	if err := os.WriteFile(out, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: %d bytes", out, len(png))
}
