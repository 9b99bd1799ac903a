package results

import "strings"

// Conditions: what the model may use besides itself (run --conditions),
// recorded in Trial.Condition.
const (
	// ConditionNone: the model alone.
	ConditionNone = "none"
	// ConditionCalculator: the model may call the in-process calculator in
	// the GSM8K annotation style (probe.CalcProtocolVersion).
	ConditionCalculator = "calculator"
)

// ConditionName is the name of a trial's or planned item's condition: ""
// (runs made before conditions existed) is ConditionNone.
func ConditionName(cond string) string {
	if cond == "" {
		return ConditionNone
	}
	return cond
}

// ConditionItemID is the item ID of an item under a condition: the ID
// itself under none (as in runs made before conditions existed), else the ID
// with "#" and the condition appended ("m0/t1/base/0#calculator").
func ConditionItemID(id, cond string) string {
	if cond == "" || cond == ConditionNone {
		return id
	}
	return id + "#" + cond
}

// ItemCondition returns the condition of an item ID (ConditionItemID).
func ItemCondition(id string) string {
	if _, c, ok := strings.Cut(id, "#"); ok {
		return c
	}
	return ConditionNone
}
