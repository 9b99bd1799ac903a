package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/fragility/fragility/probe/report"
	"github.com/fragility/fragility/probe/rundir"
	"github.com/fragility/fragility/probe/shard"
	"github.com/urfave/cli/v2"
)

func init() {
	register(&cli.Command{
		Name:      "merge",
		Usage:     "join the shards of a run (fragility run --shard K/N) into one run directory",
		ArgsUsage: "OUT SHARD_DIR...",
		Description: `Checks that the SHARD_DIRs are the finished shards of one plan and writes their merge into OUT,
a run directory like the one the unsharded run would have written: results.csv and traces.jsonl
are byte-identical to the unsharded run's, except the seconds column, which keeps the time each
shard measured. summary.json and narrative.md are computed once over all trials (as fragility
report does), report.html is written from them (--no-html skips it), and manifest.json says
which shards were merged (merged_from). fragility report,
verify and compare --from work on OUT.

Refused, naming the shard and the mismatch (exit 1): a directory that is not a finished shard
(finish it with fragility run --resume DIR); shards of different plans (plan sha256), binaries,
llama.cpp commits, build flags or model files (sha256); a shard given twice or missing; a shard
whose files lack some of its items. Shards whose llama.cpp CPU features, backend or device
differ are refused unless --accept-env-diff, which lists the differences in the manifest.

Examples:
   fragility merge runs/q/merged runs/q/shards/*
   fragility merge --force --quiet runs/q/merged runs/q/shards/1 runs/q/shards/2 runs/q/shards/3
   fragility merge --json runs/q/merged runs/q/shards/* | jq .items`,
		Flags: []cli.Flag{flagJSON,
			&cli.BoolFlag{Name: "force", Usage: "overwrite the run files of an existing OUT"},
			&cli.BoolFlag{Name: "accept-env-diff", Usage: "merge shards whose CPU features, backend or device differ (listed in the manifest)"},
			&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "no narrative on stdout"},
			&cli.BoolFlag{Name: "no-html", Usage: "do not write report.html"},
		},
		Action: mergeAction,
	})
}

func mergeAction(c *cli.Context) error {
	if c.NArg() < 2 {
		return usageError{"expected OUT and at least one SHARD_DIR"}
	}
	args := c.Args().Slice()
	out, dirs := args[0], args[1:]
	res, err := shard.Merge(out, dirs, shard.MergeOptions{Force: c.Bool("force"), AcceptEnvDiff: c.Bool("accept-env-diff"), Log: os.Stderr})
	if err != nil {
		return err
	}
	lock, err := lockRunDir(out)
	if err != nil {
		return err
	}
	defer lock.Unlock()
	if err := report.WriteNarrative(out, res.Summary); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "fragility: merged %d shards (%d items, plan sha256 %.12s) into %s\n", res.Shards, res.Items, res.PlanSHA256, out)
	if !c.Bool("no-html") {
		if err := writeHTMLReport(out); err != nil {
			return fmt.Errorf("%w (the merged run's other files are complete; fragility report --html %s retries the page)", err, out)
		}
	}
	if c.Bool("json") {
		return printJSON(res)
	}
	if !c.Bool("quiet") {
		narr, err := os.ReadFile(filepath.Join(out, rundir.FileNarrative))
		if err != nil {
			return err
		}
		fmt.Print(string(narr))
	}
	if sameFamilyRun(out) {
		fmt.Fprintf(os.Stderr, "fragility: the models are one family: fragility compare --from %s compares their distributions\n", out)
	}
	return nil
}
