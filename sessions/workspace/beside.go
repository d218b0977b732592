package workspace

// beside starts f in a goroutine of its own and returns what waits for
// its result. A git that does not need another's answer (a process,
// mostly waited on) goes beside it this way; whoever starts it waits for
// it, on every path. A write beside another git of zwarm's is unjudged.
func beside[T any](f func() (T, error)) (wait func() (T, error)) {
	type result struct {
		v   T
		err error
	}
	done := make(chan result, 1)
	go func() {
		v, err := f()
		done <- result{v, err}
	}()
	return func() (T, error) {
		r := <-done
		return r.v, r.err
	}
}
