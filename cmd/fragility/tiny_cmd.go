package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/fragility/fragility/llm"
	"github.com/fragility/fragility/models"
	"github.com/urfave/cli/v2"
)

func init() {
	register(&cli.Command{
		Name:      "tiny-model",
		Usage:     "write a tiny random-weight llama GGUF (about 5 MiB, real WordPiece tokenizer) for tests and GPU checks",
		ArgsUsage: "OUT.gguf",
		Description: `Writes a small llama-architecture model with seeded random weights (F16 layers, Q8_0 embedding and output)
and the 30,522-token WordPiece vocabulary of the default sentence embedder's tokenizer.json
(llama.cpp tokenizer "bert"). Its text is gibberish, but it loads, tokenizes and generates
through every llama.cpp code path of a dense transformer, on CPU and GPU. The same seed,
shape and tokenizer give the same bytes.

Examples:
   fragility tiny-model tiny.gguf
   fragility tiny-model --seed 7 --layers 4 --embd 128 tiny7.gguf
   fragility tiny-model --tokenizer ~/bert/tokenizer.json --json tiny.gguf`,
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "force", Usage: "overwrite OUT if it exists"},
			&cli.Uint64Flag{Name: "seed", Value: 1, Usage: "seed of the weights"},
			&cli.StringFlag{Name: "tokenizer", Usage: "WordPiece tokenizer.json (default: the cached default embedder's)"},
			&cli.IntFlag{Name: "layers", Usage: "transformer blocks", DefaultText: "2"},
			&cli.IntFlag{Name: "embd", Usage: "embedding width", DefaultText: "64"},
			&cli.IntFlag{Name: "heads", Usage: "attention heads", DefaultText: "2"},
			&cli.IntFlag{Name: "kv-heads", Usage: "key/value heads", DefaultText: "1"},
			&cli.IntFlag{Name: "ff", Usage: "feed-forward width", DefaultText: "256"},
			flagJSON,
		},
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return usageError{"expected one OUT.gguf argument"}
			}
			if err := outFileNotDir("OUT", c.Args().First()); err != nil {
				return err
			}
			if _, err := os.Stat(c.Args().First()); err == nil && !c.Bool("force") {
				return fmt.Errorf("%s already exists: use --force to overwrite it", c.Args().First())
			}
			o := llm.TinyOptions{Seed: c.Uint64("seed"),
				Layers: c.Int("layers"), Embd: c.Int("embd"), Heads: c.Int("heads"),
				KVHeads: c.Int("kv-heads"), FF: c.Int("ff")}
			// 0 is "the default" inside TinyOptions; given on the command
			// line it is a shape, and refused as out of range.
			for _, f := range []string{"layers", "embd", "heads", "kv-heads", "ff"} {
				if c.IsSet(f) && c.Int(f) < 1 {
					return usageError{fmt.Sprintf("--%s must be at least 1, got %d", f, c.Int(f))}
				}
			}
			if err := o.Defaults().CheckShape(); err != nil {
				return usageError{err.Error()}
			}
			tok := c.String("tokenizer")
			if tok == "" {
				var err error
				if tok, err = defaultTokenizer(); err != nil {
					return err
				}
			}
			o.Tokenizer = tok
			info, err := llm.WriteTinyModel(c.Args().First(), o)
			if err != nil {
				return err
			}
			if c.Bool(flagJSON.Name) {
				return printJSON(info)
			}
			fmt.Printf("%s: %d bytes (%.1f MiB), %d parameters, %d-token vocabulary, sha256 %s\n",
				info.Path, info.Bytes, float64(info.Bytes)/(1<<20), info.NParams, info.NVocab, info.SHA256)
			return nil
		},
	})
}

// defaultTokenizer returns the tokenizer.json of the cached default embedder,
// or an error saying how to fetch it.
func defaultTokenizer() (string, error) {
	man, err := models.Load()
	if err != nil {
		return "", err
	}
	md, err := man.Default("embedder")
	if err != nil {
		return "", err
	}
	dir, err := md.Path()
	if err != nil {
		return "", err
	}
	p := filepath.Join(dir, "tokenizer.json")
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("default embedder's tokenizer %s is not in the cache: run `make models` (or pass --tokenizer)", p)
	}
	return p, nil
}
