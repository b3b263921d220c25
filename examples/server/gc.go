package main

import (
	"runtime/debug"
	"sync"
	"time"

	"github.com/latchkey-dev/latchkey/identity"
)

// Garbage collector settings of the server, each used unless GOGC or
// GOMEMLIMIT is set in the environment. The server's live heap is small and
// every request allocates, so under load the default GOGC=100 would start a
// collection many times a second; 400 lets the heap grow to five times the
// live heap between collections, so the collector runs about a quarter as
// often. The soft memory limit keeps the heap bounded whatever the load:
// near it, the collector runs as often as needed.
//
// Password hashes change the picture: each allocates 19 MiB that is garbage
// when it ends. While hashes run the server goes back to GOGC=100 and the
// limit has room for twice what the hashes hold
// (identity.HasherOptions.Memory), so the heap's goal stays below the limit.
// A limit that binds makes the runtime hand memory back to the system at
// every collection, and the next hash faults it in again; a collection is
// cheap (the hashes' memory holds no pointers). The list load's settings
// come back once no hash has run for hashingGrace: room that stayed would
// let that load's heap grow past 100 MiB of RSS, and settings that followed
// every moment with no hash (between two logins of a steady stream) would
// hand the memory back between hashes all the same. docs/benchmarks.md
// gives the figures.
const (
	serverGCPercent   = 400
	serverMemoryLimit = 64 << 20
	hashingGCPercent  = 100
	hashingGrace      = time.Second
)

// tuneGC applies the server's garbage collector settings to the runtime
// and to hashing, whose options it returns: their Running switches to the
// hashing settings when a hash starts, and back to the list load's once no
// hash has run for grace.
func tuneGC(env *env, grace time.Duration) *identity.HasherOptions {
	var ho identity.HasherOptions
	t := &gcTuner{
		percent: env.getenv("GOGC") == "",
		limit:   env.getenv("GOMEMLIMIT") == "",
		room:    2 * ho.Memory(),
		grace:   grace,
	}
	if !t.percent && !t.limit {
		return &ho
	}
	t.apply(false)
	ho.Running = t.running
	return &ho
}

// gcTuner switches the runtime's garbage collector between the list load's
// settings and the hashing settings.
type gcTuner struct {
	percent, limit bool  // whether GOGC and the limit are the server's to set
	room           int64 // what the limit gains while hashing
	grace          time.Duration

	// The hashing settings are applied while n > 0 or idle is set.
	mu     sync.Mutex
	n      int         // hashes running, as Running last said
	idle   *time.Timer // brings the list settings back; nil while a hash runs
	timers uint64      // timers set so far; only the newest may act
}

// running is identity.HasherOptions.Running.
func (t *gcTuner) running(n int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	hashing := t.n > 0 || t.idle != nil
	t.n = n
	if n > 0 {
		if t.idle != nil {
			t.idle.Stop()
			t.idle = nil
		}
		if !hashing {
			t.apply(true)
		}
		return
	}
	if t.idle == nil {
		t.timers++
		timer := t.timers
		t.idle = time.AfterFunc(t.grace, func() { t.settle(timer) })
	}
}

// settle brings the list load's settings back, as the timer-th timer,
// unless a hash started after it was set (the hash stopped it, but it may
// have fired already).
func (t *gcTuner) settle(timer uint64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.n > 0 || timer != t.timers {
		return
	}
	t.idle = nil
	t.apply(false)
}

// apply sets the hashing settings or the list load's.
func (t *gcTuner) apply(hashing bool) {
	percent, limit := serverGCPercent, int64(serverMemoryLimit)
	if hashing {
		percent, limit = hashingGCPercent, serverMemoryLimit+t.room
	}
	if t.percent {
		debug.SetGCPercent(percent)
	}
	if t.limit {
		debug.SetMemoryLimit(limit)
	}
}
