package probe

import "fmt"

// OptionError is an error caused by an option out of range (a flag of
// `fragility run` or `fragility plan`: wrong usage, exit 2), not by the
// input files: Validate, PlanRun, MakePlan and PlanShards return it.
type OptionError struct{ Msg string }

// Error returns the message.
func (e OptionError) Error() string { return e.Msg }

// OptionErrorf is an OptionError with a formatted message.
func OptionErrorf(format string, args ...any) error { return OptionError{fmt.Sprintf(format, args...)} }
