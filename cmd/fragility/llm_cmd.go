package main

import (
	"context"
	"fmt"
	"math"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/fragility/fragility/llm"
	"github.com/fragility/fragility/probe"
	"github.com/urfave/cli/v2"
)

func init() {
	register(&cli.Command{
		Name:      "inspect",
		Usage:     "print a GGUF model's metadata (architecture, vocabulary, parameters, quantization type, chat template, sha256)",
		ArgsUsage: "[MODEL.gguf | NAME]",
		Description: `Loads the model in-process through llama.cpp and prints what fragility records about it.
Without an argument it inspects the default model from the cache; a cached model's name
(fragility models list) works as well as a path.

Examples:
   fragility inspect
   fragility inspect gemma-3-270m-q4_k_m
   fragility inspect ~/models/qwen3-0.6b-Q8_0.gguf
   fragility inspect --json my.gguf | jq .quantization`,
		Flags:  append(modelFlags(), flagJSON),
		Action: inspectAction,
	})
	register(&cli.Command{
		Name:  "generate",
		Usage: "generate an answer and print every token with its exact full-vocabulary entropy",
		Description: `Renders the prompt with the model's chat template (or the recorded plain fallback), decodes
greedily (or with --temperature and --seed), and prints the answer and one row per generated
token: the piece, the entropy H in bits over the full vocabulary, the branching factor 2^H,
and the natural log-probability of the chosen token.

Examples:
   fragility generate --prompt "What is 17 * 3?"
   fragility generate --model qwen2.5-coder-1.5b --prompt "What is 17 * 3?"
   fragility generate --model my.gguf --prompt "..." --max-tokens 64 --json > tokens.json
   fragility generate --prompt "..." --temperature 0.8 --seed 7`,
		Flags: append(modelFlags(), flagJSON, flagTemplate,
			&cli.StringFlag{Name: "model", Aliases: []string{"m"}, Usage: modelUsage},
			&cli.StringFlag{Name: "prompt", Aliases: []string{"p"}, Usage: "the user message (required)"},
			&cli.StringFlag{Name: "system", Usage: "an optional system message"},
			&cli.IntFlag{Name: "max-tokens", Value: 128, Usage: "output budget in tokens"},
			&cli.Float64Flag{Name: "temperature", Value: 0, Usage: "0: greedy; >0: seeded sampling from softmax(logits/T)"},
			&cli.StringSliceFlag{Name: "stop", Usage: "stop string (repeatable)"},
		),
		Action: generateAction,
	})
}

// inspectAction is `fragility inspect`: it loads a model and prints its metadata,
// backend and build, as a table or JSON.
func inspectAction(c *cli.Context) error {
	if err := checkModelFlags(c); err != nil {
		return err
	}
	path, err := modelArg(c)
	if err != nil {
		return err
	}
	p := loadParams(c)
	m, err := llm.Load(path, p)
	if err != nil {
		return err
	}
	defer m.Close()
	md := m.Metadata()
	info := struct {
		llm.Metadata
		Backend     string       `json:"backend"`
		Devices     []llm.Device `json:"devices"`
		LlamaCommit string       `json:"llama_cpp_commit"`
		BuildFlags  string       `json:"build_flags"`
	}{md, llm.BackendSummary(p.GPULayers), llm.Devices(), llm.LlamaCommit, llm.BuildFlags}
	if c.Bool("json") {
		return printJSON(info)
	}
	tmpl := md.ChatTemplate
	if tmpl == "" {
		tmpl = "(none: prompts use the plain fallback " + llm.FallbackTemplate + ")"
	} else if len(tmpl) > 120 {
		tmpl = fmt.Sprintf("%q... (%d bytes)", tmpl[:100], len(md.ChatTemplate))
	}
	rows := [][2]string{
		{"file", md.Path},
		{"size", fmt.Sprintf("%d bytes (%.1f MiB)", md.FileSize, float64(md.FileSize)/(1<<20))},
		{"sha256", md.SHA256},
		{"description", md.Description},
		{"name", md.Name},
		{"architecture", md.Architecture},
		{"size label", md.SizeLabel},
		{"quantization", fmt.Sprintf("%s (general.file_type %d)", md.Quantization, md.FileType)},
		{"requantized", requantizedRow(md.RequantizedFrom)},
		{"parameters", fmt.Sprintf("%d", md.NParams)},
		{"layers", fmt.Sprintf("%d", md.NLayer)},
		{"n_vocab", fmt.Sprintf("%d", md.NVocab)},
		{"n_ctx_train", fmt.Sprintf("%d", md.NCtxTrain)},
		{"chat template", tmpl},
		{"backend", info.Backend},
		{"llama.cpp", llm.LlamaCommit + " (" + llm.OllamaModule + ")"},
		{"build flags", llm.BuildFlags},
	}
	for _, r := range rows {
		fmt.Printf("%-14s %s\n", r[0]+":", r[1])
	}
	return nil
}

