package docqa

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"

	"github.com/fragility/fragility/internal/suggest"
	"github.com/fragility/fragility/templates"
)

// Variant names. A requested "paraphrase" stands for paraphrase-1 up to
// the item's number of paraphrases, "distractor" for distractor-1.
const (
	Base              = "base"               // the passages in the user's order, the question as written
	Paraphrase        = "paraphrase"         // paraphrase-k: the item's k-th paraphrase instead of the question
	Distractor        = "distractor"         // distractor-k: k irrelevant passages added after the passages
	Shuffle           = "shuffle"            // the passages in another order (seeded)
	DistractorShuffle = "distractor-shuffle" // distractor-1's passages in another order (seeded)
)

// VariantsHelp lists the variant names for messages and help.
const VariantsHelp = "base, paraphrase (every paraphrase-k), paraphrase-K, distractor (= distractor-1), distractor-K, shuffle, distractor-shuffle"

// Format is TemplateInfo.Format of a document item in a set.
const Format = "docqa"

// ParseVariants reads a comma-separated --variants list for document items.
// Spaces are ignored; "distractor" is read as distractor-1; an unknown
// name, a K below 1, a variant given twice ("distractor,distractor-1" is
// distractor-1 twice) or an empty name between commas is an error naming
// it.
func ParseVariants(csv string) ([]templates.Variant, error) {
	names, err := templates.SplitNames(csv, "variant name", "variant")
	if err != nil {
		return nil, err
	}
	var out []templates.Variant
	for _, name := range names {
		if name == Distractor {
			name = Distractor + "-1"
		}
		if _, _, err := parseVariant(name); err != nil {
			return nil, err
		}
		if slices.Contains(out, templates.Variant(name)) { // after the alias: distractor,distractor-1
			return nil, fmt.Errorf("variant %q named twice in %q", name, csv)
		}
		out = append(out, templates.Variant(name))
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no variant given (known for --items: %s)", VariantsHelp)
	}
	return out, nil
}

// parseVariant splits a variant name into its kind and k (0 for base,
// shuffle and a bare paraphrase).
func parseVariant(name string) (string, int, error) {
	switch name {
	case Base, Shuffle, Paraphrase:
		return name, 0, nil
	case DistractorShuffle:
		return name, 1, nil
	}
	for _, kind := range []string{Paraphrase, Distractor} {
		if rest, ok := strings.CutPrefix(name, kind+"-"); ok {
			k, err := strconv.Atoi(rest)
			if err != nil || k < 1 || rest != strconv.Itoa(k) {
				return "", 0, fmt.Errorf("variant %q: %s-K needs a whole K ≥ 1 (known for --items: %s)", name, kind, VariantsHelp)
			}
			return kind, k, nil
		}
	}
	known := "known: " + VariantsHelp
	if s := suggest.DidYouMean(name, "", []string{Base, Shuffle, Paraphrase, DistractorShuffle, Paraphrase + "-1", Distractor, Distractor + "-1"}); s != "" {
		known = s + " " + known
	}
	return "", 0, fmt.Errorf("unknown variant %q for --items (%s)", name, known)
}

// Generate builds the item set of items in the requested variants for
// instance indices 0..opt.Instances-1, in file, index, variant order; base
// is always generated first. Each instance records the passages its prompt
// shows, in order (Instance.Passages), and the accepted answers
// (Instance.Accepted); its Question is the question as asked. Base and
// paraphrase-k prompts are the same at every index; distractor draws and
// shuffles are seeded per item, variant and index (deriveSeed), so the same
// items and options give the same set.
//
// distractor-k adds k passages after the item's own: the item's distractors
// first, then passages of other items of the file (their passages, not
// their distractors), drawn without replacement; a passage whose text is
// one of the item's own is never drawn. distractor-shuffle permutes
// distractor-1's passages at the same index. A shuffle's order always
// differs from the unshuffled one. A variant that cannot be built for an
// item (paraphrase-3 of an item with two paraphrases, a shuffle of one
// passage, too few passages to draw from) is recorded in Set.Excluded with
// Draw 0 and the reason.
func Generate(items []Item, opt templates.Options) (*templates.Set, error) {
	if opt.Instances < 1 {
		return nil, fmt.Errorf("instances must be at least 1, got %d", opt.Instances)
	}
	vs := []templates.Variant{Base}
	for _, v := range opt.Variants {
		if _, _, err := parseVariant(string(v)); err != nil {
			return nil, err
		}
		if !slices.Contains(vs, v) {
			vs = append(vs, v)
		}
	}
	opt.Variants = vs
	set := &templates.Set{Seed: opt.Seed, Options: opt}
	for i := range items {
		it := &items[i]
		set.Templates = append(set.Templates, templates.TemplateInfo{ID: it.ID, Title: it.Question, Relation: it.Relation,
			Format: Format, Source: it.Source, Level: it.Difficulty})
		for idx := 0; idx < opt.Instances; idx++ {
			for _, v := range vs {
				kind, k, _ := parseVariant(string(v))
				names := []string{string(v)}
				if kind == Paraphrase && k == 0 {
					names = names[:0]
					for j := range it.Paraphrases {
						names = append(names, fmt.Sprintf("%s-%d", Paraphrase, j+1))
					}
					if len(names) == 0 {
						set.Excluded = append(set.Excluded, templates.Exclusion{Template: it.ID, Variant: v, Index: idx, Reason: "the item has no paraphrases"})
					}
				}
				for _, name := range names {
					inst, why := build(items, i, name, idx, opt.Seed)
					if inst == nil {
						set.Excluded = append(set.Excluded, templates.Exclusion{Template: it.ID, Variant: templates.Variant(name), Index: idx, Reason: why})
						continue
					}
					set.Instances = append(set.Instances, *inst)
				}
			}
		}
	}
	return set, nil
}

