package templates

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/fragility/fragility/internal/jsonerr"
	"github.com/fragility/fragility/internal/readlimit"
)

// The released GSM-Symbolic instances (Mirzadeh et al., ICLR 2025; the
// Hugging Face dataset apple/GSM-Symbolic, configs main, p1 and p2, one
// test.jsonl each) are the instances the paper ran, not templates to draw
// from: each line is the instance-th instance (the paper's dataset index,
// 0–49) of template id, with its question and worked answer ending
// "#### N", and the GSM8K original it restates (original_id,
// original_question, original_answer). A run on them asks each instance
// as variant symbolic at its file's level, and each original once as base
// (level symbolic, instance 0), paired with its instances by original_id.
// Nothing is drawn: no other variant exists for them.

// DatasetFormat is TemplateInfo.Format of a template whose instances come
// from a released dataset file.
const DatasetFormat = "gsm-symbolic-dataset"

// DatasetVariants are the variants a released dataset has: the originals
// (base) and the released instances (symbolic).
var DatasetVariants = []Variant{VariantBase, VariantSymbolic}

// datasetFields are the fields every line of a released dataset file has.
var datasetFields = []string{"id", "instance", "question", "answer", "original_id", "original_question", "original_answer"}

// DatasetFile is one file of released instances to read.
type DatasetFile struct {
	Name  string // how it was named (a path, or hf:datasets/ORG/NAME:CONFIG), for messages
	Path  string // the file read
	Level string // its difficulty level: symbolic, p1 or p2
}

// DatasetLevel is the difficulty level a dataset config or folder name
// stands for: main or symbolic is symbolic, p1 and p2 themselves (any
// case); "" for any other name.
func DatasetLevel(name string) string {
	switch l := strings.ToLower(strings.TrimSpace(name)); l {
	case "main", LevelSymbolic:
		return LevelSymbolic
	case LevelP1, LevelP2:
		return l
	}
	return ""
}

// DatasetFileLevel is the level of the dataset file path: level when
// given (symbolic, p1 or p2), else the one its folder's name says (main/,
// symbolic/, p1/, p2/, as the configs of apple/GSM-Symbolic are laid
// out), else symbolic.
func DatasetFileLevel(path, level string) (string, error) {
	lv, err := ParseLevel(level)
	if err != nil {
		return "", err
	}
	if lv != "" {
		return lv, nil
	}
	if lv = DatasetLevel(filepath.Base(filepath.Dir(path))); lv != "" {
		return lv, nil
	}
	return LevelSymbolic, nil
}

// Dataset is the released instances of one or more files, checked.
type Dataset struct {
	Files     []DatasetFile
	templates []*dsTemplate          // by level (symbolic, p1, p2), then id
	originals map[string]*dsOriginal // by original_id
}

// dsTemplate is one template of a dataset: its released instances, by
// instance index.
type dsTemplate struct {
	id, rawID, level, idOrig string
	file                     DatasetFile
	line                     int // its first line
	steps                    int
	title, origQuestion      string
	instances                []dsInstance
}

// dsInstance is one released instance.
type dsInstance struct {
	index            int
	question, answer string
	line             int
}

// dsOriginal is a GSM8K original, as its first line gives it.
type dsOriginal struct {
	id, question, answer string
	steps                int
	file                 DatasetFile
	line                 int
}

// datasetRow is one line of a released dataset file.
type datasetRow struct {
	ID               json.RawMessage `json:"id"`
	Instance         json.RawMessage `json:"instance"`
	Question         *string         `json:"question"`
	Answer           *string         `json:"answer"`
	OriginalID       json.RawMessage `json:"original_id"`
	OriginalQuestion *string         `json:"original_question"`
	OriginalAnswer   *string         `json:"original_answer"`
	Format           string          `json:"format"`
}

// missing lists the dataset fields the row lacks.
func (r *datasetRow) missing() []string {
	var out []string
	for i, present := range []bool{r.ID != nil, r.Instance != nil, r.Question != nil, r.Answer != nil, r.OriginalID != nil, r.OriginalQuestion != nil, r.OriginalAnswer != nil} {
		if !present {
			out = append(out, datasetFields[i])
		}
	}
	return out
}

