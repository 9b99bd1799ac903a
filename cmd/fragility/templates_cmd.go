package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/fragility/fragility/probe"
	"github.com/fragility/fragility/probe/rundir"
	"github.com/fragility/fragility/templates"
	"github.com/urfave/cli/v2"
)

// flagTemplates names where templates come from, for every command that
// reads them; repeated, the union is read (templatesSource).
var flagTemplates = &cli.StringSliceFlag{
	Name:    "templates",
	Aliases: []string{"t"},
	Usage:   "templates: builtin (the default), a directory, an own-format .yaml/.json file, a GSM-Symbolic .json file or a GSM8K .jsonl file; repeat it (or separate with commas) to read the union (a template ID found twice is refused)",
}

// flagTemplateIDs and flagLimit pick a subset of the templates read,
// without copying files.
var (
	flagTemplateIDs = &cli.StringFlag{Name: "template-ids", Usage: "comma-separated template IDs: only these templates (an unknown ID is refused); recorded in the manifest"}
	flagLimit       = &cli.IntFlag{Name: "limit", Usage: "only the first N templates (in load order, after --template-ids); 0: all; recorded in the manifest"}
	flagMaxItems    = &cli.IntFlag{Name: "max-items", Value: templates.DefaultMaxItems, Usage: "refuse a set of more instances than this (templates × variants × instances), before any is drawn"}
)

// templatesSource is the one template source string (package templates,
// JoinSources) that --templates names: "builtin" when it is not given.
func templatesSource(c *cli.Context) string {
	return templates.JoinSources(c.StringSlice(flagTemplates.Name))
}

// flagLevel is the GSM-Symbolic difficulty level of the templates read.
var flagLevel = &cli.StringFlag{
	Name:  "level",
	Usage: "GSM-Symbolic difficulty level of the files read: symbolic, p1 or p2 (default: the folder's name, else symbolic)",
}

// flagPrompt chooses the prompt preset of run and compare.
var flagPrompt = &cli.StringFlag{
	Name:  "prompt",
	Value: probe.PromptFragility,
	Usage: "prompt preset: fragility (our instruction, chat turns) or gsm-symbolic (the GSM-Symbolic protocol: its instruction line, 8-shot Q:/A: completion, stop at the next Q:; our own shots), or docqa (with --items: the passages numbered, the question, answer from the passages or say not stated)",
}

// flagShots is the number of worked examples put before each problem.
var flagShots = &cli.IntFlag{
	Name:  "shots",
	Usage: fmt.Sprintf("few-shot exemplars (our own problems): 0..%d with --prompt fragility, 0..%d with --prompt gsm-symbolic", probe.MaxShots, probe.MaxShotsFor(probe.PromptGSMSymbolic)),
	// The default depends on --prompt: cli would print the 0 that stands
	// for "not given".
	DefaultText: fmt.Sprintf("0 with --prompt fragility, %d with --prompt gsm-symbolic", probe.DefaultShotsFor(probe.PromptGSMSymbolic)),
}

// promptFlags reads --prompt, --shots and --level into cfg.
func promptFlags(c *cli.Context, cfg *rundir.Config) error {
	preset, err := probe.ParsePrompt(c.String(flagPrompt.Name))
	if err != nil {
		return usageError{"--prompt: " + err.Error()}
	}
	cfg.Prompt = preset
	cfg.Shots = probe.DefaultShotsFor(preset)
	if c.IsSet(flagShots.Name) {
		cfg.Shots = c.Int(flagShots.Name)
	}
	if cfg.Shots < 0 || cfg.Shots > probe.MaxShotsFor(preset) {
		return usageError{fmt.Sprintf("--shots must be between 0 and %d with --prompt %s, got %d", probe.MaxShotsFor(preset), preset, cfg.Shots)}
	}
	o, err := loadOptions(c)
	if err != nil {
		return err
	}
	cfg.Level, cfg.TemplateIDs, cfg.Limit = o.Level, o.IDs, o.Limit
	if c.IsSet(flagMaxItems.Name) {
		if c.Int(flagMaxItems.Name) < 1 {
			return usageError{"--max-items must be at least 1"}
		}
		cfg.MaxItems = c.Int(flagMaxItems.Name)
	}
	return nil
}

