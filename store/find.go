package store

// Wrapper is a store that wraps another: a tracing layer, a checking
// layer. Unwrap returns the store it wraps, or nil. [As] walks a chain of
// wrappers through it.
type Wrapper interface {
	Unwrap() Store
}

// As finds the first value in the chain that starts at s and follows
// [Wrapper.Unwrap] that implements T (an optional capability such as
// [CheckedContactLister], or a concrete store type), and returns it, as
// errors.As finds an error: s itself first, then the store s wraps, and so
// on. It reports false when no store of the chain implements T, and for a
// nil s.
//
// Callers find optional capabilities with As, never with a type assertion,
// so that a wrapper need not re-declare every capability of the store it
// wraps: a tracing or checking layer only implements Unwrap. A wrapper that
// must see a capability's calls (to check their arguments, say) implements
// the capability itself, and As finds it first.
//
//	if cl, ok := store.As[store.CheckedContactLister](st); ok { ... }
func As[T any](s any) (T, bool) {
	for s != nil {
		if t, ok := s.(T); ok {
			return t, true
		}
		w, ok := s.(Wrapper)
		if !ok {
			break
		}
		next := w.Unwrap()
		if next == nil {
			break
		}
		s = next
	}
	var zero T
	return zero, false
}
