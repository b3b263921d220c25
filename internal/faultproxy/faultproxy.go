// Package faultproxy is a TCP proxy for tests, on the loopback interface in
// front of a database server, that breaks the connections through it in the
// ways a network and a server fail: it refuses or black-holes new
// connections, freezes every byte, delays connects, and hangs up on a
// client after a marked request while the server's side stays open, as in
// a network partition the server never learns of.
package faultproxy

import (
	"bytes"
	"net"
	"sync"
	"testing"
	"time"
)

// Proxy is a running proxy; see the package documentation.
type Proxy struct {
	ln     net.Listener
	target string
	// endsRequest reports whether a chunk a client sent, read from its
	// first byte, ends a request the server answers.
	endsRequest func([]byte) bool

	mu        sync.Mutex
	thawed    *sync.Cond // signalled when frozen becomes false or the proxy stops
	conns     map[net.Conn]struct{}
	refuse    bool // close new connections at once
	blackhole bool // accept new connections and never answer
	frozen    bool // hold every byte in both directions, closing nothing
	// While cutArmed, the first client to send a request holding
	// cutMarker is hung up on once the request is sent (CutAfter).
	cutArmed  bool
	cutMarker []byte
	stopped   bool
	// connectDelay holds each new connection that long before it is
	// forwarded: a server far away, or slow to accept.
	connectDelay time.Duration
}

// New starts a proxy to target (host:port) and returns it; t.Cleanup stops
// it. endsRequest reports whether a chunk a client sent, read from its
// first byte, ends a request the server answers (the whole of a command
// that the driver writes in one piece); nil means every chunk does.
func New(t testing.TB, target string, endsRequest func([]byte) bool) *Proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if endsRequest == nil {
		endsRequest = func([]byte) bool { return true }
	}
	p := &Proxy{ln: ln, target: target, endsRequest: endsRequest, conns: map[net.Conn]struct{}{}}
	p.thawed = sync.NewCond(&p.mu)
	go p.serve()
	t.Cleanup(p.stop)
	return p
}

// Addr is the proxy's address (host:port), to connect to instead of the
// target.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

func (p *Proxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopped {
		return false
	}
	p.conns[c] = struct{}{}
	return true
}

func (p *Proxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		refuse, hole, delay := p.refuse, p.blackhole || p.frozen, p.connectDelay
		p.mu.Unlock()
		switch {
		case refuse:
			c.Close()
		case hole:
			if !p.track(c) {
				c.Close()
			}
		case delay > 0:
			go func() {
				time.Sleep(delay)
				p.pipe(c)
			}()
		default:
			go p.pipe(c)
		}
	}
}

func (p *Proxy) pipe(client net.Conn) {
	server, err := net.Dial("tcp", p.target)
	if err != nil {
		client.Close()
		return
	}
	if !p.track(client) || !p.track(server) {
		client.Close()
		server.Close()
		return
	}
	go func() {
		p.pump(server, client, false)
		client.Close()
	}()
	if p.pump(client, server, true) {
		server.Close()
	}
}

// pump copies src to dst chunk by chunk, holding each chunk while the proxy
// is frozen. From the client (fromClient) it obeys cutMarker: once the
// marked request is sent it closes the client and reports false, leaving
// the server connection open.
func (p *Proxy) pump(src, dst net.Conn, fromClient bool) bool {
	buf := make([]byte, 64<<10)
	cutting := false // this client sends the marked request
	for {
		n, err := src.Read(buf)
		if n > 0 {
			p.mu.Lock()
			for p.frozen && !p.stopped {
				p.thawed.Wait()
			}
			if fromClient && p.cutArmed && bytes.Contains(buf[:n], p.cutMarker) {
				cutting, p.cutArmed = true, false
			}
			p.mu.Unlock()
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return true
			}
			if cutting && p.endsRequest(buf[:n]) {
				// The server got the whole request and answers
				// into the void: the client never learns what
				// happened.
				src.Close()
				return false
			}
		}
		if err != nil {
			return true
		}
	}
}

// Cut closes every connection through the proxy and makes it refuse new
// ones (refuse) or accept and never answer them (blackhole).
func (p *Proxy) Cut(blackhole bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.refuse, p.blackhole = !blackhole, blackhole
	for c := range p.conns {
		c.Close()
		delete(p.conns, c)
	}
}

// Freeze stops every byte through the proxy without closing anything, as a
// network partition does, and makes new connections hang.
func (p *Proxy) Freeze() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.frozen = true
}

// Restore makes the proxy forward again, new connections and held bytes.
func (p *Proxy) Restore() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.refuse, p.blackhole, p.frozen = false, false, false
	p.thawed.Broadcast()
}

// CutAfter makes the proxy hang up on the next client to send a request
// whose bytes hold marker (a statement's argument or text; "" is any
// request), once the whole request is forwarded, without forwarding the
// answer; the server's side of the connection stays open, and the server
// runs the request. Requests without marker pass: a statement can be cut,
// not whatever the driver sends first (a liveness ping of an idle
// connection, a statement's preparation).
func (p *Proxy) CutAfter(marker string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cutArmed, p.cutMarker = true, []byte(marker)
}

// CutPending reports whether the cut CutAfter asked for is yet to come.
func (p *Proxy) CutPending() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cutArmed
}

func (p *Proxy) stop() {
	p.ln.Close()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stopped = true
	p.thawed.Broadcast()
	for c := range p.conns {
		c.Close()
	}
	p.conns = map[net.Conn]struct{}{}
}

// DelayConnects makes the proxy hold each new connection for d before
// forwarding it.
func (p *Proxy) DelayConnects(d time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.connectDelay = d
}
