package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/fragility/fragility/llm"
	"github.com/urfave/cli/v2"
)

func init() {
	register(&cli.Command{
		Name:      "quantize",
		Usage:     "write a copy of a GGUF model in another quantization type (llama.cpp's llama_model_quantize)",
		ArgsUsage: "--type TYPE IN.gguf OUT.gguf",
		Description: `Quantizes IN to OUT in-process with the pinned llama.cpp. OUT is written to a hidden temporary
file next to it and renamed only on success, so it is never a half file; an existing OUT is
kept unless --force. Progress (bytes written) goes to stderr.

Quantizing a file that is already quantized (e.g. Q4_K_M -> Q8_0) is refused by llama.cpp
unless --allow-requantize: the result can never be more precise than its source, so say so
wherever you report numbers from it.

Types: ` + strings.Join(llm.QuantizeTypes(), ", ") + `.

Examples:
   fragility quantize --type Q8_0 gemma-3-270m-F16.gguf gemma-3-270m-Q8_0.gguf
   fragility quantize --type Q4_K_M --threads 8 model-F16.gguf model-Q4_K_M.gguf
   fragility quantize --type Q4_0 --allow-requantize gemma-3-270m-q4_k_m.gguf /tmp/gemma-3-270m-Q4_0.gguf

Flags may come before or after the file names.`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "type", Required: true, Usage: "quantization type, llama.cpp spelling (Q8_0, Q6_K, Q5_K_M, Q4_K_M, Q4_0, F16, ...)"},
			&cli.BoolFlag{Name: "allow-requantize", Usage: "allow quantizing tensors that are already quantized (disclose it)"},
			&cli.BoolFlag{Name: "force", Usage: "replace an existing OUT"},
			&cli.IntFlag{Name: "threads", Value: 0, Usage: "quantization threads (0: every hardware thread)", Action: threadsInRange("threads")},
			&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "no progress on stderr"},
		},
		Action: quantizeAction,
	})
}

func quantizeAction(c *cli.Context) error {
	if c.NArg() != 2 {
		return usageError{"expected IN.gguf OUT.gguf"}
	}
	in, out, typ := c.Args().Get(0), c.Args().Get(1), c.String("type")
	if _, ok := llm.FileTypeByName(typ); !ok {
		return usageError{fmt.Sprintf("unknown --type %q (known: %s)", typ, strings.Join(llm.QuantizeTypes(), ", "))}
	}
	in, err := resolveModel(in, "llm")
	if err != nil {
		return err
	}
	opt := llm.QuantizeOptions{AllowRequantize: c.Bool("allow-requantize"), Threads: c.Int("threads"), Force: c.Bool("force")}
	printed := false
	if !c.Bool("quiet") {
		opt.Progress = func(n int64, el time.Duration) {
			printed = true
			fmt.Fprintf(os.Stderr, "\rquantize: %s to %s: %.1f MiB written, %s   ", in, typ, float64(n)/(1<<20), el.Round(time.Second))
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	t0 := time.Now()
	err = llm.Quantize(ctx, in, out, typ, opt)
	if printed {
		fmt.Fprintln(os.Stderr)
	}
	if err != nil {
		return err
	}
	m, err := llm.Load(out, llm.Params{NCtx: 64})
	if err != nil {
		return fmt.Errorf("%s: written, but it does not load: %w", out, err)
	}
	md := m.Metadata()
	m.Close()
	note := ""
	if opt.AllowRequantize {
		note = " (requantization allowed: if the input was quantized, the output is no more precise than the input)"
	}
	fmt.Fprintf(os.Stderr, "fragility: %s: %s, %.1f MiB, %.2f bits per weight, in %s%s\n", out, md.Quantization,
		float64(md.FileSize)/(1<<20), 8*float64(md.ModelSizeBytes)/float64(md.NParams), time.Since(t0).Round(time.Second), note)
	fmt.Println(md.SHA256 + "  " + out)
	return nil
}
