package main

import (
	"fmt"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/fragility/fragility/templates"
	"github.com/urfave/cli/v2"
)

// flagTemplates names where templates come from, for every command that
// reads them.
var flagTemplates = &cli.StringFlag{
	Name:  "templates",
	Value: "builtin",
	Usage: "templates: builtin, a directory, an own-format .yaml/.json file, a GSM-Symbolic .json file or a GSM8K .jsonl file",
}

func init() {
	register(&cli.Command{
		Name:  "templates",
		Usage: "list, show, review and check word-problem templates",
		Subcommands: []*cli.Command{
			{
				Name:  "list",
				Usage: "list templates with their relation type, steps and applicable variants",
				Description: `Examples:
   fragility templates list
   fragility templates list --templates ./my-templates
   fragility templates list --templates gsm8k_test.jsonl --json`,
				Flags:  []cli.Flag{flagTemplates, flagJSON},
				Action: templatesList,
			},
			{
				Name:      "show",
				Usage:     "show one template: variables, domains, base values, conditions, answer, texts",
				ArgsUsage: "ID",
				Description: `Examples:
   fragility templates show baker
   fragility templates show gsms-0001 --templates ./gsm_symbolic_style`,
				Flags:  []cli.Flag{flagTemplates},
				Action: templatesShow,
			},
			{
				Name:      "review",
				Usage:     "print base and one draw of every variant, with the answer and its arithmetic spelled out",
				ArgsUsage: "ID...",
				Description: `For each template: its base instance and one instance of every other variant (index 0 of the
set --seed would generate), each with the question, the values that differ from base, every
derived value and the answer expression with the values substituted, then each operation with
its result. No-op instances show the clause, its kind and, for noop-seeming clauses, the
reviewed reason why the answer is unchanged. Meant for checking a template by eye in a minute.

Examples:
   fragility templates review baker
   fragility templates review baker stickers --seed 7
   fragility templates review --all > review.txt`,
				Flags: []cli.Flag{flagTemplates, flagSeed,
					&cli.BoolFlag{Name: "all", Usage: "review every template"}},
				Action: templatesReview,
			},
			{
				Name:      "check",
				Usage:     "validate template files and report, before any model runs",
				ArgsUsage: "DIR|FILE",
				Description: `Loads every template file separately (own format, GSM-Symbolic, GSM8K), checks the base
values, tries re-rolls of names and numbers, and generates one instance of every variant.
Exits 1 when any template fails; each failure names the file, the line and what is wrong.

Examples:
   fragility templates check ./my-templates
   fragility templates check ./gsm_symbolic_style/0001.json --draws 1000
   fragility templates check builtin`,
				Flags: []cli.Flag{
					&cli.IntFlag{Name: "draws", Value: 200, Usage: "symbolic re-rolls to try per template"},
					flagSeed,
				},
				Action: templatesCheck,
			},
		},
	})
	register(&cli.Command{
		Name:  "generate-set",
		Usage: "generate a seeded, validated item set (JSON Lines) from templates",
		Description: `Writes a header line (seed, options, templates, every rejected draw with its reason, flagged
no-op clauses) and one instance per line. base is always generated for every index, so that
each variant instance pairs with the base instance of the same template and index.
The same templates, variants, instances and seed give a byte-identical file.

Examples:
   fragility generate-set --variants base,symbolic,noop --instances 50 --seed 1 --out set.jsonl
   fragility generate-set --templates ./gsm_symbolic_style --instances 10 --out - | head -3
   fragility generate-set --templates gsm8k_test.jsonl --instances 1 --out gsm8k.jsonl`,
		Flags: []cli.Flag{
			flagTemplates,
			&cli.StringFlag{Name: "variants", Value: "base,names,numbers,symbolic,paraphrase,noop,noop-seeming", Usage: "comma-separated variants"},
			&cli.IntFlag{Name: "instances", Value: 10, Usage: "instances per template and variant"},
			flagSeed,
			&cli.IntFlag{Name: "max-draws", Usage: "draws per instance before a template counts as unsatisfiable (0: default 1000)"},
			&cli.StringFlag{Name: "out", Value: "-", Usage: "output file; - for stdout"},
			&cli.BoolFlag{Name: "force", Usage: "overwrite an existing --out file"},
		},
		Action: generateSet,
	})
}

