// Command fragility measures how fragile a local language model's arithmetic
// reasoning is under controlled surface variants of word problems.
//
// Every subcommand is registered by a file of its own in this package (see
// register), so that the wiring of one concern stays next to its flags.
package main

import (
	"fmt"
	"os"

	"github.com/urfave/cli/v2"
)

// version is the tool version, recorded in every manifest; set with
// -ldflags "-X main.version=..." by the Makefile.
var version = "dev"

// commands holds the subcommands registered by this package's files.
var commands []*cli.Command

// register adds a subcommand to the application; called from init functions.
func register(c *cli.Command) { commands = append(commands, c) }

func newApp() *cli.App {
	return &cli.App{
		Name:                 "fragility",
		Usage:                "measure how fragile a local GGUF model's arithmetic reasoning is",
		Version:              version,
		Commands:             commands,
		EnableBashCompletion: true,
		ExitErrHandler:       func(*cli.Context, error) {},
	}
}

func main() {
	if err := newApp().Run(os.Args); err != nil {
		fmt.Fprintf(os.Stderr, "fragility: %v\n", err)
		os.Exit(exitCode(err))
	}
}
