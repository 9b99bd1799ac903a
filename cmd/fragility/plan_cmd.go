package main

import (
	"fmt"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/fragility/fragility/probe"
	"github.com/urfave/cli/v2"
)

func init() {
	register(&cli.Command{
		Name:  "plan",
		Usage: "how many templates and instances a run needs to detect a given drop (power analysis)",
		Description: `Computes, for a paired drop of --drop percentage points, the number of templates a run needs
to detect it with --power (default 80%) at --alpha (default 0.05, divided over the variants as
Holm's first step does, or not at all with --primary), for --instances instances per template,
and for 1, 2, 5, 10 and 20 instances. With --templates it also gives the minimum detectable
drop and the power at that size. The sizes use the t-based minimum detectable effect

   MDE = (t_{1−α/2,G−1} + t_{power,G−1}) · √((σ²_b + σ²_w/m) / G)

(Bloom 1995; Donner & Klar 2000) with σ²_b and σ²_w the between- and within-template variance of
the per-pair difference (base right − variant right): planning defaults (0.05 and 0.20) unless
given with --between/--within or estimated from a pilot run with --from RUN_DIR. Nothing is run.

Instances add distinct pairs only for variants that re-draw names or numbers (names, numbers,
symbolic, noop, noop-seeming); base and paraphrase prompts repeat across instances and count once, so only
more templates reduce the between-template part.

Examples:
   fragility plan --drop 5
   fragility plan --drop 10 --templates 20 --instances 5
   fragility plan --drop 10 --variants base,symbolic,noop --primary symbolic
   fragility plan --drop 10 --from runs/demo --json`,
		Flags: []cli.Flag{flagJSON,
			&cli.Float64Flag{Name: "drop", Usage: "the paired drop to detect, in percentage points (required)"},
			&cli.IntFlag{Name: "templates", Usage: "a number of templates to evaluate (minimum detectable drop and power at that size)"},
			&cli.IntFlag{Name: "instances", Aliases: []string{"n"}, Value: 2, Usage: "instances per template and variant"},
			&cli.StringFlag{Name: "variants", Value: "base,symbolic,noop", Usage: "the run's variants: the drop is tested with Holm's adjustment over those other than base"},
			&cli.StringFlag{Name: "primary", Usage: "a pre-specified primary variant: its drop is tested alone"},
			&cli.Float64Flag{Name: "alpha", Value: 1 - probe.DefaultConfidence, Usage: "family-wise level of the test"},
			&cli.Float64Flag{Name: "power", Value: probe.DefaultPower, Usage: "power to detect the drop"},
			&cli.Float64Flag{Name: "between", Value: probe.PlanningBetween, Usage: "between-template variance σ²_b of the per-pair 0/1 difference"},
			&cli.Float64Flag{Name: "within", Value: probe.PlanningWithin, Usage: "within-template variance σ²_w of the per-pair 0/1 difference"},
			&cli.StringFlag{Name: "from", Usage: "estimate σ²_b and σ²_w from this run directory's results.csv (pooled over models and variants)"},
			&cli.IntFlag{Name: "max-templates", Value: probe.DefaultMaxTemplates, Usage: "largest number of templates to consider"},
		},
		Action: planAction,
	})
}

