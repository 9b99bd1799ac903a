package main

import (
	"fmt"
	"os"

	"github.com/atotto/clipboard"
)

// copyToClipboard puts text on the system clipboard (github.com/atotto/clipboard:
// xclip, xsel or wl-copy on Linux, pbcopy on macOS) and says plainly when
// there is none.
func copyToClipboard(text string) {
	if clipboard.Unsupported {
		fmt.Fprintln(os.Stderr, "fragility: --copy: no system clipboard on this machine (install xclip, xsel or wl-clipboard); the narrative is in narrative.md")
		return
	}
	if err := clipboard.WriteAll(text); err != nil {
		fmt.Fprintf(os.Stderr, "fragility: --copy: no usable clipboard here (%v); the narrative is in narrative.md\n", err)
		return
	}
	fmt.Fprintln(os.Stderr, "fragility: narrative copied to the clipboard")
}
