package console

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"sync"
	"time"
)

// session is one signed-in administrator in one project.
type session struct {
	project   string
	userID    string
	email     string
	formToken string
	created   time.Time
	lastSeen  time.Time
	flash     flash
}

// flash is a one-time message shown on the next page.
type flash struct {
	// Kind is "success" or "error"; "" means no message.
	Kind    string
	Message string
}

// sessionKey is the SHA-256 of a session id: the map never holds an id
// that could be used as a cookie.
type sessionKey [sha256.Size]byte

// sessionStore keeps sessions in memory, at most max of them.
type sessionStore struct {
	idle, lifetime time.Duration
	max            int

	mu       sync.Mutex
	sessions map[sessionKey]*session
}

func newSessionStore(idle, lifetime time.Duration, max int) *sessionStore {
	return &sessionStore{idle: idle, lifetime: lifetime, max: max, sessions: make(map[sessionKey]*session)}
}

// randomToken returns 256 random bits, base64url without padding.
func randomToken() string {
	var b [32]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never returns an error.
	return base64.RawURLEncoding.EncodeToString(b[:])
}

func keyOf(id string) sessionKey { return sha256.Sum256([]byte(id)) }

// expired reports whether s has ended at now.
func (st *sessionStore) expired(s *session, now time.Time) bool {
	return now.Sub(s.lastSeen) >= st.idle || now.Sub(s.created) >= st.lifetime
}

// create starts a session and returns its id, which only the cookie holds.
func (st *sessionStore) create(project, userID, email string, now time.Time) (string, session) {
	id := randomToken()
	s := &session{
		project:   project,
		userID:    userID,
		email:     email,
		formToken: randomToken(),
		created:   now,
		lastSeen:  now,
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if len(st.sessions) >= st.max {
		st.evictLocked(now)
	}
	st.sessions[keyOf(id)] = s
	return id, *s
}

// evictLocked drops every expired session and, if the store is still full,
// the least recently used ones until there is room for one more.
func (st *sessionStore) evictLocked(now time.Time) {
	for k, s := range st.sessions {
		if st.expired(s, now) {
			delete(st.sessions, k)
		}
	}
	for len(st.sessions) >= st.max {
		var oldest sessionKey
		var seen time.Time
		first := true
		for k, s := range st.sessions {
			if first || s.lastSeen.Before(seen) {
				oldest, seen, first = k, s.lastSeen, false
			}
		}
		delete(st.sessions, oldest)
	}
}

// get returns the live session id of project and marks it used at now. It
// reports false for an unknown id, a session of another project and an
// expired session, which it forgets.
func (st *sessionStore) get(id, project string, now time.Time) (session, bool) {
	if id == "" {
		return session{}, false
	}
	k := keyOf(id)
	st.mu.Lock()
	defer st.mu.Unlock()
	s, ok := st.sessions[k]
	if !ok || s.project != project {
		return session{}, false
	}
	if st.expired(s, now) {
		delete(st.sessions, k)
		return session{}, false
	}
	s.lastSeen = now
	return *s, true
}

// delete ends the session id.
func (st *sessionStore) delete(id string) {
	st.mu.Lock()
	defer st.mu.Unlock()
	delete(st.sessions, keyOf(id))
}

// setFlash stores a message for the session's next page.
func (st *sessionStore) setFlash(id string, f flash) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if s, ok := st.sessions[keyOf(id)]; ok {
		s.flash = f
	}
}

// takeFlash returns and forgets the session's message.
func (st *sessionStore) takeFlash(id string) flash {
	st.mu.Lock()
	defer st.mu.Unlock()
	s, ok := st.sessions[keyOf(id)]
	if !ok {
		return flash{}
	}
	f := s.flash
	s.flash = flash{}
	return f
}

// len returns the number of sessions held, expired or not.
func (st *sessionStore) len() int {
	st.mu.Lock()
	defer st.mu.Unlock()
	return len(st.sessions)
}
