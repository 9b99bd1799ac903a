package main

import (
	"fmt"
	"strings"
)

// count is n and the noun, plural unless n is 1 ("1 instance", "2
// instances", "3 batches").
func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	if strings.HasSuffix(noun, "ch") || strings.HasSuffix(noun, "s") {
		return fmt.Sprintf("%d %ses", n, noun)
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
