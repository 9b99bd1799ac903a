package main

import (
	"fmt"
	"math"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/fragility/fragility/internal/suggest"
	"github.com/fragility/fragility/llm"
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
	app := &cli.App{
		Name:                 "fragility",
		Usage:                "measure how fragile a local GGUF model's arithmetic reasoning is",
		Version:              version,
		Commands:             commands,
		EnableBashCompletion: true,
		ExitErrHandler:       func(*cli.Context, error) {},
		OnUsageError:         onUsageError,
		// Reached only for an argument that names no command.
		Action: func(c *cli.Context) error {
			if c.Args().Present() {
				return usageError{fmt.Sprintf("unknown command %q (%ssee: fragility help)", c.Args().First(), didYouMeanCommand(c.Args().First(), c.App.Commands))}
			}
			return cli.ShowAppHelp(c)
		},
	}
	var setAll func([]*cli.Command)
	setAll = func(cs []*cli.Command) {
		for _, c := range cs {
			c.OnUsageError = onUsageError
			c.Before = refuseEmptyValues(c.Before)
			if len(c.Subcommands) > 0 && c.Action == nil {
				c.Action = unknownSubcommand
			}
			setAll(c.Subcommands)
		}
	}
	setAll(app.Commands)
	return app
}

// refuseEmptyValues wraps a command's Before: a string, path or list flag
// given an empty value on the command line (`--from ""`, `--templates ""`)
// is wrong usage (exit 2) naming the flag, not read as the flag left out
// (its default) or as a file named ""; so is an empty positional argument
// (`inspect ""` read the default model). Flags read from an environment
// variable are left to their command.
func refuseEmptyValues(next cli.BeforeFunc) cli.BeforeFunc {
	return func(c *cli.Context) error {
		for _, f := range c.Command.Flags {
			name := f.Names()[0]
			var env, values []string
			switch x := f.(type) {
			case *cli.StringFlag:
				env, values = x.EnvVars, []string{c.String(name)}
			case *cli.PathFlag:
				env, values = x.EnvVars, []string{c.Path(name)}
			case *cli.StringSliceFlag:
				env, values = x.EnvVars, c.StringSlice(name)
			default:
				continue
			}
			if len(env) == 0 && c.IsSet(name) && slices.ContainsFunc(values, blank) {
				return usageError{fmt.Sprintf("--%s was given an empty value (see: %s --help)", name, commandPath(c))}
			}
		}
		// A command's own positional arguments: not those of a subcommand
		// it passes them on to.
		if c.Command.Command(c.Args().First()) == nil && slices.ContainsFunc(c.Args().Slice(), blank) {
			return usageError{fmt.Sprintf("an empty argument was given (see: %s --help)", commandPath(c))}
		}
		if next != nil {
			return next(c)
		}
		return nil
	}
}

// blank reports whether a command-line value is empty or only spaces.
func blank(s string) bool { return strings.TrimSpace(s) == "" }

// unknownSubcommand is the action of a command made of subcommands
// (templates, models, protocol): reached with an argument, it names no
// subcommand, which is wrong usage (exit 2) as an unknown command is;
// without one it shows the command's help.
func unknownSubcommand(c *cli.Context) error {
	if c.Args().Present() {
		path := commandPath(c)
		return usageError{fmt.Sprintf("unknown command %q (%ssee: %s --help)", strings.TrimPrefix(path, "fragility ")+" "+c.Args().First(), didYouMeanCommand(c.Args().First(), c.Command.Subcommands), path)}
	}
	return cli.ShowSubcommandHelp(c)
}

// commandPath is the command line that names c's command, with its parent
// commands ("fragility protocol freeze").
func commandPath(c *cli.Context) string {
	var names []string
	for _, x := range c.Lineage() {
		if x.Command != nil && x.Command.Name != "" && x.Command.Name != "fragility" {
			names = append([]string{x.Command.Name}, names...)
		}
	}
	return strings.Join(append([]string{"fragility"}, names...), " ")
}

// didYouMeanCommand is "did you mean NAME?; " for the command among cs
// nearest to name (suggest.Closest), "" when none is near.
func didYouMeanCommand(name string, cs []*cli.Command) string {
	var names []string
	for _, c := range cs {
		if !c.Hidden {
			names = append(names, c.Names()...)
		}
	}
	if s := suggest.DidYouMean(name, "", names); s != "" {
		return s + "; "
	}
	return ""
}