func templatesList(c *cli.Context) error {
	ts, err := templates.Load(c.String(flagTemplates.Name))
	if err != nil {
		return err
	}
	type row struct {
		ID       string   `json:"id"`
		Title    string   `json:"title"`
		Relation string   `json:"relation"`
		Steps    int      `json:"steps"`
		Format   string   `json:"format"`
		Source   string   `json:"source"`
		Answer   string   `json:"base_answer"`
		Variants []string `json:"variants"`
	}
	rows := make([]row, 0, len(ts))
	for _, t := range ts {
		r := row{t.ID, t.Title, t.Relation, t.Steps, t.Format, t.Source, t.BaseAnswer(), nil}
		for _, v := range templates.AllVariants {
			if ok, _ := t.Supports(v); ok {
				r.Variants = append(r.Variants, string(v))
			}
		}
		rows = append(rows, r)
	}
	if c.Bool(flagJSON.Name) {
		return printJSON(rows)
	}
	w := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "ID\tRELATION\tSTEPS\tANSWER\tVARIANTS\tTITLE")
	for _, r := range rows {
		fmt.Fprintf(w, "%s\t%s\t%d\t%s\t%s\t%s\n", r.ID, r.Relation, r.Steps, r.Answer, strings.Join(r.Variants, ","), r.Title)
	}
	return w.Flush()
}

func templatesShow(c *cli.Context) error {
	if c.NArg() != 1 {
		return usageError{"templates show needs one template ID (see `fragility templates list`)"}
	}
	ts, err := templates.Load(c.String(flagTemplates.Name))
	if err != nil {
		return err
	}
	t, err := templates.Find(ts, c.Args().First())
	if err != nil {
		return err
	}
	fmt.Print(t.Describe())
	return nil
}

func templatesReview(c *cli.Context) error {
	if c.NArg() == 0 && !c.Bool("all") {
		return usageError{"templates review needs one or more template IDs, or --all (see `fragility templates list`)"}
	}
	if c.NArg() > 0 && c.Bool("all") {
		return usageError{"templates review takes template IDs or --all, not both"}
	}
	ts, err := templates.Load(c.String(flagTemplates.Name))
	if err != nil {
		return err
	}
	pick := ts
	if !c.Bool("all") {
		pick = nil
		for _, id := range c.Args().Slice() {
			t, err := templates.Find(ts, id)
			if err != nil {
				return err
			}
			pick = append(pick, t)
		}
	}
	for i, t := range pick {
		out, err := t.Review(int64(c.Uint64(flagSeed.Name)))
		if err != nil {
			return err
		}
		if i > 0 {
			fmt.Println()
		}
		fmt.Print(out)
	}
	return nil
}

func templatesCheck(c *cli.Context) error {
	if c.NArg() != 1 {
		return usageError{"templates check needs one DIR or FILE (or builtin)"}
	}
	results, err := templates.CheckPath(c.Args().First(), c.Int("draws"), int64(c.Uint64(flagSeed.Name)))
	if err != nil {
		return err
	}
	failed := 0
	for _, r := range results {
		fmt.Println(r)
		if r.Err != nil {
			failed++
		}
	}
	fmt.Printf("%d checked: %d ok, %d FAIL\n", len(results), len(results)-failed, failed)
	if failed > 0 {
		return fmt.Errorf("%d of %d template checks failed", failed, len(results))
	}
	return nil
}

func generateSet(c *cli.Context) error {
	vs, err := templates.ParseVariants(c.String("variants"))
	if err != nil {
		return usageError{err.Error()}
	}
	if c.Int("instances") < 1 {
		return usageError{"--instances must be at least 1"}
	}
	if c.Int("max-draws") < 0 {
		return usageError{"--max-draws must not be negative"}
	}
	ts, err := templates.Load(c.String(flagTemplates.Name))
	if err != nil {
		return err
	}
	set, err := templates.Generate(ts, templates.Options{
		Variants: vs, Instances: c.Int("instances"), Seed: int64(c.Uint64(flagSeed.Name)), MaxDraws: c.Int("max-draws"),
	})
	if err != nil {
		return err
	}
	out := c.String("out")
	if out == "-" {
		err = set.WriteJSONL(os.Stdout)
	} else {
		err = set.WriteFile(out, c.Bool("force"))
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "fragility: %s\n", set.Summary())
	return nil
}