// ReadDataset reads and checks the released instances of files. Every
// problem is one error naming the file and line: a line that is not JSON
// or not of this shape (a GSM8K row, a generated item set, another
// dataset), a question that is empty, an answer or original answer that
// does not end with "#### N", an instance that is not a whole number from
// 0, an (id, instance) pair given twice at one level (naming both lines),
// a template whose lines name different originals, or an original whose
// answer differs between lines; a file without lines.
func ReadDataset(files []DatasetFile) (*Dataset, error) {
	d := &Dataset{Files: files, originals: map[string]*dsOriginal{}}
	byKey := map[[2]string]*dsTemplate{} // (level, id) -> template
	type at struct {
		file DatasetFile
		line int
	}
	seen := map[string]at{} // level \x00 id \x00 instance -> where
	for _, f := range files {
		if _, err := ParseLevel(f.Level); err != nil || f.Level == "" {
			return nil, fmt.Errorf("%s: unknown level %q (known: symbolic, p1, p2)", f.Name, f.Level)
		}
		where := f.Path // a hf: dataset's lines are named in the snapshot's file
		data, err := readlimit.ReadFile(f.Path, maxFileSize)
		if readlimit.IsTooLarge(err) {
			return nil, err
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", where, BarePathError(err))
		}
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(make([]byte, 0, 64*1024), 16<<20)
		line, rows := 0, 0
		for sc.Scan() {
			line++
			b := bytes.TrimSpace(sc.Bytes())
			if len(b) == 0 {
				continue
			}
			rows++
			lerr := func(format string, args ...any) error { return fileError(where, line, format, args...) }
			var r datasetRow
			if err := json.Unmarshal(b, &r); err != nil {
				return nil, lerr("not a released GSM-Symbolic instance: %s", jsonerr.Text(b, err))
			}
			if r.Format == SetFormat {
				return nil, lerr("this is a generated item set (set.jsonl), not released GSM-Symbolic instances")
			}
			if miss := r.missing(); len(miss) > 0 {
				if len(miss) == 5 && r.Question != nil && r.Answer != nil {
					return nil, lerr("a GSM8K row (question and answer only), not a released GSM-Symbolic instance (each line holds %s); GSM8K rows are read with --templates", strings.Join(datasetFields, ", "))
				}
				return nil, lerr("not a released GSM-Symbolic instance: no %s (each line holds %s)", strings.Join(miss, ", "), strings.Join(datasetFields, ", "))
			}
			id, ok := datasetID(r.ID)
			if !ok {
				return nil, lerr("id: want a number or a non-empty string, got %s", shorten(string(r.ID), 40))
			}
			oid, ok := datasetID(r.OriginalID)
			if !ok {
				return nil, lerr("original_id: want a number or a non-empty string, got %s", shorten(string(r.OriginalID), 40))
			}
			idx, ok := datasetIndex(r.Instance)
			if !ok {
				return nil, lerr("instance: want a whole number from 0, got %s", shorten(string(r.Instance), 40))
			}
			if strings.TrimSpace(*r.Question) == "" {
				return nil, lerr("empty question")
			}
			if strings.TrimSpace(*r.OriginalQuestion) == "" {
				return nil, lerr("empty original_question")
			}
			ans, err := datasetAnswer(*r.Answer)
			if err != nil {
				return nil, lerr("answer %v", err)
			}
			oans, err := datasetAnswer(*r.OriginalAnswer)
			if err != nil {
				return nil, lerr("original_answer %v", err)
			}
			lineOf := func(g DatasetFile, n int) string { // another line, named in this file's error
				if g.Path != f.Path {
					return fmt.Sprintf("%s:%d", g.Path, n)
				}
				return fmt.Sprintf("line %d", n)
			}
			key := f.Level + "\x00" + id + "\x00" + strconv.Itoa(idx)
			if prev, ok := seen[key]; ok {
				return nil, lerr("template %s, instance %d given twice at level %s (first at %s)", id, idx, f.Level, lineOf(prev.file, prev.line))
			}
			seen[key] = at{f, line}
			t := byKey[[2]string{f.Level, id}]
			if t == nil {
				t = &dsTemplate{id: datasetTemplateID(id, f.Level), rawID: id, level: f.Level, idOrig: oid, file: f, line: line,
					title: shorten(*r.OriginalQuestion, 60), origQuestion: *r.OriginalQuestion, steps: datasetSteps(*r.Answer, *r.OriginalAnswer, f.Level)}
				byKey[[2]string{f.Level, id}] = t
				d.templates = append(d.templates, t)
			} else if t.idOrig != oid {
				return nil, lerr("template %s names original_id %s, its line %d names %s: a template restates one original", id, oid, t.line, t.idOrig)
			} else if t.origQuestion != *r.OriginalQuestion {
				return nil, lerr("template %s gives its original_question in other words than at its line %d", id, t.line)
			}
			if o := d.originals[oid]; o == nil {
				d.originals[oid] = &dsOriginal{id: oid, question: *r.OriginalQuestion, answer: oans, file: f, line: line,
					steps: max(1, strings.Count(*r.OriginalAnswer, "<<"))}
			} else if o.answer != oans {
				return nil, lerr("original %s has the answer %s here and %s at %s", oid, oans, o.answer, lineOf(o.file, o.line))
			}
			t.instances = append(t.instances, dsInstance{index: idx, question: *r.Question, answer: ans, line: line})
		}
		if err := sc.Err(); err != nil {
			return nil, fileError(where, line+1, "%v", err)
		}
		if rows == 0 {
			return nil, fileError(where, 0, "no lines: not a released GSM-Symbolic instances file")
		}
	}
	if len(d.templates) == 0 {
		return nil, fmt.Errorf("no dataset file given")
	}
	order := []string{LevelSymbolic, LevelP1, LevelP2}
	slices.SortStableFunc(d.templates, func(a, b *dsTemplate) int {
		return cmp.Or(cmp.Compare(slices.Index(order, a.level), slices.Index(order, b.level)), compareIDs(a.rawID, b.rawID))
	})
	for _, t := range d.templates {
		slices.SortFunc(t.instances, func(a, b dsInstance) int { return cmp.Compare(a.index, b.index) })
	}
	return d, nil
}

