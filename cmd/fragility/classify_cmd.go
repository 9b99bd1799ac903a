package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/fragility/fragility/embed"
	"github.com/urfave/cli/v2"
)

func init() {
	register(&cli.Command{
		Name:      "classify",
		Usage:     "rank Dewey Decimal classes for texts with the sentence embedder, and print the margin",
		ArgsUsage: "[TEXT ...]",
		Description: `Embeds each text with the sentence embedder (in-process; default: the cached
all-MiniLM-L6-v2) and ranks the Dewey Decimal classes by cosine similarity between the
text and our short description of each class. The margin is cosine(top class) minus
cosine(runner-up): how decisively the embedder reads the text as one class.

Each argument is one text. With --file, every non-blank line of the file is one text
("-" reads standard input). A text longer than the embedder's limit (256 tokens) is
cut to its first tokens and flagged on stderr and in the JSON ("truncated": true).
Class vectors are computed once per embedder and level and cached under the user
cache directory (fragility/ddc).

Examples:
   fragility classify "Tom has 3 apples and buys 5 more. How many apples does he have?"
   fragility classify --ddc-level division "A baker puts 48 cupcakes into 6 boxes."
   fragility classify --file prompts.txt --json > ddc.json
   printf 'first text\nsecond text\n' | fragility classify --file - --top 3
   fragility classify --embedder ./my-minilm "text"   # a directory with model.onnx + tokenizer.json`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "file", Aliases: []string{"f"}, Usage: `read texts from this file, one per non-blank line ("-": standard input)`},
			&cli.StringFlag{Name: "ddc-level", Aliases: []string{"level"}, Value: "main", Usage: "DDC level: main (10 classes) or division (99 divisions in use)"},
			&cli.StringFlag{Name: "embedder", Usage: "sentence-embedder directory or cached embedder name (default: the default embedder)"},
			&cli.IntFlag{Name: "top", Value: 5, Usage: "classes to print per text (0: all); --json always has all"},
			flagJSON,
		},
		Action: classifyAction,
	})
}

// classifyResult is one text's ranking as printed with --json.
type classifyResult struct {
	Text string `json:"text"`
	embed.Ranking
}

func classifyAction(c *cli.Context) error {
	texts := c.Args().Slice()
	if f := c.String("file"); f != "" {
		lines, err := readTextLines(f)
		if err != nil {
			return err
		}
		texts = append(texts, lines...)
	}
	if len(texts) == 0 {
		return usageError{"classify: give a text as an argument or --file FILE"}
	}
	for i, t := range texts {
		if strings.TrimSpace(t) == "" {
			return usageError{fmt.Sprintf("classify: text %d is empty", i+1)}
		}
	}
	level, err := embed.ParseLevel(c.String("ddc-level"))
	if err != nil {
		return usageError{err.Error()}
	}
	dir, err := resolveModel(c.String("embedder"), "embedder")
	if err != nil {
		return err
	}
	e, err := embed.Open(dir)
	if err != nil {
		return err
	}
	defer e.Close()
	cls, err := embed.NewClassifier(e, level, ddcCacheOptions()...)
	if err != nil {
		return err
	}
	rs, err := cls.ClassifyAll(texts)
	if err != nil {
		return err
	}
	for i, r := range rs {
		if r.Truncated {
			fmt.Fprintf(os.Stderr, "fragility: text %d has %d tokens; only its first %d were embedded\n", i+1, r.Tokens, e.MaxTokens())
		}
	}
	if c.Bool(flagJSON.Name) {
		out := make([]classifyResult, len(rs))
		for i, r := range rs {
			out[i] = classifyResult{Text: texts[i], Ranking: r}
		}
		return printJSON(out)
	}
	top := c.Int("top")
	for i, r := range rs {
		if i > 0 {
			fmt.Println()
		}
		fmt.Printf("%s\n", shorten(texts[i], 100))
		tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "  rank\tclass\tcosine\tname")
		for k, s := range r.Scores {
			if top > 0 && k >= top {
				break
			}
			fmt.Fprintf(tw, "  %d\t%s\t%.4f\t%s\n", k+1, s.Code, s.Cosine, s.Name)
		}
		tw.Flush()
		fmt.Printf("  margin %.4f (%s − %s)\n", r.Margin, r.Top.Code, r.RunnerUp.Code)
	}
	return nil
}

// readTextLines returns the non-blank lines of path ("-": standard input),
// without line endings. A file with none is bad input (exit 1), not wrong
// usage.
func readTextLines(path string) ([]string, error) {
	var r io.Reader = os.Stdin
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		r = f
	}
	var out []string
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 16*1024*1024)
	for sc.Scan() {
		if line := strings.TrimRight(sc.Text(), "\r"); strings.TrimSpace(line) != "" {
			out = append(out, line)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("classify: %s has no text (empty, or only blank lines)", path) // bad input, not usage
	}
	return out, nil
}

// shorten cuts s to at most n runes for a heading, marking the cut.
func shorten(s string, n int) string {
	r := []rune(strings.Join(strings.Fields(s), " "))
	if len(r) <= n {
		return string(r)
	}
	return string(r[:n-1]) + "…"
}