func planAction(c *cli.Context) error {
	if c.NArg() != 0 {
		return usageError{fmt.Sprintf("plan takes no arguments, got %q", c.Args().First())}
	}
	if !c.IsSet("drop") {
		return usageError{"--drop D is required: the paired drop to detect, in percentage points"}
	}
	var variants []string
	for _, v := range strings.Split(c.String("variants"), ",") {
		if v = strings.TrimSpace(v); v != "" {
			variants = append(variants, v)
		}
	}
	o := probe.PlanOptions{
		DropPP: c.Float64("drop"), Templates: c.Int("templates"), Instances: c.Int("instances"),
		Variants: variants, Primary: c.String("primary"), Alpha: c.Float64("alpha"), Power: c.Float64("power"),
		Between: c.Float64("between"), Within: c.Float64("within"), MaxTemplates: c.Int("max-templates"),
		ComponentsSource: "planning defaults",
	}
	if c.IsSet("between") || c.IsSet("within") {
		o.ComponentsSource = "given"
	}
	if dir := c.String("from"); dir != "" {
		if c.IsSet("between") || c.IsSet("within") {
			return usageError{"--from and --between/--within both give the variance components: use one"}
		}
		sum, err := probe.Recompute(dir)
		if err != nil {
			return err
		}
		b, w, n, ok := probe.PooledComponents(sum)
		if !ok {
			return fmt.Errorf("%s: no paired differences that vary to estimate the variance components from (every pair agreed, or no variant other than base)", dir)
		}
		o.Between, o.Within = b, w
		o.ComponentsSource = fmt.Sprintf("estimated from %s (%d model × variant cells, %d templates)", dir, n, sum.Clusters)
	}
	if o.MaxTemplates < 2 {
		return usageError{"--max-templates must be at least 2"}
	}
	pl, err := probe.MakePlan(o)
	if err != nil {
		return usageError{err.Error()}
	}
	if c.Bool(flagJSON.Name) {
		return printJSON(pl)
	}
	printPlan(pl)
	return nil
}

// printPlan writes a plan for a reader.
func printPlan(pl *probe.Plan) {
	level := fmt.Sprintf("α = %s", trimFloat(pl.TestAlpha))
	if pl.Tests > 1 {
		level += fmt.Sprintf(" (%s Holm-adjusted over %d variants: its first step)", trimFloat(pl.Alpha), pl.Tests)
	} else if pl.Primary != "" {
		level += fmt.Sprintf(" (primary variant %s, tested alone)", pl.Primary)
	}
	fmt.Printf("To detect a paired drop of %s pp with %s%% power, two-sided at %s:\n\n", trimFloat(pl.DropPP), trimFloat(100*pl.Power), level)
	if pl.NeededTemplates > 0 {
		fmt.Printf("  %d templates with %d instances each (minimum detectable drop there: %.1f pp)\n\n", pl.NeededTemplates, pl.Instances, pl.MDEAtNeededPP)
	} else {
		fmt.Printf("  more than %d templates with %d instances each\n\n", pl.MaxTemplates, pl.Instances)
	}
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  instances per template\ttemplates needed\tminimum detectable drop there, pp")
	for _, r := range pl.ByInstances {
		if r.Templates == 0 {
			fmt.Fprintf(tw, "  %d\t> %d\t—\n", r.Instances, pl.MaxTemplates)
			continue
		}
		fmt.Fprintf(tw, "  %d\t%d\t%.1f\n", r.Instances, r.Templates, r.MDEPP)
	}
	tw.Flush()
	if pl.MDEPP != nil {
		fmt.Printf("\nWith %d templates and %d instances: minimum detectable drop %.1f pp; power to detect %s pp: %.0f%%.\n",
			pl.Templates, pl.Instances, *pl.MDEPP, trimFloat(pl.DropPP), *pl.PowerAtDropPct)
		if pl.Templates < pl.SignFlipMinTemplates {
			fmt.Printf("The sign-flip test cannot reach %s with fewer than %d templates, whatever the data.\n", trimFloat(pl.TestAlpha), pl.SignFlipMinTemplates)
		}
	}
	fmt.Printf("\nVariance components of the per-pair difference (base right − variant right): between templates %.4g, within %.4g (ICC %.2f); %s.\n",
		pl.Between, pl.Within, pl.ICC, pl.ComponentsSource)
	fmt.Printf("Minimum detectable drop: (t_{1−α/2,G−1} + t_{power,G−1}) · √((σ²_b + σ²_w/m)/G) (Bloom 1995; Donner & Klar 2000).\n")
	fmt.Printf("The sign-flip test needs at least %d templates to reach %s at all. Instances add distinct pairs only for variants that re-draw values (names, numbers, symbolic, noop, noop-seeming).\n",
		pl.SignFlipMinTemplates, trimFloat(pl.TestAlpha))
}

// trimFloat formats x with at most 4 decimals and no trailing zeros.
func trimFloat(x float64) string {
	s := fmt.Sprintf("%.4f", x)
	s = strings.TrimRight(s, "0")
	return strings.TrimSuffix(s, ".")
}