// compareIDs orders template ids numerically when both are whole
// numbers, else as strings.
func compareIDs(a, b string) int {
	x, errA := strconv.Atoi(a)
	y, errB := strconv.Atoi(b)
	if errA == nil && errB == nil {
		return cmp.Compare(x, y)
	}
	return strings.Compare(a, b)
}

// datasetID reads an id: a JSON number or a non-empty string.
func datasetID(raw json.RawMessage) (string, bool) {
	var n json.Number
	if json.Unmarshal(raw, &n) == nil {
		return n.String(), true
	}
	var s string
	if json.Unmarshal(raw, &s) == nil && strings.TrimSpace(s) != "" {
		return strings.TrimSpace(s), true
	}
	return "", false
}

// datasetIndex reads an instance index: a whole JSON number from 0.
func datasetIndex(raw json.RawMessage) (int, bool) {
	var n json.Number
	if json.Unmarshal(raw, &n) != nil {
		return 0, false
	}
	i, err := strconv.Atoi(n.String())
	return i, err == nil && i >= 0
}

// datasetAnswer is the exact decimal after "#### " at the end of a worked
// answer, as GSM8K writes it (thousands commas, a U+2212 minus sign).
func datasetAnswer(s string) (string, error) {
	m := finalAnswerRE.FindStringSubmatch(s)
	if m == nil {
		return "", fmt.Errorf("does not end with \"#### N\"")
	}
	n, ok := parseNumber(strings.Replace(m[1], "\u2212", "-", 1))
	if !ok {
		return "", fmt.Errorf("%q after #### is not a number", m[1])
	}
	out, ok := formatRat(n)
	if !ok {
		return "", fmt.Errorf("%q has no exact decimal form", m[1])
	}
	return out, nil
}

// datasetTemplateID is the template ID of dataset id at level, as
// gsmsID names a GSM-Symbolic template file: a whole-number id padded to
// four digits, with the level's prefix.
func datasetTemplateID(id, level string) string {
	if n, err := strconv.Atoi(id); err == nil && n >= 0 {
		id = fmt.Sprintf("%04d", n)
	}
	return gsmsID(id+".json", level)
}

// datasetSteps is a template's number of steps: the calculator
// annotations of its instance's worked answer, else those of the
// original's plus one per clause the level adds (as gsmsSteps).
func datasetSteps(answer, original, level string) int {
	if n := strings.Count(answer, "<<"); n > 0 {
		return n
	}
	added := map[string]int{LevelSymbolic: 0, LevelP1: 1, LevelP2: 2}[level]
	return max(1, strings.Count(original, "<<")) + added
}

// Instances is the number of datasets the files hold: the largest instance
// index + 1.
func (d *Dataset) Instances() int {
	n := 0
	for _, t := range d.templates {
		if k := len(t.instances); k > 0 {
			n = max(n, t.instances[k-1].index+1)
		}
	}
	return n
}

// Counts are the numbers of templates and of originals the files hold.
func (d *Dataset) Counts() (templates, originals int) {
	return len(d.templates), len(d.originals)
}

