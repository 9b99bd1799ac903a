package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"syscall"
	"time"

	"github.com/fragility/fragility/llm"
	"github.com/fragility/fragility/models"
	"github.com/fragility/fragility/probe"
	"github.com/fragility/fragility/probe/bench"
	"github.com/urfave/cli/v2"
)

func init() {
	register(&cli.Command{
		Name:  "bench",
		Usage: "measure the harness's cost on top of llama.cpp (bare decode vs generation with exact entropy vs batched items)",
		Description: `Measures in one run, as llama-bench does (one warm-up, then --reps repeats, mean ± sd):
  (a) bare llama_decode calls: a prompt of --pp tokens, then single-token decodes of random
      tokens (as llama-bench's test_gen), no logits read, no entropy, no sampling;
  (b) the same decodes with fragility's per-token work: the token chosen from the logits, the
      exact full-vocabulary entropy and the per-token record of every token; on the CPU the
      entropy pass of a token runs between two decodes on as many of the model's thread pool's
      threads as a one-token decode takes (--threads), with a GPU in the pass pool
      (--entropy-pool) while the next token decodes;
  (c) the first --items items of the demo matrix (builtin templates x base/symbolic/noop x 2
      instances, seeded order) decoded one at a time and --batch at a time; after each batch of
      the first batched pass, the answer-scoring pass (answer-score/3: the expected answer
      teacher-forced in the generation's KV state after the model's text, and right after the
      prompt) is timed apart, and its share of that pass's generation time printed, with the
      answer-first forcings' part of it;
without --threads, (a) and (b) decode first on every core but one (one-token decodes and the
passes on one core fewer), then once more with every core decoding, as
fragility run does by default (not with layers on a GPU); (c) decodes as run does; a --threads
that leaves a core free gets the same second series;
and prints the ratios b/a and c/b, the threads and the build flags. In each repeat, (a) and (b)
share one sequence: after the prompt, blocks of 16 tokens alternate A B B A A B B A ... (--tg
tokens of each), so that the machine's drift, which on a shared machine is larger than the
difference measured, cancels out of b/a. Unless --no-ddc, the batched items run a second time
with the DDC classifier working beside generation, as in fragility run: the DDC share is the
wall time that adds (loading the embedder included) over the run's wall time.

Examples:
   fragility bench
   fragility bench --model my.gguf --threads 8 --pp 512 --tg 256 --reps 5
   fragility bench --batch 16 --items 32 --json`,
		Flags: append(modelFlags(), flagJSON,
			&cli.StringFlag{Name: "model", Aliases: []string{"m"}, Usage: modelUsage},
			&cli.IntFlag{Name: "pp", Value: 64, Usage: "prompt tokens of (a) and (b)"},
			&cli.IntFlag{Name: "tg", Value: 128, Usage: "generated tokens of (a) and of (b) per repeat (a multiple of 32)"},
			&cli.IntFlag{Name: "reps", Value: 10, Usage: "repeats of (a) and (b), as llama-bench -r (whose default is 5; b/a is a small difference, so 10 here)"},
			&cli.IntFlag{Name: "batch", Value: 8, Usage: "sequences per llama_batch in (c)"},
			&cli.IntFlag{Name: "items", Value: 16, Usage: "demo items timed in (c)"},
			&cli.IntFlag{Name: "shots", Value: 3, Usage: "few-shot exemplars of the items in (c), as make demo uses"},
			&cli.IntFlag{Name: "max-tokens", Value: 256, Usage: "output budget of the items in (c)"},
			&cli.BoolFlag{Name: "no-ddc", Usage: "do not time the DDC classifier"},
			&cli.IntFlag{Name: "entropy-pool", Value: 0, Usage: "workers computing the entropy passes beside the next decode: 0 = the default (none on the CPU; with a GPU, every core but one), -1 = none (each pass between two decodes, on llama.cpp's threads)"},
			&cli.StringFlag{Name: "go-bench", Usage: "also put the results in this `go test -bench` output file in the table (make bench does)"},
		),
		Action: benchAction,
	})
}