// onUsageError turns a flag the CLI library could not parse into one line
// and exit code 2, instead of the whole help text on stdout.
// The flag package names a flag with one dash; fragility's flags are
// written with two everywhere. An unknown flag is told the command's flag
// nearest to it ("did you mean --instances?"): urfave/cli's own
// suggestion (App.Suggest) prints only without an OnUsageError, and
// always names some flag, however far.
func onUsageError(c *cli.Context, err error, _ bool) error {
	msg := oneDashFlag.ReplaceAllString(err.Error(), "$1--$2")
	if m := badFlagValue.FindStringSubmatch(msg); m != nil && c.Command != nil {
		if want := flagValueKind(c.Command.Flags, m[2]); want != "" {
			msg = m[1] + want
		}
	}
	if m := unknownFlag.FindStringSubmatch(msg); m != nil {
		flags := c.App.Flags
		if c.Command != nil && c.Command.Name != "" {
			flags = c.Command.Flags
		}
		names := []string{"help"}
		for _, f := range flags {
			names = append(names, f.Names()...)
		}
		if s := suggest.DidYouMean(m[1], "--", names); s != "" {
			msg += "; " + s
		}
	}
	return usageError{fmt.Sprintf("%s (see: %s --help)", msg, commandPath(c))}
}

// unknownFlag matches the flag package's message for a flag the command
// does not have (after oneDashFlag), and the flag's name.
var unknownFlag = regexp.MustCompile(`^flag provided but not defined: --?([^ ]+)$`)

// badFlagValue matches the flag package's message for a value it could not
// parse ("invalid value "x" for flag --n: parse error"): the part to keep
// and the flag's name.
var badFlagValue = regexp.MustCompile(`^(invalid (?:boolean )?value ".*" for (?:flag )?--([A-Za-z][A-Za-z0-9-]*): ).*$`)

// flagValueKind says what a flag of the given name among flags takes, in
// place of strconv's "parse error" or "value out of range"; "" for a flag
// it does not know.
func flagValueKind(flags []cli.Flag, name string) string {
	for _, f := range flags {
		if !slices.Contains(f.Names(), name) {
			continue
		}
		switch f.(type) {
		case *cli.IntFlag:
			return "not a whole number"
		case *cli.Uint64Flag:
			return fmt.Sprintf("not a whole number from 0 to %d", uint64(math.MaxUint64))
		case *cli.Float64Flag:
			return "not a number"
		case *cli.BoolFlag:
			return "not true or false"
		}
	}
	return ""
}

// oneDashFlag matches a flag name written with one dash in a flag-package
// message ("flag provided but not defined: -x", "invalid value ... for flag -n").
var oneDashFlag = regexp.MustCompile(`(^|[\s:])-([A-Za-z][A-Za-z0-9-]*)`)

// flagsFirst moves the flags of a command line before its positional
// arguments, so that `fragility report runs/x --json` means what it says:
// urfave/cli v2 stops reading flags at the first positional argument. A flag
// that takes a value keeps the value after it; "--" ends the flags.
func flagsFirst(app *cli.App, args []string) []string {
	if len(args) < 2 {
		return args
	}
	cmd := app.Command(args[1])
	start := 2
	for cmd != nil && len(args) > start {
		sub := cmd.Command(args[start])
		if sub == nil {
			break
		}
		cmd, start = sub, start+1
	}
	if cmd == nil {
		return args
	}
	isBool := map[string]bool{"help": true, "h": true}
	for _, f := range cmd.Flags {
		if _, ok := f.(*cli.BoolFlag); ok {
			for _, n := range f.Names() {
				isBool[n] = true
			}
		}
	}
	var flags, pos []string
	rest := args[start:]
	for i := 0; i < len(rest); i++ {
		a := rest[i]
		if a == "--" {
			pos = append(pos, rest[i+1:]...)
			break
		}
		if len(a) > 1 && a[0] == '-' && !isNumber(a) {
			flags = append(flags, a)
			name := strings.TrimLeft(a, "-")
			if !strings.Contains(name, "=") && !isBool[name] && i+1 < len(rest) {
				flags = append(flags, rest[i+1])
				i++
			}
			continue
		}
		pos = append(pos, a)
	}
	out := append(append([]string{}, args[:start]...), flags...)
	if len(pos) > 0 {
		out = append(append(out, "--"), pos...)
	}
	return out
}

func isNumber(s string) bool {
	_, err := strconv.ParseFloat(s, 64)
	return err == nil
}

func main() {
	app := newApp()
	if note := llm.ThreadsEnvNote(); note != "" {
		fmt.Fprintf(os.Stderr, "fragility: %s\n", note)
	}
	startCPUProfile()
	err := app.Run(flagsFirst(app, os.Args))
	stopCPUProfile()
	if err != nil {
		fmt.Fprintf(os.Stderr, "fragility: %v\n", err)
		os.Exit(exitCode(err))
	}
}
