package engine

// Pinning is what Pin did: the CPU the calling goroutine's OS thread is
// now bound to, and the thread's id.
type Pinning struct {
	CPU int
	TID int
}
