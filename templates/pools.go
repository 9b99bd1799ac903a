package templates

import (
	"math/big"
	"slices"
	"sort"
)

// Pools are the named lists that templates draw names and entities from.
// They are this project's own lists (the GSM-Symbolic format names pools but
// does not define their contents). Every entry is distinct within its pool.
// "names" is names_female followed by names_male.
var pools = map[string][]string{
	"names_female": {
		"Ada", "Amara", "Beatriz", "Chiara", "Dalia", "Elif", "Fatima", "Greta", "Hana", "Ines",
		"Jasmine", "Keiko", "Lena", "Maria", "Nadia", "Olga", "Priya", "Rosa", "Sofia", "Tamar",
		"Uma", "Vera", "Wanda", "Yara", "Zoe",
	},
	"names_male": {
		"Aarav", "Bruno", "Carlos", "Daniel", "Emeka", "Felix", "Goran", "Hugo", "Ivan", "Jonas",
		"Kenji", "Luca", "Mateo", "Nikhil", "Omar", "Pavel", "Rafael", "Samuel", "Tomas", "Umar",
		"Victor", "Wei", "Yusuf", "Zane", "Oscar",
	},
	"currencies_sym":  {"$", "€", "£", "¥", "₹"},
	"currencies_word": {"dollars", "euros", "pounds", "yen", "rupees"},
	"fruits": {
		"apples", "bananas", "cherries", "grapes", "kiwis", "lemons", "mangoes", "oranges",
		"peaches", "pears", "plums", "strawberries",
	},
	"vegetables": {"carrots", "potatoes", "onions", "tomatoes", "peppers", "cucumbers", "beets", "leeks"},
	"colors":     {"red", "blue", "green", "yellow", "purple", "orange", "white", "black", "pink", "brown"},
	"weekdays":   {"Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"},
	"months": {
		"January", "February", "March", "April", "May", "June", "July", "August", "September",
		"October", "November", "December",
	},
	"cities": {
		"Lisbon", "Nairobi", "Osaka", "Lima", "Krakow", "Hanoi", "Denver", "Tunis", "Porto", "Perth",
		"Quito", "Oslo",
	},
	"sports":   {"soccer", "tennis", "basketball", "volleyball", "cricket", "hockey", "rugby", "badminton"},
	"animals":  {"cats", "dogs", "rabbits", "hamsters", "goats", "ducks", "chickens", "sheep"},
	"stores":   {"bakery", "bookshop", "market stall", "corner shop", "toy store", "hardware store"},
	"vehicles": {"bus", "train", "van", "truck", "ferry", "tram"},
	"baked_goods": {
		"loaves", "baguettes", "muffins", "bagels", "croissants", "scones", "pretzels", "rolls",
	},
	"school_items": {"pencils", "notebooks", "erasers", "markers", "rulers", "folders", "crayons"},
	// Units, singular: templates write "{unit,pound}s" for the plural, so
	// every entry takes a plain "s".
	"weights_sm":  {"ounce", "gram"},
	"weights_med": {"pound", "kilogram"},
	"weights_lg":  {"ton", "tonne"},
	"length_sm":   {"centimeter", "millimeter"},
	"length_med":  {"meter", "yard"},
	"length_lg":   {"mile", "kilometer"},
}

// wordEntry is one entry of a number pool: an exact value num/den and the
// form the question shows.
type wordEntry struct {
	form     string
	num, den int64
}

// wordPools are the pools of numbers with a surface form: a variable drawn
// from one is a number in arithmetic ("half" is 1/2) and its form in text.
// The GSM-Symbolic annotations name these pools without defining them; the
// meaning of each is inferred from how the published templates use it (see
// README.md, "Pools").
var wordPools = map[string][]wordEntry{
	// fractions in words, with an article
	"fractions": {{"half", 1, 2}, {"a third", 1, 3}, {"a quarter", 1, 4}, {"a fifth", 1, 5}, {"a tenth", 1, 10}},
	// fractions in words only (alphabetic)
	"fraction_alph": {{"half", 1, 2}, {"a third", 1, 3}, {"a quarter", 1, 4}, {"a fifth", 1, 5}, {"a tenth", 1, 10},
		{"two-thirds", 2, 3}, {"three quarters", 3, 4}, {"two-fifths", 2, 5}, {"three-fifths", 3, 5}},
	// fractions in words or in digits (alphanumeric)
	"fraction_alnum": {{"half", 1, 2}, {"one-third", 1, 3}, {"two-thirds", 2, 3}, {"a quarter", 1, 4},
		{"three quarters", 3, 4}, {"one-fifth", 1, 5}, {"three-fifths", 3, 5}, {"1/2", 1, 2}, {"1/3", 1, 3},
		{"1/4", 1, 4}, {"1/5", 1, 5}, {"1/8", 1, 8}, {"1/10", 1, 10}},
	// fractions in digits; the first four are the unit fractions 1/2..1/5
	// (templates slice them: fraction_nums[:4])
	"fraction_nums": {{"1/2", 1, 2}, {"1/3", 1, 3}, {"1/4", 1, 4}, {"1/5", 1, 5}, {"2/3", 2, 3}, {"3/4", 3, 4},
		{"2/5", 2, 5}, {"3/5", 3, 5}, {"1/8", 1, 8}, {"1/10", 1, 10}},
	// fractions as decimals
	"fraction_decimals": {{"0.1", 1, 10}, {"0.2", 1, 5}, {"0.25", 1, 4}, {"0.3", 3, 10}, {"0.4", 2, 5},
		{"0.5", 1, 2}, {"0.6", 3, 5}, {"0.75", 3, 4}, {"0.8", 4, 5}},
	// multipliers "N times"
	"multi_times": {{"twice", 2, 1}, {"three times", 3, 1}, {"four times", 4, 1}, {"five times", 5, 1}},
	// multipliers ending in -ice
	"multiple_ice": {{"twice", 2, 1}, {"thrice", 3, 1}},
	// multiplying adjectives
	"multiple": {{"double", 2, 1}, {"triple", 3, 1}, {"quadruple", 4, 1}},
}

func init() {
	names := slices.Concat(pools["names_female"], pools["names_male"])
	pools["names"] = names
}

// PoolNames returns the names of the built-in pools (text and number
// pools), sorted.
func PoolNames() []string {
	out := make([]string, 0, len(pools)+len(wordPools))
	for k := range pools {
		out = append(out, k)
	}
	for k := range wordPools {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Pool returns a copy of the named built-in pool, as the texts a question
// shows (for a number pool, the surface forms), and whether it exists.
func Pool(name string) ([]string, bool) {
	if w, ok := wordPools[name]; ok {
		out := make([]string, len(w))
		for i, e := range w {
			out[i] = e.form
		}
		return out, true
	}
	p, ok := pools[name]
	return slices.Clone(p), ok
}

// poolValues returns the named built-in pool as values: texts, or worded
// numbers.
func poolValues(name string) ([]value, bool) {
	if w, ok := wordPools[name]; ok {
		out := make([]value, len(w))
		for i, e := range w {
			out[i] = wordedV(big.NewRat(e.num, e.den), e.form)
		}
		return out, true
	}
	p, ok := pools[name]
	if !ok {
		return nil, false
	}
	out := make([]value, len(p))
	for i, s := range p {
		out[i] = strV(s)
	}
	return out, true
}

func lookupPool(extra map[string][]value, name string) ([]value, bool) {
	if p, ok := extra[name]; ok {
		return p, true
	}
	return poolValues(name)
}
