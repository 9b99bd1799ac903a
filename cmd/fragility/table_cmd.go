package main

import (
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/fragility/fragility/probe/table"
	"github.com/urfave/cli/v2"
)

func init() {
	register(&cli.Command{
		Name:      "table",
		Usage:     "put runs side by side: one row per model of each run directory (accuracy per variant, paired drop, stability excess, verdict, budget cuts)",
		ArgsUsage: "RUN_DIR...",
		Description: `Reads each RUN_DIR's summary.json and manifest.json (fragility report RUN_DIR writes the summary)
and prints one row per model of each run: the model and its quantization, the frozen protocol the
run followed (its sha256, or none), accuracy per variant, the verdict variant's paired drop with its
interval, the stability excess over the placebo with its interval ("not assessed: reason" otherwise),
the verdict variant's answer-first log-probability shift when the run scored it, the verdict, and the
share of the verdict variant's answers the output budget cut. Nothing is recomputed.

Runs under different protocols are not comparable: the protocol column says which each row followed,
and a line says the rows are not comparable (on stderr with --format csv or json; the JSON has
"comparable": false, the CSV a comparable column). A directory that is not a run directory, or has
no summary.json, is one line naming it (exit 1).

--format text (default) is a table for the terminal; csv and json (--csv, --json) are machine-readable;
html is one self-contained page (nothing loaded from the network) on stdout.

Examples:
   fragility table runs/gemma runs/qwen-q4 runs/qwen-q8
   fragility table --format csv runs/* > runs.csv
   fragility table --format html runs/* > table.html && xdg-open table.html
   fragility table --format json runs/a runs/b | jq '.rows[] | {model, verdict}'`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "format", Value: table.FormatText, Usage: "output format: " + strings.Join(table.Formats, ", ")},
			&cli.BoolFlag{Name: "json", Usage: "the same as --format json (--json means JSON in every command)"},
			&cli.BoolFlag{Name: "csv", Usage: "the same as --format csv"},
		},
		Action: tableAction,
	})
}

func tableAction(c *cli.Context) error {
	if c.NArg() == 0 {
		return usageError{"expected at least one RUN_DIR"}
	}
	format := c.String("format")
	switch {
	case c.Bool("json") && c.Bool("csv"):
		return usageError{"--json and --csv: give one output format"}
	case (c.Bool("json") || c.Bool("csv")) && c.IsSet("format"):
		return usageError{"--format with --json or --csv: give one output format"}
	case c.Bool("json"):
		format = table.FormatJSON
	case c.Bool("csv"):
		format = table.FormatCSV
	}
	if !slices.Contains(table.Formats, format) {
		return usageError{fmt.Sprintf("--format %q: want one of %s", format, strings.Join(table.Formats, ", "))}
	}
	t, err := table.Load(c.Args().Slice())
	if err != nil {
		return err
	}
	if t.Note != "" && (format == table.FormatCSV || format == table.FormatJSON) {
		fmt.Fprintln(os.Stderr, "fragility: "+t.Note)
	}
	return t.Write(os.Stdout, format)
}
