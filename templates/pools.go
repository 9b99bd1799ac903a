package templates

import (
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
	"fractions":       {"half", "a third", "a quarter", "a fifth", "a tenth"},
	"multi_times":     {"twice", "three times", "four times", "five times"},
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
}

func init() {
	names := slices.Concat(pools["names_female"], pools["names_male"])
	pools["names"] = names
}

// PoolNames returns the names of the built-in pools, sorted.
func PoolNames() []string {
	out := make([]string, 0, len(pools))
	for k := range pools {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Pool returns a copy of the named built-in pool and whether it exists.
func Pool(name string) ([]string, bool) {
	p, ok := pools[name]
	return slices.Clone(p), ok
}

func lookupPool(extra map[string][]string, name string) ([]string, bool) {
	if p, ok := extra[name]; ok {
		return p, true
	}
	p, ok := pools[name]
	return p, ok
}
