package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/fragility/fragility/probe"
	"github.com/urfave/cli/v2"
)

func init() {
	register(&cli.Command{
		Name:      "report",
		Usage:     "re-render summary.json and narrative.md of a run from its results.csv, without rerunning",
		ArgsUsage: "RUN_DIR",
		Description: `Reads DIR/results.csv and DIR/manifest.json, recomputes every statistic (the cluster bootstrap
uses the run's resample count and seed, so the numbers are the run's own), rewrites
DIR/summary.json and DIR/narrative.md atomically, and prints the narrative (or the summary
with --json).

Examples:
   fragility report runs/demo
   fragility report --json runs/demo | jq '.models[0].variants'
   fragility report --copy runs/demo`,
		Flags: []cli.Flag{flagJSON, &cli.BoolFlag{Name: "copy", Usage: "also put the narrative on the system clipboard"}},
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return usageError{"expected one RUN_DIR argument"}
			}
			dir := c.Args().First()
			sum, err := probe.Report(dir)
			if err != nil {
				return err
			}
			if c.Bool("json") {
				return printJSON(sum)
			}
			narr, err := os.ReadFile(filepath.Join(dir, probe.FileNarrative))
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
