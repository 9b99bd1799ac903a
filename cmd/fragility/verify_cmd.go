package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/fragility/fragility/llm"
	"github.com/fragility/fragility/probe/rundir"
	"github.com/fragility/fragility/probe/verify"
	"github.com/urfave/cli/v2"
)

// errDiverged marks a verification that ran and found divergences (exit 1).
var errDiverged = errors.New("the run did not reproduce bit for bit")

func init() {
	register(&cli.Command{
		Name:      "verify",
		Usage:     "re-run a recorded run and check every token and every entropy bit for bit",
		ArgsUsage: "RUN_DIR",
		Description: `Replays the run in RUN_DIR from its manifest, set and traces: the same models (checked by
sha256), the same parameters, the recorded prompt token ids, and the same items decoded
together in each batch (llama.cpp is not batch-invariant). Every generated token id and the
float64 bits of every per-token entropy and log-probability must match the recorded ones,
and each response in results.csv must be the text of its replayed tokens.

Before anything runs it compares the environment with the manifest: each model's sha256, the
llama.cpp commit, the build flags, llama.cpp's CPU feature line, the backend. A difference
refuses the replay unless --force, which lists the differences and goes on. It also checks
the run's files against each other, as report does: a results.csv row edited by hand (its
correct column, its response against the tokens of its trace, ...) is an error, named by
line and item, and nothing is replayed.

Exit status: 0 when the run reproduces bit for bit, 1 on any divergence (the first one is
printed: item, token position, both values with their bits, and a count of all) or error.

Examples:
   fragility verify runs/demo
   fragility verify --force runs/demo
   fragility verify --json runs/demo | jq .first_divergence

Flags may come before or after RUN_DIR.`,
		Flags: []cli.Flag{flagJSON, flagBackend, flagThreads, flagThreadsB,
			&cli.BoolFlag{Name: "force", Usage: "replay even when the environment differs from the recorded one (the differences are listed)"},
			&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "no progress on stderr"},
		},
		Action: verifyAction,
	})
}

func verifyAction(c *cli.Context) error {
	if c.NArg() != 1 {
		return usageError{"expected one RUN_DIR argument"}
	}
	dir := c.Args().First()
	// A run still writing its directory would be read half-written. verify
	// only reads: a directory it cannot write (a read-only copy) is
	// verified without the lock.
	// A folder without a manifest is refused before the lock: it gets no
	// lock file.
	if _, err := rundir.ReadManifest(dir); err != nil {
		return err
	}
	lock, err := lockRunDir(dir)
	if errors.Is(err, rundir.ErrInUse) {
		return err
	}
	defer lock.Unlock()
	llm.LoadBackends(c.String(flagBackend.Name))
	opt := verify.VerifyOptions{Force: c.Bool("force"), Log: os.Stderr}
	if c.IsSet(flagThreads.Name) {
		opt.Threads = c.Int(flagThreads.Name)
	}
	if c.IsSet(flagThreadsB.Name) {
		opt.ThreadsBatch = c.Int(flagThreadsB.Name)
	}
	if !c.Bool("quiet") {
		opt.Progress = verifyProgress(os.Stderr)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	res, err := verify.Verify(ctx, dir, opt)
	if err != nil {
		if errors.Is(err, llm.ErrAborted) {
			fmt.Fprintln(os.Stderr, "\nfragility: verify interrupted")
			os.Exit(exitInterrupt)
		}
		return err
	}
	if c.Bool("json") {
		if err := printJSON(res); err != nil {
			return err
		}
	} else {
		for _, d := range res.Differences {
			fmt.Printf("environment differs (--force): %s\n", d)
		}
		if res.OK() {
			fmt.Printf("verified: %s reproduces bit for bit: %d items, %d tokens, every token id, entropy and log-probability identical", dir, res.Items, res.Tokens)
			if res.Skipped > 0 {
				fmt.Printf(" (%d items recorded as skipped, not replayed)", res.Skipped)
			}
			fmt.Println()
		} else {
			fmt.Printf("DIVERGED: %s: %d divergent position(s) in %d of %d item(s), %d recorded tokens compared\nfirst: %s\n",
				dir, res.Divergences, res.DivergentItems, res.Items, res.Tokens, res.First)
		}
	}
	if !res.OK() {
		return fmt.Errorf("%s: %w (%d divergence(s), the first printed above)", dir, errDiverged, res.Divergences)
	}
	return nil
}

// verifyProgress reports replayed items on w (countProgress).
func verifyProgress(w *os.File) func(done, total int) {
	return countProgress(w, "verify: %d/%d items replayed")
}