// build makes the instance of item i in variant name (a concrete name:
// paraphrase-k, not paraphrase) at index idx, or returns why it cannot.
func build(items []Item, i int, name string, idx int, seed int64) (*templates.Instance, string) {
	it := &items[i]
	kind, k, _ := parseVariant(name)
	s := deriveSeed(seed, it.ID, name, idx)
	inst := &templates.Instance{
		ID: fmt.Sprintf("%s/%s/%d", it.ID, name, idx), TemplateID: it.ID, Relation: it.Relation, Level: it.Difficulty,
		Variant: templates.Variant(name), Index: idx, Seed: s, Question: it.Question,
		Answer: it.Accepted[0], Accepted: slices.Clone(it.Accepted),
	}
	own := make([]templates.Passage, len(it.Passages))
	for j, p := range it.Passages {
		own[j] = templates.Passage{Item: it.ID, ID: p.ID, Text: p.Text}
	}
	switch kind {
	case Base:
		inst.Passages = own
	case Paraphrase:
		if k > len(it.Paraphrases) {
			return nil, fmt.Sprintf("the item has %d paraphrase(s), not %d", len(it.Paraphrases), k)
		}
		inst.Question, inst.Passages = it.Paraphrases[k-1], own
	case Shuffle:
		if len(own) < 2 {
			return nil, "the item has one passage: nothing to shuffle"
		}
		inst.Passages = shuffled(own, s)
	case Distractor, DistractorShuffle:
		// distractor-shuffle uses distractor-1's passages at the same index.
		ds, why := distractors(items, i, k, deriveSeed(seed, it.ID, fmt.Sprintf("%s-%d", Distractor, k), idx))
		if ds == nil {
			return nil, why
		}
		inst.Passages = append(own, ds...)
		if kind == DistractorShuffle {
			inst.Passages = shuffled(inst.Passages, s)
		}
	}
	return inst, ""
}

// distractors returns k irrelevant passages for item i: its own distractors
// first, then passages of the other items drawn with seed.
func distractors(items []Item, i, k int, seed int64) ([]templates.Passage, string) {
	it := &items[i]
	var out []templates.Passage
	for _, d := range it.Distractors {
		if len(out) == k {
			return out, ""
		}
		out = append(out, templates.Passage{Item: it.ID, ID: d.ID, Text: d.Text, Distractor: true})
	}
	own := map[string]bool{}
	for _, p := range it.Passages {
		own[normalizeText(p.Text)] = true
	}
	var pool []templates.Passage
	for j := range items {
		if j == i {
			continue
		}
		for _, p := range items[j].Passages {
			if n := normalizeText(p.Text); !own[n] {
				own[n] = true // a text shared by two other items is drawn once
				pool = append(pool, templates.Passage{Item: items[j].ID, ID: p.ID, Text: p.Text, Distractor: true})
			}
		}
	}
	need := k - len(out)
	if need > len(pool) {
		return nil, fmt.Sprintf("distractor-%d needs %d passage(s) beyond the item's %d distractor(s); the other items have %d", k, need, len(it.Distractors), len(pool))
	}
	r := newRand(seed)
	for _, j := range r.Perm(len(pool))[:need] {
		out = append(out, pool[j])
	}
	return out, ""
}

