package embed

import (
	"strings"
	"testing"
)

// fiftyWords is a 50-word arithmetic word problem, the size of a typical
// probe prompt.
var fiftyWords = strings.Join(strings.Fields(`Liam bakes 24 muffins for the town fair on Saturday.
He sells 9 muffins to his neighbours and gives 3 to his younger sister before lunch.
Later his aunt buys half of the remaining muffins for her office party.
How many muffins does Liam still have left to sell there?`), " ")

// BenchmarkEmbed50Words measures embeddings per second for one 50-word
// prompt on the default embedder (reported as embeddings/s).
func BenchmarkEmbed50Words(b *testing.B) {
	if n := len(strings.Fields(fiftyWords)); n != 50 {
		b.Fatalf("prompt has %d words, want 50", n)
	}
	e := openDefault(b)
	texts := []string{fiftyWords}
	if _, err := e.Embed(texts); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := e.Embed(texts); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "embeddings/s")
}
