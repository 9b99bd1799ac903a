package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/fragility/fragility/probe"
	"github.com/fragility/fragility/templates"
	"github.com/urfave/cli/v2"
)

// The sizing part of `fragility plan` (issue 20): items, tokens, memory and
// wall time per shard of the run that the same flags would start. The power
// part (how many templates a drop needs) is the statistics issue's; the two
// are to be one command.
func init() {
	register(&cli.Command{
		Name:  "plan",
		Usage: "size a run before submitting it: items, batches, tokens, memory and wall time per shard",
		Description: `Plans the run that fragility run would start with the same flags (models, templates, variants,
instances, seed, --batch, --max-tokens, --n-ctx) and splits it into --shards shards as
run --shard K/N does, without loading a model: per shard its batches, items, the models it
loads, the generated tokens (at most items × --max-tokens; expected items × the mean tokens
per item of a previous run given with --from), the memory a model needs (gguf-parser-go's
estimate from the GGUF header: weights, KV cache, compute buffers) and, given a measured
generation rate, the expected generation time.

The rate, in generated tokens per second: --tokens-per-second; or --bench FILE, the JSON of
fragility bench --json on the target machine ((b) scaled by (c)'s batching speed-up when the
bench batched as many items as --batch); or --from RUN_DIR, a previous run on the target
machine (its generated tokens over its generation seconds). Model loading and the DDC
classifier are not counted.

Examples:
   fragility plan --model m-Q4_K_M.gguf --variants base,symbolic,noop --instances 10 --shards 8
   fragility plan --model m.gguf --instances 10 --batch 8 --shards 4 --from runs/pilot
   fragility plan --model m.gguf --instances 10 --shards 4 --bench bench.json --json`,
		Flags: []cli.Flag{flagJSON, flagSeed, flagNCtx, flagNBatch, flagGPULayers, flagLevel, flagPrompt, flagShots,
			&cli.StringSliceFlag{Name: "model", Aliases: []string{"m"}, Usage: "GGUF file (repeatable; default: the cached default model)"},
			&cli.StringFlag{Name: "templates", Aliases: []string{"t"}, Value: "builtin", Usage: "builtin, a directory, a template file, or a GSM8K .jsonl"},
			&cli.StringFlag{Name: "variants", Value: "base,symbolic,noop", Usage: "comma-separated: base,names,numbers,symbolic,paraphrase,noop,noop-seeming"},
			&cli.IntFlag{Name: "instances", Aliases: []string{"n"}, Value: 2, Usage: "instances per template and variant"},
			&cli.IntFlag{Name: "max-tokens", Value: 256, Usage: "output budget per item, in tokens"},
			&cli.IntFlag{Name: "batch", Value: 8, Usage: "items decoded together (as fragility run --batch)"},
			&cli.IntFlag{Name: "shards", Value: 1, Usage: "number of shards to size (as fragility run --shard K/N)"},
			&cli.Float64Flag{Name: "tokens-per-second", Usage: "measured generation rate on the target machine"},
			&cli.StringFlag{Name: "bench", Usage: "the JSON of fragility bench --json on the target machine, for the rate"},
			&cli.StringFlag{Name: "from", Usage: "a previous run directory: its rate and its mean tokens per item"},
		},
		Action: planShardsAction,
	})
}

func planShardsAction(c *cli.Context) error {
	if c.NArg() != 0 {
		return usageError{fmt.Sprintf("plan takes no arguments, got %q", c.Args().First())}
	}
	vs, err := templates.ParseVariants(c.String("variants"))
	if err != nil {
		return usageError{err.Error()}
	}
	if c.Int("batch") < 1 || c.Int("batch") > probe.MaxBatch {
		return usageError{fmt.Sprintf("--batch must be between 1 and %d", probe.MaxBatch)}
	}
	if c.Int("shards") < 1 {
		return usageError{"--shards must be at least 1"}
	}
	if c.Float64("tokens-per-second") < 0 {
		return usageError{"--tokens-per-second must be positive"}
	}
	cfg := probe.Config{
		Models: c.StringSlice("model"), Templates: c.String("templates"), Variants: vs,
		Instances: c.Int("instances"), Seed: int64(c.Uint64(flagSeed.Name)), MaxTokens: c.Int("max-tokens"),
	}
	cfg.Params.NSeq, cfg.Params.NCtx, cfg.Params.NBatch, cfg.Params.GPULayers = c.Int("batch"), c.Int(flagNCtx.Name), c.Int(flagNBatch.Name), c.Int(flagGPULayers.Name)
	if err := promptFlags(c, &cfg); err != nil {
		return err
	}
	if cfg.Instances < 1 || cfg.MaxTokens < 1 {
		return usageError{"--instances and --max-tokens must be at least 1"}
	}
	if len(cfg.Models) == 0 {
		p, err := defaultModelPath("llm")
		if err != nil {
			return err
		}
		cfg.Models = []string{p}
	}
	o := probe.ShardPlanOptions{Shards: c.Int("shards"), Memory: true}
	if dir := c.String("from"); dir != "" {
		rate, tok, prompt, err := probe.RunThroughput(dir)
		if err != nil {
			return err
		}
		o.Rate, o.TokensPerItem, o.PromptTokensPerItem = rate, tok, prompt
		o.TokensPerItemSource = "the mean of " + dir
	}
	if b := c.String("bench"); b != "" {
		rate, err := probe.BenchThroughput(b, cfg.Params.NSeq)
		if err != nil {
			return err
		}
		o.Rate = rate
	}
	if r := c.Float64("tokens-per-second"); r > 0 {
		o.Rate = probe.Throughput{TokensPerSecond: r, Source: "--tokens-per-second"}
	}
	p, err := probe.PlanShards(cfg, o)
	if err != nil {
		return err
	}
	if c.Bool(flagJSON.Name) {
		return printJSON(p)
	}
	printShardPlan(p, cfg)
	return nil
}

