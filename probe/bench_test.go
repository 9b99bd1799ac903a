package probe

import (
	"fmt"
	"testing"

	"github.com/fragility/fragility/probe/answer"
	"github.com/fragility/fragility/probe/results"
	"github.com/fragility/fragility/probe/summary"
)

// BenchmarkExtract measures answer extraction on a typical step-by-step
// response (ns/op per response).
func BenchmarkExtract(b *testing.B) {
	resp := "Maria sold 36 loaves at $4 each, so she made 36 * 4 = $144 in the morning.\n" +
		"The rest, 60 - 36 = 24 loaves, sold at $2 each: 24 * 2 = $48.\n" +
		"In total she made 144 + 48 = $192.\nFinal answer: 192\n"
	for i := 0; i < b.N; i++ {
		if e := answer.Extract(resp); e.Value != "192" {
			b.Fatal(e)
		}
	}
}

// BenchmarkSummarize measures the statistics of a demo-sized run and of a
// larger one (2 models × 20 templates × 6 variants × 10 instances), with the
// default 2000 cluster-bootstrap resamples.
func BenchmarkSummarize(b *testing.B) {
	for _, size := range []struct{ models, templates, instances int }{{1, 6, 2}, {2, 20, 10}} {
		var trials []results.Trial
		for m := 0; m < size.models; m++ {
			for t := 0; t < size.templates; t++ {
				for _, v := range []string{"base", "names", "numbers", "symbolic", "paraphrase", "noop"} {
					for i := 0; i < size.instances; i++ {
						trials = append(trials, results.Trial{
							ItemID: fmt.Sprintf("m%d/t%d/%s/%d", m, t, v, i), ModelPath: fmt.Sprintf("m%d.gguf", m),
							ModelName: fmt.Sprintf("m%d", m), TemplateID: fmt.Sprintf("t%d", t), Variant: v, Instance: i,
							Correct: (t+i+m)%3 != 0, Rule: answer.RuleFinalAnswer, Tokens: 40,
							EntropyMean: float64(t%5) / 3, AnswerEntropyMean: float64(i%4) / 5,
							DDCTop: "500", DDCRunnerUp: "300", DDCMargin: 0.01 * float64(t%7),
						})
					}
				}
			}
		}
		b.Run(fmt.Sprintf("trials=%d", len(trials)), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if _, err := summary.Summarize(trials, summary.DefaultParams(1)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