// checkBenchFlags refuses bench's flags out of range (wrong usage) and sets
// the entropy pass pool (llm.EntropyPool) from --entropy-pool.
func checkBenchFlags(c *cli.Context) error {
	if c.NArg() > 0 {
		return usageError{fmt.Sprintf("bench takes no arguments, got %q (the model is --model FILE)", c.Args().First())}
	}
	for _, f := range []struct {
		name string
		min  int
	}{{"pp", 1}, {"tg", 32}, {"reps", 1}, {"items", 1}, {"shots", 0}} {
		if v := c.Int(f.name); v < f.min {
			return usageError{fmt.Sprintf("--%s must be at least %d, got %d", f.name, f.min, v)}
		}
	}
	// The flags run has too, refused as run refuses them.
	if err := checkModelFlags(c); err != nil {
		return err
	}
	if err := probe.CheckMaxTokens(c.Int(flagMaxTokens.Name), c.Int(flagNCtx.Name)); err != nil {
		return err
	}
	if v := c.Int("shots"); v > 3 {
		return usageError{fmt.Sprintf("--shots must be 0..3, got %d", v)}
	}
	if v := c.Int("tg"); v%(2*llm.BenchBlock) != 0 {
		return usageError{fmt.Sprintf("--tg %d is not a multiple of %d: (a) and (b) alternate in blocks of %d tokens, ABBA", v, 2*llm.BenchBlock, llm.BenchBlock)}
	}
	if v := c.Int("entropy-pool"); v < -1 || v > 64 {
		return usageError{fmt.Sprintf("--entropy-pool must be -1 (off), 0 (default) or 1..64, got %d", v)}
	}
	llm.EntropyPool = c.Int("entropy-pool")
	return nil
}

// benchAction is `fragility bench`: it checks the flags, times decoding with and without
// this project's per-token work and the demo items (bench.Bench), and prints the table.
func benchAction(c *cli.Context) error {
	if err := checkBenchFlags(c); err != nil {
		return err
	}
	path, err := modelOrDefault(c)
	if err != nil {
		return err
	}
	var gob []goBenchRow
	if f := c.String("go-bench"); f != "" {
		// Read first: a bad file fails before minutes of timing.
		if gob, err = readGoBench(f); err != nil {
			return err
		}
	}
	cfg := bench.BenchConfig{Model: path, Params: loadParams(c), PP: c.Int("pp"), TG: c.Int("tg"), Reps: c.Int("reps"),
		Batch: c.Int("batch"), Items: c.Int("items"), Shots: c.Int("shots"), MaxTokens: c.Int("max-tokens"),
		Seed: int64(c.Uint64(flagSeed.Name))}
	if !c.IsSet(flagThreads.Name) {
		// The first series of (a) and (b) leaves a core free of one-token
		// decodes; the second (BenchResult.Busy) and (c) decode as run does by
		// default, and the result is recorded for fragility plan with
		// run's threads.
		cfg.FirstThreads = max(1, runtime.NumCPU()-1)
	}
	var cls probe.Classifier
	if !c.Bool("no-ddc") {
		t0 := time.Now()
		f, _, closer, err := openClassifier("", "main", cfg.Params.GPULayers == 0)
		if err != nil {
			return err
		}
		defer closer()
		cls = f
		cfg.EmbedderOpenSec = time.Since(t0).Seconds()
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	logf := func(f string, a ...any) { fmt.Fprintf(os.Stderr, f+"\n", a...) }
	r, err := bench.Bench(ctx, cfg, cls, logf)
	if err != nil {
		if errors.Is(err, llm.ErrAborted) {
			fmt.Fprintln(os.Stderr, "fragility: bench interrupted; nothing printed")
			os.Exit(exitInterrupt)
		}
		return err
	}
	recordBench(r, cfg)
	ek := benchKernel{Kernel: llm.EntropyKernel, ISA: llm.EntropyISA, Pool: r.Pool, PassThreads: r.PassThreads}
	if ek.Pool == 0 {
		ek.Pool = -1
	}
	if c.Bool("json") {
		return printJSON(struct {
			*bench.BenchResult
			Entropy benchKernel  `json:"entropy"`
			GoBench []goBenchRow `json:"go_benchmarks,omitempty"`
		}{r, ek, gob})
	}
	printBench(r, ek, gob)
	return nil
}

// recordBench records the bench's result as the last one on this machine
// (bench.RecordLast at bench.LastPath), with the model's sha256 and the
// parameters it loaded with, for fragility plan's rate; a failure to
// record is said on stderr and fails nothing.
func recordBench(r *bench.BenchResult, cfg bench.BenchConfig) {
	path, err := bench.LastPath()
	if err == nil {
		var sum string
		if sum, err = models.SHA256FileOnce(cfg.Model); err == nil {
			err = bench.RecordLast(path, r, sum, cfg.Params)
		}
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "fragility: bench: not recorded for fragility plan: %v\n", err)
		return
	}
	fmt.Fprintf(os.Stderr, "fragility: bench: recorded in %s (fragility plan takes its rate from it for this model, --batch %d and these threads)\n", path, r.Batch)
}

