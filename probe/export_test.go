package probe

// What the external tests (package probe_test: runs checked with package
// verify, which imports probe) need of probe's internals.
var (
	FillAnswerScore = fillAnswerScore
	ErrorKind       = errorKind
)

// SetNoAnswerFirst sets the test hook that leaves the answer-first forcing
// out of a run (testHookNoAnswerFirst).
func SetNoAnswerFirst(on bool) { testHookNoAnswerFirst = on }
