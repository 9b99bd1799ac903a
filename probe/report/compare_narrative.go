package report

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/fragility/fragility/probe/compare"
)

// CompareLines is the comparison as the terminal shows it after the
// verdicts: one line naming the reference and what was scored, then one
// line per other file with its KL divergence from the reference (mean,
// median and 99th percentile, nats per token) and the share of tokens with
// the same most likely token; the tables are in compare.md.
func CompareLines(c *compare.Comparison) string {
	var b strings.Builder
	r := c.Models[c.Reference]
	_, tokens := scoredOf(c)
	fmt.Fprintf(&b, "Quantization comparison against %s (%s), on the reference's own %d tokens:\n", r.Label, cmpOr(r.Quantization, "unknown type"), tokens)
	for _, m := range c.Models {
		if a := m.Agreement; a != nil {
			fmt.Fprintf(&b, "- %s (%s): KL(ref‖q) %s nats per token (median %s, 99%% %s), the same most likely token %s%% of the time.\n",
				m.Label, cmpOr(m.Quantization, "unknown type"), gnum(a.KL.Mean), gnum(a.KL.Median), gnum(a.KL.P99), fnum(a.SameTopPct, 1))
		}
	}
	return b.String()
}

// CompareNarrative renders c as a Markdown section: how the reference was
// chosen and what was measured, the agreement table, the KL percentiles,
// and accuracy with drops side by side. It uses nothing but c.
func CompareNarrative(c *compare.Comparison) string {
	var b strings.Builder
	r := c.Models[c.Reference]
	b.WriteString("## Quantization comparison\n\n")
	fmt.Fprintf(&b, "Reference: `%s` (%s, %s bits per weight), %s.", r.Path, cmpOr(r.Quantization, "unknown type"), fnum(r.BitsPerWeight, 2), c.ReferenceRule)
	for _, m := range c.Models {
		if !m.Reference && m.BitsPerWeight > r.BitsPerWeight {
			fmt.Fprintf(&b, " Note: `%s` has more bits per weight than the reference; if it was requantized from a lower-precision file it cannot be more precise than that file.", filepath.Base(m.Path))
		}
	}
	items, tokens := scoredOf(c)
	fmt.Fprintf(&b, " Every other file is fed the reference's own prompts and generated tokens (teacher forcing) on %d items, %d tokens, and at each token its next-token distribution over the full vocabulary (%d entries) is compared with the reference's, as llama.cpp's `llama-perplexity --kl-divergence` does.\n\n", items, tokens, c.NVocab)
	b.WriteString("- KL(ref‖q) = Σ p_ref (ln p_ref − ln q) per token, in nats (log-softmax in float64); 0 means identical distributions.\n")
	b.WriteString("- Same top: share of tokens where both files' most likely token is the same. Δp: p_q − p_ref of the reference's token (a probability, RMS as well as mean). ΔH: entropy of the file minus the reference's, in bits.\n")
	b.WriteString("- ± is one standard error over tokens treated as independent (they are not: tokens of one answer are correlated), so it understates the uncertainty.\n\n")

	b.WriteString("| file | type | bits/weight | KL mean ± SE, nats | KL median | KL 99% | KL max | same top, % | Δp mean | RMS Δp | ΔH mean, bits |\n|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, m := range c.Models {
		a := m.Agreement
		if a == nil {
			fmt.Fprintf(&b, "| %s (reference) | %s | %s | — | — | — | — | — | — | — | — |\n", m.Label, m.Quantization, fnum(m.BitsPerWeight, 2))
			continue
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s ± %s | %s | %s | %s | %s ± %s | %s ± %s | %s | %s ± %s |\n", m.Label, m.Quantization, fnum(m.BitsPerWeight, 2),
			gnum(a.KL.Mean), gnum(a.KL.SE), gnum(a.KL.Median), gnum(a.KL.P99), gnum(a.KL.Max),
			fnum(a.SameTopPct, 2), fnum(a.SameTopSE, 2), signedG(a.DeltaP.Mean), gnum(a.DeltaP.SE), gnum(a.DeltaP.RMS), signedG(a.DeltaH.Mean), gnum(a.DeltaH.SE))
	}
	b.WriteString("\n### KL(ref‖q) percentiles, nats\n\n| file | max | 99.9% | 99% | 95% | 90% | median | 10% | 5% | 1% | 0.1% | min |\n|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, m := range c.Models {
		if a := m.Agreement; a != nil {
			k := a.KL
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", m.Label,
				gnum(k.Max), gnum(k.P999), gnum(k.P99), gnum(k.P95), gnum(k.P90), gnum(k.Median), gnum(k.P10), gnum(k.P5), gnum(k.P1), gnum(k.P01), gnum(k.Min))
		}
	}
	b.WriteString("\n### Accuracy and drops side by side\n\nAccuracy in % (k/n distinct prompts) per variant, every variant of the run; the drop is the accuracy of the variant's reference (base, or the symbolic instance the variant was drawn on, as the column's head says) minus the variant's, in percentage points (positive: worse than its reference). Intervals and verdicts are in narrative.md; the paired differences with the reference model, tested, follow the table.\n\n| file |")
	for _, v := range c.Variants {
		fmt.Fprintf(&b, " %s |", variantHead(c, v))
	}
	b.WriteString("\n|---|" + strings.Repeat("---|", len(c.Variants)) + "\n")
	for _, m := range c.Models {
		name := m.Label
		if m.Reference {
			name += " (reference)"
		}
		fmt.Fprintf(&b, "| %s |", name)
		for _, v := range c.Variants {
			va := compare.FindAccuracy(m.Accuracy, v)
			cell := "n/a"
			if va.Pct != nil {
				cell = fmt.Sprintf("%s (%s/%d)", fnum(*va.Pct, 1), countNum(va.K), va.N)
			}
			if va.DropPP != nil {
				cell += ", drop " + signed(*va.DropPP, 1) + " pp"
			}
			fmt.Fprintf(&b, " %s |", cell)
		}
		b.WriteString("\n")
	}
	if len(c.Differences) > 0 {
		b.WriteString("\n### Paired differences with the reference\n\n")
		writeModelPairs(&b, c.Differences, fnum(100*c.Confidence, 0)+"%", 1-c.Confidence)
	}
	return b.String()
}

// variantHead is the head of variant v's column in the side-by-side table:
// the variant, and what its drop is taken against when that is not base
// ("noop (against symbolic)").
func variantHead(c *compare.Comparison, v string) string {
	for _, m := range c.Models {
		if a := compare.FindAccuracy(m.Accuracy, v).Against; a != "" && a != "base" {
			return v + " (against " + a + ")"
		}
	}
	return v
}

// gnum formats a small statistic with 4 significant digits.
func gnum(x float64) string { return strconv.FormatFloat(x, 'g', 4, 64) }

func signedG(x float64) string {
	s := gnum(x)
	if x > 0 {
		s = "+" + s
	}
	return s
}

// scoredOf is the items and tokens of the reference the other files were
// scored on (the first agreement's; 0, 0 without one).
func scoredOf(c *compare.Comparison) (items, tokens int) {
	for _, m := range c.Models {
		if m.Agreement != nil {
			return m.Agreement.Items, m.Agreement.Tokens
		}
	}
	return 0, 0
}