// generateAction is `fragility generate`: it renders one chat prompt for a model and
// generates a reply with per-token entropies.
func generateAction(c *cli.Context) error {
	// Wrong usage first, as run refuses it, before the model is looked for.
	if err := checkModelFlags(c); err != nil {
		return err
	}
	if err := probe.CheckMaxTokens(c.Int(flagMaxTokens.Name), c.Int(flagNCtx.Name)); err != nil {
		return err
	}
	// Checked here, not with Required: cli then printed the whole help
	// page to stdout before its error line.
	if !c.IsSet("prompt") {
		return usageError{"--prompt is required: give the text the model should answer"}
	}
	if strings.TrimSpace(c.String("prompt")) == "" {
		return usageError{"--prompt is empty: give the text the model should answer"}
	}
	if err := probe.CheckTemperature(c.Float64("temperature")); err != nil {
		return err
	}
	path, err := modelOrDefault(c)
	if err != nil {
		return err
	}
	m, err := llm.Load(path, loadParams(c))
	if err != nil {
		return err
	}
	defer m.Close()
	var msgs []llm.Message
	if s := c.String("system"); s != "" {
		msgs = append(msgs, llm.Message{Role: "system", Content: s})
	}
	msgs = append(msgs, llm.Message{Role: "user", Content: c.String("prompt")})
	r, err := m.RenderChatWith(msgs, c.String(flagTemplate.Name))
	if err != nil {
		return err
	}
	if r.Template == "fallback-plain" {
		fmt.Fprintf(os.Stderr, "fragility: %s: %s; using the plain fallback %s\n", path, r.Reason, llm.FallbackTemplate)
	}
	toks, err := m.Tokenize(r.Text, true, true)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	opt := llm.GenerateOptions{MaxTokens: c.Int("max-tokens"), Stop: append(c.StringSlice("stop"), r.Stop...),
		Temperature: c.Float64("temperature"), Seed: c.Uint64("seed")}
	g, err := m.Generate(ctx, toks, opt)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if c.Bool("json") {
		return printJSON(struct {
			Model    llm.Metadata        `json:"model"`
			Rendered llm.Rendered        `json:"rendered_prompt"`
			Prompt   []llm.Token         `json:"prompt_token_ids"`
			Options  llm.GenerateOptions `json:"options"`
			*llm.Generation
		}{m.Metadata(), r, toks, opt, g})
	}
	fmt.Println(g.Text)
	fmt.Println()
	fmt.Printf("%4s  %-24s %12s %12s %12s\n", "#", "piece", "H (bits)", "2^H", "log-prob")
	var sum float64
	for i, t := range g.Tokens {
		sum += t.EntropyBits
		fmt.Printf("%4d  %-24s %12.6f %12.3f %12.6f\n", i, quotePiece(t.Piece), t.EntropyBits, math.Exp2(t.EntropyBits), t.LogProb)
	}
	n := float64(len(g.Tokens))
	fmt.Printf("\n%d prompt tokens, %d generated (%s); mean H %.4f bits; %.1f tokens/s; entropy pass %.2f ms/token\n",
		g.PromptTokens, len(g.Tokens), g.StopReason, sum/n, n/(g.DecodeSec+1e-12), 1000*g.EntropySec/n)
	return nil
}

// modelArg returns the model the first argument names (resolveModel), or
// the default model when there is none.
func modelArg(c *cli.Context) (string, error) {
	if c.NArg() > 1 {
		return "", usageError{"expected one MODEL.gguf argument or model name"}
	}
	return resolveModel(c.Args().First(), "llm")
}

// requantizedRow describes llm.KeyRequantizedFrom for inspect.
func requantizedRow(from string) string {
	if from == "" {
		return "no (" + llm.KeyRequantizedFrom + " absent)"
	}
	return "yes, from " + from + ": no more precise than that file"
}