// benchKernel is how (b) computed its entropy passes.
type benchKernel struct {
	Kernel string `json:"kernel"` // llm.EntropyKernel
	ISA    string `json:"isa"`    // llm.EntropyISA
	Pool   int    `json:"pool"`   // workers beside the decode in (b); -1: none, each pass between two decodes
	// PassThreads is the threads that computed each pass of (b) between
	// two decodes (0 with a pool).
	PassThreads int `json:"pass_threads"`
}

// ratioText prints b/a with its interval over the repeats (none with one
// repeat).
func ratioText(r float64, ci [2]float64) string {
	if ci == [2]float64{} {
		return fmt.Sprintf("%.3f", r)
	}
	return fmt.Sprintf("%.3f [%.3f, %.3f]", r, ci[0], ci[1])
}

// poolText describes the pass pool of (b).
func (k benchKernel) poolText() string {
	if k.Pool < 0 {
		return fmt.Sprintf("none: each pass between two decodes, on %d thread(s)", k.PassThreads)
	}
	return fmt.Sprintf("%d worker(s) beside the decode", k.Pool)
}

// passWhere says in a few words where a series' entropy passes ran.
func passWhere(b *bench.BenchDecodeSeries) string {
	if b.Pool > 0 {
		return fmt.Sprintf("pool %d", b.Pool)
	}
	return fmt.Sprintf("pass on %d", b.PassThreads)
}

// shareCIText is a share's 95% interval in percent, or why there is none.
func shareCIText(ci [2]float64) string {
	if ci == [2]float64{} {
		return "none (fewer than 2 batches)"
	}
	return fmt.Sprintf("[%.1f%%, %.1f%%]", 100*ci[0], 100*ci[1])
}

// splitText is where a token's time goes in (a) and (b), in ms: (a)'s
// decode, then (b)'s decode, per-token step and wait for the pool.
func splitText(s bench.TokenSplit) string {
	return fmt.Sprintf("%.2f | %.2f + %.3f + %.3f", s.ADecodeMs, s.BDecodeMs, s.BStepMs, s.BWaitMs)
}

// rateText is a rate's mean ± sample sd with prec decimals; the mean
// alone with one repeat, whose sd is undefined.
func rateText(r bench.Rate, prec int) string {
	if len(r.Runs) < 2 {
		return fmt.Sprintf("%.*f (1 repeat: no sd)", prec, r.Mean)
	}
	return fmt.Sprintf("%.*f ± %.*f", prec, r.Mean, prec, r.SD)
}

