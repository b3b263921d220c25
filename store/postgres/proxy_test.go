package postgres

import (
	"bytes"
	"encoding/binary"
	"net"
	"net/url"
	"sync"
	"testing"
	"time"
)

// proxy is a TCP proxy on the loopback interface in front of the test
// server, which a test can break in the ways a network and a server fail.
type proxy struct {
	ln     net.Listener
	target string

	mu        sync.Mutex
	thawed    *sync.Cond // signalled when frozen becomes false or the proxy stops
	conns     map[net.Conn]struct{}
	refuse    bool // close new connections at once
	blackhole bool // accept new connections and never answer
	frozen    bool // hold every byte in both directions, closing nothing
	// While cutArmed, the first client to send a request holding
	// cutMarker is hung up on once the request is sent (cutAfter).
	cutArmed  bool
	cutMarker []byte
	stopped   bool
	// connectDelay holds each new connection that long before it is
	// forwarded: a server far away, or slow to accept.
	connectDelay time.Duration
}

// newProxy starts a proxy to the server of dbURL and returns it and dbURL
// pointing at it; t.Cleanup stops it.
func newProxy(t testing.TB, dbURL string) (*proxy, string) {
	t.Helper()
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{ln: ln, target: u.Host, conns: map[net.Conn]struct{}{}}
	p.thawed = sync.NewCond(&p.mu)
	go p.serve()
	t.Cleanup(p.stop)
	u.Host = ln.Addr().String()
	return p, u.String()
}

func (p *proxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopped {
		return false
	}
	p.conns[c] = struct{}{}
	return true
}

func (p *proxy) serve() {
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

func (p *proxy) pipe(client net.Conn) {
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
func (p *proxy) pump(src, dst net.Conn, fromClient bool) bool {
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
			if cutting && endsRequest(buf[:n]) {
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

// cut closes every connection through the proxy and makes it refuse new
// ones (refuse) or accept and never answer them (blackhole).
func (p *proxy) cut(blackhole bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.refuse, p.blackhole = !blackhole, blackhole
	for c := range p.conns {
		c.Close()
		delete(p.conns, c)
	}
}

// freeze stops every byte through the proxy without closing anything, as a
// network partition does, and makes new connections hang.
func (p *proxy) freeze() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.frozen = true
}

// restore makes the proxy forward again, new connections and held bytes.
func (p *proxy) restore() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.refuse, p.blackhole, p.frozen = false, false, false
	p.thawed.Broadcast()
}

// cutAfter makes the proxy hang up on the next client to send a request
// whose bytes hold marker (a statement's argument, or the text of a simple
// query; "" is any request), once the whole request is forwarded, without
// forwarding the answer. Requests without marker pass: a statement can be
// cut, not whatever the driver sends first (a liveness ping of an idle
// connection, a statement's preparation).
func (p *proxy) cutAfter(marker string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cutArmed, p.cutMarker = true, []byte(marker)
}

// cutPending reports whether the cut cutAfter asked for is yet to come.
func (p *proxy) cutPending() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cutArmed
}

// endsRequest reports whether b, a client's bytes that start at a message,
// ends a request the server answers: its last message is a Sync (the
// extended query protocol) or a Query (the simple one), and complete.
func endsRequest(b []byte) bool {
	var last byte
	for len(b) >= 5 {
		n := int(binary.BigEndian.Uint32(b[1:5])) // the length counts itself
		if n < 4 || len(b) < 1+n {
			return false
		}
		last, b = b[0], b[1+n:]
	}
	return len(b) == 0 && (last == 'S' || last == 'Q')
}

func (p *proxy) stop() {
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

// delayConnects makes the proxy hold each new connection for d before
// forwarding it.
func (p *proxy) delayConnects(d time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.connectDelay = d
}
