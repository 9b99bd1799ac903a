package probe

import (
	"fmt"
	"runtime"
	"sync"
	"time"
)

// DDCStore classifies questions in a background goroutine, one at a time in
// the given order, so the embedder works beside generation instead of before
// it; Get blocks until a question's result is ready.
type DDCStore struct {
	mu      sync.Mutex
	cond    *sync.Cond
	results map[string]DDC
	err     error
	enabled bool
	work    time.Duration // classifier time
	wait    time.Duration // time callers of get waited
}

// NewDDCStore starts classifying questions with classify, in order, in a
// goroutine of its own at the lowest thread priority; a nil classify
// disables DDC (Get then reports none).
func NewDDCStore(classify Classifier, questions []string) *DDCStore {
	s := &DDCStore{results: map[string]DDC{}, enabled: classify != nil}
	s.cond = sync.NewCond(&s.mu)
	if classify == nil {
		return s
	}
	go func() {
		// The classifier works beside generation, whose llama.cpp threads
		// may take every core (--threads-batch): at the lowest priority it
		// runs when they leave a core idle instead of preempting one of
		// them, which stalls the others at the next barrier.
		runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
		lowerThreadPriority()
		for _, q := range questions {
			t0 := time.Now()
			r, err := classify([]string{q})
			if err == nil && len(r) != 1 {
				err = fmt.Errorf("classifier returned %d results for one text", len(r))
			}
			s.mu.Lock()
			s.work += time.Since(t0)
			if err != nil {
				s.err = fmt.Errorf("DDC classifier: %w", err)
				s.cond.Broadcast()
				s.mu.Unlock()
				return
			}
			s.results[q] = r[0]
			s.cond.Broadcast()
			s.mu.Unlock()
		}
	}()
	return s
}

// Get returns the DDC reading of q, waiting for it if needed; ok is false
// when DDC is disabled.
func (s *DDCStore) Get(q string) (DDC, bool, error) {
	if !s.enabled {
		return DDC{}, false, nil
	}
	t0 := time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	for {
		if d, ok := s.results[q]; ok {
			s.wait += time.Since(t0)
			return d, true, nil
		}
		if s.err != nil {
			return DDC{}, false, s.err
		}
		s.cond.Wait()
	}
}

// Seconds returns the classifier's working time and the time waited for it.
func (s *DDCStore) Seconds() (work, wait float64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.work.Seconds(), s.wait.Seconds()
}