// printBench prints the result as one Markdown table, the Go benchmarks in
// gob (if any) as its last rows.
func printBench(r *bench.BenchResult, ek benchKernel, gob []goBenchRow) {
	fmt.Printf("model        %s (n_vocab %d)\n", r.Model, r.NVocab)
	fmt.Printf("threads      %d\nbuild flags  %s\n", r.Threads, r.BuildFlags)
	fmt.Printf("entropy      kernel %s (%s), pass pool of (b): %s\n\n", ek.Kernel, ek.ISA, ek.poolText())
	fmt.Printf("| %-58s | %-26s |\n", "measurement", "value")
	fmt.Printf("|%s|%s|\n", dashes(60), dashes(28))
	row := func(k, v string) { fmt.Printf("| %-58s | %-26s |\n", k, v) }
	row(fmt.Sprintf("(a) bare llama_decode, prompt (pp %d), tokens/s", r.PP), rateText(r.BarePP, 1))
	row(fmt.Sprintf("(a) bare llama_decode, generation (%d tokens), tokens/s", r.TG), rateText(r.BareTG, 2))
	row(fmt.Sprintf("(b) generation + entropy + record (%d tokens), tokens/s", r.TG), rateText(r.OursTG, 2))
	row(fmt.Sprintf("(b) entropy pass at %s, ms/token (target ≤ 0.3)", count(r.Threads, "thread")), fmt.Sprintf("%.3f", r.EntropyMs))
	row(fmt.Sprintf("ratio b/a at %s (target ≥ 0.99), 95%% CI", count(r.Threads, "thread")), ratioText(r.RatioBA, r.RatioBACI))
	row("  ms/token: (a) decode | (b) decode + step + wait", splitText(r.Split))
	if b := r.Busy; b != nil {
		row(fmt.Sprintf("every core decoding (%d threads, %s): (a), tokens/s", b.Threads, passWhere(b)), rateText(b.BareTG, 2))
		row(fmt.Sprintf("every core decoding (%d threads, %s): (b), tokens/s", b.Threads, passWhere(b)), rateText(b.OursTG, 2))
		row("every core decoding: (b) entropy pass, ms per token", fmt.Sprintf("%.3f", b.EntropyMs))
		row("every core decoding: ratio b/a (target ≥ 0.98, CI ≥ 0.97)", ratioText(b.RatioBA, b.RatioBACI))
		row("  ms/token: (a) decode | (b) decode + step + wait", splitText(b.Split))
	}
	row(fmt.Sprintf("(c) demo items one at a time (%d items), items/s", r.Items), fmt.Sprintf("%.3f", r.SingleIPS))
	row(fmt.Sprintf("(c) demo items %d per batch, items/s", r.Batch), fmt.Sprintf("%.3f", r.BatchedIPS))
	row("ratio c/b: batched / one at a time (target ≥ 1.5)", fmt.Sprintf("%.2f", r.RatioCB))
	row("(c) answer scoring, share of generation (target ≤ 5%)", fmt.Sprintf("%.1f%% (%.2f s, %d items)", 100*r.AnswerScoreShare, r.AnswerScoreSec, r.AnswerScored))
	row("(c) answer scoring share, 95% CI over batches", shareCIText(r.AnswerScoreShareCI))
	row("(c) of which the answer first, share of generation", fmt.Sprintf("%.1f%% (%.2f s, %d items)", 100*r.AnswerFirstShare, r.AnswerFirstSec, r.AnswerFirst))
	if r.BatchedDDCSec > 0 {
		row("(c) batched run without DDC, seconds", fmt.Sprintf("%.2f", r.BatchedSec))
		row("(c) batched run with DDC beside generation, seconds", fmt.Sprintf("%.2f", r.BatchedDDCSec))
		row("DDC: loading the embedder, seconds", fmt.Sprintf("%.2f", r.EmbedOpenSec))
		row("DDC: classifier working beside generation, seconds", fmt.Sprintf("%.2f (waited %.2f)", r.DDCWorkSec, r.DDCWaitSec))
		row("DDC share of the run's wall time (target < 5%)", fmt.Sprintf("%.1f%%", 100*r.DDCShare))
		row("DDC share were it run before generation, not beside", fmt.Sprintf("%.1f%%", 100*r.DDCSerial))
	}
	for _, g := range gob {
		row(goBenchLabel(g.Name), goBenchValue(g))
	}
	fmt.Printf("\n(a) and (b): %d repeat(s) after one warm-up, mean ± sample sd; in each repeat they alternate in blocks of 16\n", r.Reps)
	fmt.Println("tokens (ABBA) in one sequence; b/a is the ratio of their total times over all repeats.")
	if r.BatchedDDCSec > 0 {
		fmt.Println("DDC share: the wall time the classifier adds to the batched run; run-to-run noise is about ±2%, so a value")
		fmt.Println("near 0 (even below) means the classifier's work was hidden beside generation.")
	}
	if len(gob) > 0 {
		fmt.Println("Go rows: `go test -bench` (testing.B), time per operation; Entropy rows are one full-vocabulary pass.")
	}
}

func dashes(n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = '-'
	}
	return string(b)
}
