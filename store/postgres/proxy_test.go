package postgres

import (
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
	cutNext   bool // forward the next client message, then hang up on the client
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
// is frozen. From the client (fromClient) it obeys cutNext: it then closes
// the client and reports false, leaving the server connection open.
func (p *proxy) pump(src, dst net.Conn, fromClient bool) bool {
	buf := make([]byte, 64<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			p.mu.Lock()
			for p.frozen && !p.stopped {
				p.thawed.Wait()
			}
			cut := fromClient && p.cutNext
			if cut {
				p.cutNext = false
			}
			p.mu.Unlock()
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return true
			}
			if cut {
				// The server got the message and answers into the
				// void: the client never learns what happened.
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

// cutAfterNextMessage makes the proxy forward the next chunk a client
// sends, then hang up on that client without forwarding the answer.
func (p *proxy) cutAfterNextMessage() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cutNext = true
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