// printShardPlan writes a ShardPlan for a reader.
func printShardPlan(p *probe.ShardPlan, cfg probe.Config) {
	var names []string
	for _, m := range p.Models {
		names = append(names, filepath.Base(m.Path))
	}
	fmt.Printf("Run: %d model(s) (%s) × %d items (%s, %d instance(s), %d draws excluded) = %d items in %d batches of up to %d\n",
		len(p.Models), strings.Join(names, ", "), p.Instances, cfg.Templates, cfg.Instances, p.Excluded, p.Items, p.Batches, p.Batch)
	fmt.Printf("Generated tokens: at most %d (%d × --max-tokens %d); expected %.0f (%.1f per item: %s)\n",
		p.GenTokensMax, p.Items, p.MaxTokens, p.GenTokens, p.TokensPerItem, p.TokensPerItemSource)
	if p.PromptTokens > 0 {
		fmt.Printf("Prompt tokens: about %.0f (%.1f per item)\n", p.PromptTokens, p.PromptTokens/float64(p.Items))
	}
	for i, m := range p.Models {
		if m.MemoryBytes > 0 {
			fmt.Printf("Model %d: %s on disk, about %s to run at --n-ctx %d × --batch %d\n", i, bytesHuman(uint64(m.SizeBytes)), bytesHuman(m.MemoryBytes), cfg.Params.NCtx, p.Batch)
		}
	}
	if p.Rate != nil {
		fmt.Printf("Rate: %.1f generated tokens/s (%s)\nOne machine: %s of generation\n", p.Rate.TokensPerSecond, p.Rate.Source, duration(p.Seconds))
	} else {
		fmt.Println("Rate: none given (--tokens-per-second, --bench or --from): no times")
	}
	fmt.Println()
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "shard\tbatches\titems\tmodels\ttokens at most\ttokens expected\tmemory\tgeneration time")
	for _, s := range p.Shards {
		var ms []string
		for _, m := range s.Models {
			ms = append(ms, fmt.Sprint(m))
		}
		t := "—"
		if p.Rate != nil {
			t = duration(s.Seconds)
		}
		fmt.Fprintf(tw, "%s\t%d–%d\t%d\t%s\t%d\t%.0f\t%s\t%s\n", s.Shard, s.FirstBatch+1, s.FirstBatch+s.Batches, s.Items, strings.Join(ms, ","), s.GenTokensMax, s.GenTokens, bytesHuman(s.MemoryBytes), t)
	}
	tw.Flush()
	if p.MemorySource != "" {
		fmt.Printf("\nMemory: %s.\n", p.MemorySource)
	}
}

func bytesHuman(b uint64) string {
	switch {
	case b == 0:
		return "—"
	case b >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(b)/(1<<30))
	default:
		return fmt.Sprintf("%.0f MiB", float64(b)/(1<<20))
	}
}

func duration(sec float64) string {
	d := time.Duration(sec * float64(time.Second))
	switch {
	case d >= time.Hour:
		return fmt.Sprintf("%dh %02dm", int(d.Hours()), int(d.Minutes())%60)
	case d >= time.Minute:
		return fmt.Sprintf("%dm %02ds", int(d.Minutes()), int(d.Seconds())%60)
	default:
		return fmt.Sprintf("%.1fs", d.Seconds())
	}
}
