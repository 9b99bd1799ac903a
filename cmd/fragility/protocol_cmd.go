package main

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/fragility/fragility/probe"
	"github.com/fragility/fragility/probe/protocol"
	"github.com/fragility/fragility/probe/rundir"
	"github.com/urfave/cli/v2"
)

// flagProtocol is run's frozen protocol file.
var flagProtocol = &cli.StringFlag{Name: "protocol", Usage: "run exactly the frozen protocol in FILE (fragility protocol freeze); a flag that would change it is refused"}

// protocolFlags are the flags a frozen protocol fixes: given with --protocol
// they are wrong usage.
var protocolFlags = []string{"templates", "level", "split", "prompt", "shots", "chat-template", "temperature", "seed", "max-tokens",
	"variants", "instances", "reference", "conditions", "calc-calls", "items", "template-ids", "limit", "primary"}

func init() {
	register(&cli.Command{
		Name:  "protocol",
		Usage: "freeze the test protocol (prompt, scoring rules, sampling, budget, variants, templates) before a test run",
		Description: `Instructions, prompts and parsers are tuned on development templates (--split dev) and then
frozen: once the test is frozen no prompt is chosen by its test scores. "protocol freeze" writes
everything that shapes an answer or its score to one JSON file with its sha256: the prompt preset
with its instruction and worked examples, the chat template, the extraction and error-anatomy
rules, temperature, seed, output budget, variants, instances, reference, the primary variant, conditions, the template
source with the sha256 of its files, the level and the split. "run --protocol FILE" runs exactly
that: a flag that would change it is refused, a template source whose files changed since, an
edited protocol file or a binary that scores otherwise is refused, and the manifest, summary.json
and the narrative show the protocol's sha256.

Examples:
   fragility run --split dev --templates builtin --variants base,noop-seeming --shots 3 --out runs/dev
   fragility protocol freeze --split test --templates builtin --variants base,noop-seeming --shots 3 --max-tokens 192 --out protocol.json
   fragility run --protocol protocol.json --out runs/test`,
		Subcommands: []*cli.Command{{
			Name:  "freeze",
			Usage: "write the protocol the given run flags define to --out FILE",
			Flags: []cli.Flag{flagTemplates, flagTemplateIDs, flagLimit, flagLevel, flagPrompt, flagShots, flagVariants, flagInstances, flagMaxTokens, flagSeed,
				flagReference, flagSplit, flagConditions, flagCalcCalls, flagTemplate, flagPrimary,
				&cli.Float64Flag{Name: "temperature", Value: 0, Usage: "0: greedy; >0: seeded sampling"},
				&cli.StringFlag{Name: "out", Aliases: []string{"o"}, Usage: "protocol file to write (never overwritten without --force)"},
				&cli.BoolFlag{Name: "force", Usage: "overwrite --out"}, flagJSON,
				&cli.IntFlag{Name: "batch", Value: 8, Hidden: true}}, // read by the shared flag checks; not part of a protocol
			Action: protocolFreeze,
		}},
	})
}

// protocolFreeze is `fragility protocol freeze`.
func protocolFreeze(c *cli.Context) error {
	if c.NArg() > 0 {
		return usageError{fmt.Sprintf("protocol freeze takes no arguments, got %q", c.Args().First())}
	}
	out := c.String("out")
	if out == "" {
		return usageError{"--out FILE is required"}
	}
	if err := outNotStdout(c, "protocol freeze writes the protocol to a file (--json prints it too)"); err != nil {
		return err
	}
	if err := outFileNotDir("--out", out); err != nil {
		return err
	}
	if _, err := os.Stat(out); err == nil && !c.Bool("force") {
		return fmt.Errorf("%s already exists: use --force to overwrite it", out)
	}
	cfg := rundir.Config{ChatTemplate: c.String(flagTemplate.Name), Temperature: c.Float64("temperature"), OutDir: os.TempDir()}
	if err := runDefinition(c, &cfg); err != nil {
		return err
	}
	if cfg.Items != "" {
		return usageError{"a protocol freezes a template run, not document questions (--items)"}
	}
	if err := probe.ValidateOptions(&cfg); err != nil {
		return err
	}
	p, err := protocol.FreezeProtocol(cfg)
	if err != nil {
		return err
	}
	data, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return err
	}
	if err := rundir.WriteFileAtomic(out, append(data, '\n')); err != nil {
		return err
	}
	if c.Bool("json") {
		return printJSON(p)
	}
	fmt.Fprintf(os.Stderr, "fragility: protocol %.12s frozen in %s (%s, %s, split %s, templates sha256 %.12s)\n",
		p.SHA256, out, count(len(p.Variants), "variant"), count(p.Instances, "instance"), splitName(p.Split), p.TemplatesSHA256)
	return nil
}

// splitName is a split's name, "all" for "".
func splitName(s string) string {
	if s == "" {
		return "all"
	}
	return s
}

// applyProtocol applies run --protocol FILE to cfg: the flags it fixes are
// wrong usage beside it; a protocol file that cannot be read, was edited,
// or whose templates changed is bad input.
func applyProtocol(c *cli.Context, cfg *rundir.Config) error {
	path := c.String(flagProtocol.Name)
	if path == "" {
		return nil
	}
	for _, f := range protocolFlags {
		if c.IsSet(f) {
			return usageError{fmt.Sprintf("--%s with --protocol %s: the frozen protocol fixes it (freeze another protocol to change it)", f, path)}
		}
	}
	p, err := protocol.ReadProtocol(path)
	if err != nil {
		return fmt.Errorf("--protocol %w", err)
	}
	return p.Apply(cfg, path)
}
