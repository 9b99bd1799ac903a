package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/fragility/fragility/probe/report"
	"github.com/fragility/fragility/probe/rundir"
	"github.com/urfave/cli/v2"
)

func init() {
	register(&cli.Command{
		Name:      "report",
		Usage:     "re-render summary.json and narrative.md (and report.html, when it exists or with --html) of a run from its files, without rerunning",
		ArgsUsage: "RUN_DIR",
		Description: `Reads DIR/results.csv and DIR/manifest.json, recomputes every statistic with this version's
methods (distinct prompts as the unit, CR1 standard errors, cluster-t and bootstrap intervals,
sign-flip tests with Holm's adjustment or the run's --primary variant, minimum detectable drops,
differences between models; the bootstrap uses the run's resample count and seed), rewrites
DIR/summary.json and DIR/narrative.md atomically, and prints the narrative (or the summary with
--json). Any run directory with a results.csv can be re-rendered, older ones included. With
--html it also writes DIR/report.html: one self-contained page (no network access when viewed)
with the narrative, the plots, the quantization comparison when DIR/compare.json exists, and a
filterable table of every trial with its prompt, response and tokens coloured by entropy.

Examples:
   fragility report runs/demo
   fragility report --html runs/demo && xdg-open runs/demo/report.html
   fragility report --json runs/demo | jq '.models[0].variants'
   fragility report --copy runs/demo`,
		Flags: []cli.Flag{flagJSON, &cli.BoolFlag{Name: "copy", Usage: "also put the narrative on the system clipboard"},
			&cli.BoolFlag{Name: "html", Usage: "also write report.html (narrative, plots, trial table) into RUN_DIR"}},
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 || c.Args().First() == "" {
				return usageError{"expected one RUN_DIR argument"}
			}
			dir := c.Args().First()
			// A folder without a manifest is refused before the lock: it
			// gets no lock file.
			if _, err := rundir.ReadManifest(dir); err != nil {
				return err
			}
			lock, err := lockRunDir(dir)
			if err != nil {
				return err
			}
			defer lock.Unlock()
			// report.html is re-rendered below: a directory in its place
			// is refused before summary.json and narrative.md change.
			if err := rundir.CheckNotDirs(filepath.Join(dir, report.FileHTML)); err != nil {
				return err
			}
			sum, err := report.Rewrite(dir)
			if err != nil {
				return err
			}
			// A report.html already there is re-rendered too: it would
			// otherwise show the old numbers beside the new summary.
			if _, err := os.Stat(filepath.Join(dir, report.FileHTML)); c.Bool("html") || err == nil {
				if err := writeHTMLReport(dir); err != nil {
					return err
				}
			}
			if c.Bool("json") {
				return printJSON(sum)
			}
			narr, err := os.ReadFile(filepath.Join(dir, rundir.FileNarrative))
			if err != nil {
				return err
			}
			fmt.Print(string(narr))
			if c.Bool("copy") {
				copyToClipboard(string(narr))
			}
			return nil
		},
	})
}

// writeHTMLReport writes RUN_DIR/report.html from the run's files (the one
// renderer, probe/report, for the report, run and compare commands) and says
// where on stderr.
func writeHTMLReport(dir string) error {
	path, err := report.WriteHTML(dir, report.Options{})
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "fragility: %s written\n", path)
	return nil
}