// shuffled returns ps in a seeded order that differs from the given one
// (ps has at least two passages): the first of the permutations drawn from
// newRand(seed) that moves some passage.
func shuffled(ps []templates.Passage, seed int64) []templates.Passage {
	r := newRand(seed)
	for {
		perm := r.Perm(len(ps))
		moved := false
		for j, p := range perm {
			moved = moved || j != p
		}
		if moved {
			out := make([]templates.Passage, len(ps))
			for j, p := range perm {
				out[j] = ps[p]
			}
			return out
		}
	}
}

// deriveSeed gives each instance its own seed: the first 63 bits of
// SHA-256("fragility/docqa/v1|<seed>|<item>|<variant>|<index>").
func deriveSeed(seed int64, id, variant string, idx int) int64 {
	h := sha256.Sum256(fmt.Appendf(nil, "fragility/docqa/v1|%d|%s|%s|%d", seed, id, variant, idx))
	return int64(binary.BigEndian.Uint64(h[:8]) >> 1)
}

// newRand is the PCG generator of an instance seed (its output is fixed by
// the algorithm, so stable across Go releases).
func newRand(seed int64) *rand.Rand {
	return rand.New(rand.NewPCG(uint64(seed), 0x646f637161)) // "docqa"
}

// Instruction is the docqa prompt's instruction, put before the passages.
const Instruction = "Answer the question using only the passages below. " +
	"Give the answer on a last line of the form \"Answer: <answer>\", as short as possible (a number, a name or a few words). " +
	"If the passages do not contain the answer, write \"Answer: not stated\"."

// PromptVersion names Instruction and Body's layout; it is recorded in the
// manifest and changes whenever either changes.
const PromptVersion = "docqa-prompt-1"

// Body is the text after the instruction for one instance: the passages,
// numbered in the order shown ("[1] text"), then "Question: " and the
// question. Passages are numbered by position, not by the user's ids, so a
// passage drawn from another item carries no mark that it is foreign.
func Body(in *templates.Instance) string {
	var b strings.Builder
	b.WriteString("Passages:\n")
	for j, p := range in.Passages {
		fmt.Fprintf(&b, "[%d] %s\n\n", j+1, p.Text)
	}
	b.WriteString("Question: ")
	b.WriteString(in.Question)
	return b.String()
}

// PassageList is the passages of an instance as one string, in order:
// "item/id" for each, separated by spaces, a drawn or marked distractor
// prefixed with "+" (results.csv's passages column).
func PassageList(in *templates.Instance) string {
	parts := make([]string, len(in.Passages))
	for j, p := range in.Passages {
		mark := ""
		if p.Distractor {
			mark = "+"
		}
		parts[j] = mark + p.Item + "/" + p.ID
	}
	return strings.Join(parts, " ")
}

// UncoveredError is the error of CheckCovers: a requested variant that no
// item of the file can be asked in.
type UncoveredError struct{ msg string }

func (e UncoveredError) Error() string { return e.msg }

// CheckCovers refuses a set, made by Generate from items (read from file),
// in which a variant of opt.Variants has no instance at all: paraphrase-9
// of items with two paraphrases each, shuffle of items with one passage
// each. The error (an UncoveredError) names the variant and the file and
// says what exists (paraphrase-1..N) or why the first item could not be
// asked in it. A variant some items lack and others have passes: those
// items are in Set.Excluded.
func CheckCovers(items []Item, file string, set *templates.Set) error {
	have := map[templates.Variant]bool{}
	for i := range set.Instances {
		have[set.Instances[i].Variant] = true
	}
	most := 0
	for i := range items {
		most = max(most, len(items[i].Paraphrases))
	}
	for _, v := range set.Options.Variants {
		kind, k, _ := parseVariant(string(v))
		if have[v] || (kind == Paraphrase && k == 0 && most > 0) {
			continue
		}
		var why string
		switch {
		case kind == Paraphrase && most == 0:
			why = "no item has a paraphrase"
		case kind == Paraphrase && most == 1:
			why = "the items have one paraphrase at most: paraphrase-1"
		case kind == Paraphrase:
			why = fmt.Sprintf("the items have %d paraphrases at most: paraphrase-1..%d", most, most)
		default:
			for _, e := range set.Excluded {
				if e.Variant == v {
					why = fmt.Sprintf("item %s: %s", e.Template, e.Reason)
					break
				}
			}
		}
		return UncoveredError{fmt.Sprintf("--variants %s: no item in %s has a %s instance (%s)", v, file, v, why)}
	}
	return nil
}