// loadOptions reads --level, --template-ids and --limit (the last two where
// the command has them).
func loadOptions(c *cli.Context) (templates.LoadOptions, error) {
	lv, err := templates.ParseLevel(c.String(flagLevel.Name))
	if err != nil {
		return templates.LoadOptions{}, usageError{"--level: " + err.Error()}
	}
	o := templates.LoadOptions{Level: lv, Limit: c.Int(flagLimit.Name)}
	if o.Limit < 0 {
		return o, usageError{fmt.Sprintf("--limit must be at least 1 (0: every template), got %d", o.Limit)}
	}
	if c.IsSet(flagTemplateIDs.Name) {
		var err error
		if o.IDs, err = templates.SplitNames(c.String(flagTemplateIDs.Name), "template ID", "template"); err != nil {
			return o, usageError{"--template-ids: " + err.Error()}
		}
		if len(o.IDs) == 0 {
			return o, usageError{"--template-ids needs at least one template ID"}
		}
	}
	return o, sourcesOnce(c.StringSlice(flagTemplates.Name))
}

// sourcesOnce refuses a --templates source named twice (the same cleaned
// path, or "builtin"): its templates would load twice and be refused as
// duplicate IDs, which hides the slip.
func sourcesOnce(srcs []string) error {
	seen := map[string]string{}
	for _, s := range srcs {
		k := filepath.Clean(s)
		if abs, err := filepath.Abs(k); err == nil && s != "builtin" {
			k = abs
		}
		if first, ok := seen[k]; ok {
			return usageError{fmt.Sprintf("--templates: %s is given twice (as %q and %q)", s, first, s)}
		}
		seen[k] = s
	}
	return nil
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
				Flags:  []cli.Flag{flagTemplates, flagTemplateIDs, flagLimit, flagLevel, flagJSON},
				Action: templatesList,
			},
			{
				Name:      "show",
				Usage:     "show one template: variables, domains, base values, conditions, answer, texts",
				ArgsUsage: "ID",
				Description: `Examples:
   fragility templates show baker
   fragility templates show gsms-0007 --templates ~/ml-gsm-symbolic/templates/symbolic/0007.json`,
				Flags:  []cli.Flag{flagTemplates, flagLevel},
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
				Flags: []cli.Flag{flagTemplates, flagLevel, flagSeed,
					&cli.BoolFlag{Name: "all", Usage: "review every template"}},
				Action: templatesReview,
			},
			{
				Name:      "check",
				Usage:     "validate template files and report, before any model runs",
				ArgsUsage: "DIR|FILE",
				Description: `Loads every template file separately (own format, GSM-Symbolic, GSM8K), checks the base
values, tries re-rolls of names and numbers, and generates one instance of every variant.
Prints one line per template: "ok", "warn" (imported; the recorded deviations follow, such as
annotated text that differs from the original question) or "FAIL" (refused, with the file, the
line and what is wrong), then a count line. Exits 1 when any template fails.

GSM-Symbolic files take their difficulty level (symbolic, p1, p2) from --level or from the name
of their folder, as in the templates folder of apple/ml-gsm-symbolic.

Examples:
   fragility templates check ./my-templates
   fragility templates check ~/ml-gsm-symbolic/templates/symbolic/0007.json --draws 1000
   fragility templates check ~/ml-gsm-symbolic/templates/p1
   fragility templates check --level p2 ./renamed-folder
   fragility templates check builtin`,
				Flags: []cli.Flag{
					&cli.IntFlag{Name: "draws", Value: 200, Usage: "symbolic re-rolls to try per template"},
					flagSeed, flagLevel,
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
each variant instance pairs with the base instance of the same template and index. With
--reference drawn (the default, as in run) noop, noop-seeming and paraphrase are drawn on the
symbolic instance of the same index (symbolic is then generated too) and pair with it; with
--reference original they are drawn at the template's own values and pair with base.
The same templates, variants, instances and seed give a byte-identical file.
A template in a folder that is refused when loaded, or that cannot generate an instance, is
left out with a one-line reason on stderr (and in the header's "skipped" list).

Examples:
   fragility generate-set --variants base,symbolic,noop --instances 50 --seed 1 --out set.jsonl
   fragility generate-set --templates ~/ml-gsm-symbolic/templates/symbolic --instances 10 --out - | head -3
   fragility generate-set --templates gsm8k_test.jsonl --instances 1 --out gsm8k.jsonl
   fragility generate-set --templates ~/ml-gsm-symbolic/templates/symbolic --variants noop-seeming --reference drawn --instances 50 --out noop.jsonl`,
		Flags: []cli.Flag{
			flagTemplates, flagTemplateIDs, flagLimit, flagLevel,
			&cli.StringFlag{Name: "variants", Value: "base,names,numbers,symbolic,paraphrase,noop,noop-seeming", Usage: "comma-separated variants"},
			&cli.IntFlag{Name: "instances", Value: 10, Usage: "instances per template and variant"},
			flagSeed, flagReference,
			&cli.IntFlag{Name: "max-draws", Usage: "draws per instance before a template counts as unsatisfiable (0: the default)", DefaultText: fmt.Sprint(templates.DefaultMaxDraws)},
			&cli.StringFlag{Name: "out", Value: "-", Usage: "output file; - for stdout"},
			&cli.BoolFlag{Name: "force", Usage: "overwrite an existing --out file"},
			flagMaxItems,
		},
		Action: generateSet,
	})
}

// loadInspect loads the templates that list, show and review inspect: a
// template that is refused when loaded is left out with one line on
// standard error (as run and generate-set leave it out), so that one bad
// file of a folder does not hide the others; an error only when nothing
// can be read (a missing path, a bad --level).
func loadInspect(c *cli.Context, o templates.LoadOptions) ([]*templates.Template, []templates.Skip, error) {
	ts, skipped, err := templates.LoadSkipping(templatesSource(c), o)
	if err != nil {
		return nil, nil, err
	}
	for _, s := range skipped {
		fmt.Fprintf(os.Stderr, "fragility: %s\n", s)
	}
	return ts, skipped, nil
}

// findInspect is templates.Find, with the reason when the template asked
// for is one that was refused when loaded.
func findInspect(ts []*templates.Template, skipped []templates.Skip, id string) (*templates.Template, error) {
	t, err := templates.Find(ts, id)
	if err == nil {
		return t, nil
	}
	for _, s := range skipped {
		if s.Template == id {
			return nil, fmt.Errorf("template %s was refused when loaded: %s", id, s.Reason)
		}
	}
	if len(skipped) > 0 {
		return nil, fmt.Errorf("%v (%d file(s) refused when loaded, listed above)", err, len(skipped))
	}
	return nil, err
}

func templatesList(c *cli.Context) error {
	o, err := loadOptions(c)
	if err != nil {
		return err
	}
	ts, _, err := loadInspect(c, o)
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
		Level    string   `json:"level,omitempty"`
		IDOrig   string   `json:"id_orig,omitempty"`
		Split    string   `json:"split"` // dev or test (Template.Split)
		Warnings []string `json:"warnings,omitempty"`
	}
	rows := make([]row, 0, len(ts))
	for _, t := range ts {
		r := row{t.ID, t.Title, t.Relation, t.Steps, t.Format, t.Source, t.BaseAnswer(), nil, t.Level, t.IDOrig, t.Split(), t.Warnings}
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
	fmt.Fprintln(w, "ID\tSPLIT\tRELATION\tSTEPS\tANSWER\tVARIANTS\tTITLE")
	for _, r := range rows {
		fmt.Fprintf(w, "%s\t%s\t%s\t%d\t%s\t%s\t%s\n", r.ID, r.Split, r.Relation, r.Steps, r.Answer, strings.Join(r.Variants, ","), r.Title)
	}
	return w.Flush()
}

func templatesShow(c *cli.Context) error {
	if c.NArg() != 1 {
		return usageError{"templates show needs one template ID (see `fragility templates list`)"}
	}
	o, err := loadOptions(c)
	if err != nil {
		return err
	}
	ts, skipped, err := loadInspect(c, o)
	if err != nil {
		return err
	}
	t, err := findInspect(ts, skipped, c.Args().First())
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
	o, err := loadOptions(c)
	if err != nil {
		return err
	}
	ts, skipped, err := loadInspect(c, o)
	if err != nil {
		return err
	}
	pick := ts
	if !c.Bool("all") {
		pick = nil
		for _, id := range c.Args().Slice() {
			t, err := findInspect(ts, skipped, id)
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
	o, err := loadOptions(c)
	if err != nil {
		return err
	}
	results, err := templates.CheckPathWith(c.Args().First(), c.Int("draws"), int64(c.Uint64(flagSeed.Name)), o)
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
	fmt.Println(templates.CheckSummary(results))
	if s := templates.NoopSetSummary(results); s != "" {
		fmt.Println(s)
	}
	if failed > 0 {
		return fmt.Errorf("%d of %d template checks failed", failed, len(results))
	}
	return nil
}

func generateSet(c *cli.Context) error {
	vs, err := templates.ParseVariants(c.String("variants"))
	if err != nil {
		return usageError{"--variants: " + err.Error()}
	}
	if err := outFileNotDir("--out", c.String("out")); err != nil {
		return err
	}
	if n := c.Int("instances"); n < 1 {
		return usageError{fmt.Sprintf("--instances must be at least 1, got %d", n)}
	}
	if c.Int("max-draws") < 0 {
		return usageError{"--max-draws must not be negative"}
	}
	ref := c.String(flagReference.Name)
	if ref != templates.ReferenceDrawn && ref != templates.ReferenceOriginal {
		return usageError{fmt.Sprintf("--reference %q: want drawn or original", ref)}
	}
	o, err := loadOptions(c)
	if err != nil {
		return err
	}
	ts, skipped, err := templates.LoadSkipping(templatesSource(c), o)
	if err != nil {
		return err
	}
	src := templatesSource(c)
	opt := templates.Options{
		Variants: vs, Instances: c.Int("instances"), Seed: int64(c.Uint64(flagSeed.Name)), MaxDraws: c.Int("max-draws"), Reference: ref,
		SkipFailing: templates.HasFolder(src), // a folder: leave out what cannot be drawn
	}
	if err := checkSetSize(len(ts), opt, c.Int(flagMaxItems.Name)); err != nil {
		return err
	}
	set, err := templates.Generate(ts, opt)
	if err != nil {
		return err
	}
	set.Skipped = append(skipped, set.Skipped...)
	for _, s := range set.Skipped {
		fmt.Fprintf(os.Stderr, "fragility: %s\n", s)
	}
	for _, n := range set.Notices() {
		fmt.Fprintf(os.Stderr, "fragility: %s\n", n)
	}
	if len(set.Instances) == 0 {
		return fmt.Errorf("templates %s: no instance could be generated", src)
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

// checkSetSize is templates.CheckSetSize as wrong usage (exit 2); a
// --max-items below 1 is wrong usage too.
func checkSetSize(nTemplates int, opt templates.Options, maxItems int) error {
	if maxItems < 1 {
		return usageError{"--max-items must be at least 1"}
	}
	if err := templates.CheckSetSize(nTemplates, opt, maxItems); err != nil {
		return usageError{err.Error()}
	}
	return nil
}