// Levels are the difficulty levels of the files, in level order.
func (d *Dataset) Levels() []string {
	var out []string
	for _, l := range []string{LevelSymbolic, LevelP1, LevelP2} {
		if slices.ContainsFunc(d.Files, func(f DatasetFile) bool { return f.Level == l }) {
			out = append(out, l)
		}
	}
	return out
}

// DatasetOptions choose the part of a dataset a set holds.
type DatasetOptions struct {
	// Variants are the variants asked for: DatasetVariants or part of
	// them (base is always in the set, as Generate puts it).
	Variants []Variant
	// Instances keeps the instances 0..Instances-1 (the first datasets);
	// 0 keeps every one.
	Instances int
	// IDs keeps the templates of these IDs (gsms-0007, gsms-p1-0007), in
	// the dataset's order; Limit the first Limit templates; 0 all.
	IDs   []string
	Limit int
	Seed  int64 // recorded as the set's seed; nothing is drawn
}

// Set builds the item set of the dataset: per template (by level, then
// id) the base instance of its original when it is the first template of
// that original (variant base, level symbolic, instance 0, the original
// question and answer), then its released instances in index order
// (variant symbolic at the template's level, Index the instance index).
// A variant other than base and symbolic, --instances beyond the
// dataset's, or a template ID it does not hold is an error.
func (d *Dataset) Set(opt DatasetOptions) (*Set, error) {
	vs := []Variant{VariantBase}
	for _, v := range opt.Variants {
		if !slices.Contains(DatasetVariants, v) {
			return nil, fmt.Errorf("--variants %s: the released instances are base (the originals) and symbolic (the instances); no other variant is drawn for them", v)
		}
		if !slices.Contains(vs, v) {
			vs = append(vs, v)
		}
	}
	n := d.Instances()
	if opt.Instances < 0 || opt.Instances > n {
		return nil, fmt.Errorf("--instances %d: the dataset holds instances 0 to %d (%d datasets)", opt.Instances, n-1, n)
	}
	if opt.Instances > 0 {
		n = opt.Instances
	}
	ts := d.templates
	if len(opt.IDs) > 0 {
		var missing []string
		for _, id := range opt.IDs {
			if !slices.ContainsFunc(ts, func(t *dsTemplate) bool { return t.id == id }) {
				missing = append(missing, id)
			}
		}
		if len(missing) > 0 {
			return nil, fmt.Errorf("--template-ids: %s not in the dataset (its templates are %s to %s)", strings.Join(missing, ","), ts[0].id, ts[len(ts)-1].id)
		}
		ts = slices.DeleteFunc(slices.Clone(ts), func(t *dsTemplate) bool { return !slices.Contains(opt.IDs, t.id) })
	}
	if opt.Limit > 0 && opt.Limit < len(ts) {
		ts = ts[:opt.Limit]
	}
	set := &Set{Seed: opt.Seed, Options: Options{Variants: vs, Instances: n, Seed: opt.Seed}}
	based := map[string]bool{}
	for _, t := range ts {
		set.Templates = append(set.Templates, TemplateInfo{ID: t.id, Title: t.title, Relation: "gsm-symbolic", Steps: t.steps,
			Format: DatasetFormat, Source: t.file.Path, Level: t.level, IDOrig: t.idOrig})
		if o := d.originals[t.idOrig]; !based[t.idOrig] {
			based[t.idOrig] = true
			set.Instances = append(set.Instances, Instance{
				ID: t.id + "/base/0", TemplateID: t.id, Relation: "gsm-symbolic", Steps: o.steps, Level: LevelSymbolic,
				Variant: VariantBase, Question: o.question, Answer: o.answer, Values: map[string]string{}, IDOrig: t.idOrig,
				OriginalAnswer: o.answer,
			})
		}
		if !slices.Contains(vs, VariantSymbolic) {
			continue
		}
		o := d.originals[t.idOrig]
		for _, in := range t.instances {
			if in.index >= n {
				break
			}
			set.Instances = append(set.Instances, Instance{
				ID: fmt.Sprintf("%s/%s/%d", t.id, VariantSymbolic, in.index), TemplateID: t.id, Relation: "gsm-symbolic", Steps: t.steps,
				Level: t.level, Variant: VariantSymbolic, Index: in.index, Question: in.question, Answer: in.answer,
				Values: map[string]string{}, IDOrig: t.idOrig, OriginalAnswer: o.answer,
			})
		}
	}
	return set, nil
}
