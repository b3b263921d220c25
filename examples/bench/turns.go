package main

import "time"

// A round does not run each target for -d in one go: it gives the targets
// turns of -slice, one after the other, again and again, until each has run
// -d. A shared machine's speed drifts by tens of percent over a few
// seconds, so a target that ran its whole -d in a slow stretch moved its
// round's ratios by as much; in turns, every target of a round meets the
// same stretches.

// turns returns the lengths of one target's turns in a round: -d cut into
// pieces of -slice, the last one shorter if -slice does not divide -d.
func turns(c config) []time.Duration {
	var ds []time.Duration
	for left := c.duration; left > 0; left -= c.slice {
		ds = append(ds, min(left, c.slice))
	}
	return ds
}

// eachTurn calls run for every turn of round r (from 0) of n targets: at
// each turn length, target k for each k in the round's order, which starts
// at r. It stops at the first error and returns it.
func eachTurn(c config, r, n int, run func(k int, d time.Duration) error) error {
	for _, d := range turns(c) {
		for i := range n {
			if err := run((r+i)%n, d); err != nil {
				return err
			}
		}
	}
	return nil
}

// turnSum adds up one target's turns of a round.
type turnSum struct {
	requests    float64
	latWeighted float64 // each turn's mean latency times its requests, in ns
	elapsed     time.Duration
	cpu         time.Duration // of the process that answered
	databaseCPU time.Duration // of the database server's processes (-postgres, -mysql)
}

// add adds a turn of d that served rps requests a second with mean latency
// lat (as wrk prints it: "1.22ms", "980.00us") and cost cpu and dbCPU.
func (s *turnSum) add(d time.Duration, rps float64, lat string, cpu, dbCPU time.Duration) {
	n := rps * d.Seconds()
	s.requests += n
	s.elapsed += d
	if l, err := time.ParseDuration(lat); err == nil {
		s.latWeighted += n * float64(l)
	}
	s.cpu += cpu
	s.databaseCPU += dbCPU
}

// rps returns the requests a second over the turns.
func (s *turnSum) rps() float64 {
	if s.elapsed <= 0 {
		return 0
	}
	return s.requests / s.elapsed.Seconds()
}

// lat returns the mean latency over the turns' requests.
func (s *turnSum) lat() string {
	if s.requests <= 0 {
		return "?"
	}
	return time.Duration(s.latWeighted / s.requests).Round(10 * time.Microsecond).String()
}

// result returns the turns' figures as a round's result.
func (s *turnSum) result() dbResult {
	return dbResult{rps: s.rps(), requests: s.requests, lat: s.lat(), serverCPU: s.cpu, databaseCPU: s.databaseCPU}
}
