package probe

import (
	"cmp"

	"github.com/fragility/fragility/models"
	"github.com/fragility/fragility/probe/rundir"
	"github.com/fragility/fragility/templates"
)

// DatasetFiles resolves the names of released GSM-Symbolic instance files
// (run --dataset) into the files to read with their levels: a path is read
// as it is, at level when given, else at the level its folder's name says
// (main/ or symbolic/, p1/, p2/), else symbolic; a name
// hf:datasets/ORG/NAME[@REV][:CONFIG] is the file CONFIG/test.jsonl of the
// dataset's snapshot in the Hugging Face hub cache (models.LookupHFDataset),
// at the level its config names (main: symbolic, p1, p2), else at level,
// else symbolic. A level that contradicts a config's is an OptionError.
func DatasetFiles(names []string, level string) ([]templates.DatasetFile, error) {
	lv, err := templates.ParseLevel(level)
	if err != nil {
		return nil, OptionError{"--level: " + err.Error()}
	}
	var out []templates.DatasetFile
	for _, name := range names {
		if !models.IsHFDataset(name) {
			fl, err := templates.DatasetFileLevel(name, lv)
			if err != nil {
				return nil, err
			}
			out = append(out, templates.DatasetFile{Name: name, Path: name, Level: fl})
			continue
		}
		src, err := models.LookupHFDataset(name)
		if err != nil {
			return nil, err
		}
		fl := templates.DatasetLevel(src.Config)
		switch {
		case fl != "" && lv != "" && lv != fl:
			return nil, OptionErrorf("--level %s: %s is config %s, level %s", lv, name, src.Config, fl)
		case fl == "" && lv != "":
			fl = lv
		case fl == "":
			fl = templates.LevelSymbolic
		}
		out = append(out, templates.DatasetFile{Name: name, Path: src.Path, Level: fl})
	}
	return out, nil
}

// LoadDataset reads and checks the released instances that names give
// (DatasetFiles, templates.ReadDataset).
func LoadDataset(names []string, level string) (*templates.Dataset, error) {
	files, err := DatasetFiles(names, level)
	if err != nil {
		return nil, err
	}
	for i, f := range files {
		for _, g := range files[:i] {
			if g.Path == f.Path {
				return nil, OptionErrorf("--dataset %s is given twice (also as %s)", f.Name, g.Name)
			}
		}
	}
	return templates.ReadDataset(files)
}

// DatasetSet is GenerateSet for a run on released instances
// (Config.Datasets): their item set (templates.Dataset.Set), nothing
// drawn. Templates, document items and a split are not read with them;
// a variant other than base and symbolic, or more instances than the
// dataset holds, or more instances than --max-items, is an OptionError.
func DatasetSet(cfg rundir.Config) (*templates.Set, error) {
	switch {
	case cfg.Items != "":
		return nil, OptionError{"--dataset and --items: give one or the other"}
	case cfg.Templates != "" && cfg.Templates != "builtin":
		return nil, OptionError{"--dataset and --templates: give one or the other (a dataset's released instances are not drawn from templates)"}
	case cfg.Split != "":
		return nil, OptionError{"--split chooses templates by a hash of their text; it is not for --dataset"}
	}
	d, err := LoadDataset(cfg.Datasets, cfg.Level)
	if err != nil {
		return nil, err
	}
	set, err := d.Set(templates.DatasetOptions{Variants: cfg.Variants, Instances: cfg.Instances, IDs: cfg.TemplateIDs, Limit: cfg.Limit, Seed: cfg.Seed})
	if err != nil {
		return nil, OptionError{err.Error()}
	}
	if limit := cmp.Or(cfg.MaxItems, templates.DefaultMaxItems); len(set.Instances) > limit {
		return nil, OptionErrorf("--dataset: %d instances, more than %d, the cap: --max-items N raises it", len(set.Instances), limit)
	}
	return set, nil
}

// DatasetPairs are the templates and the pairs per template that a
// variant's drop against base has in a run on released instances: each
// original is asked once, at instance 0 of its first template, so only
// that template's instance-0 draw is paired with it (the paper's view
// pairs every dataset with its original by id_orig, outside that test).
func DatasetPairs(set *templates.Set) (tmpls, instances int) {
	for _, in := range set.Instances {
		if in.Variant == templates.VariantBase {
			tmpls++
		}
	}
	return tmpls, 1
}
