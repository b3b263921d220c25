package console

import (
	"context"
	"errors"
	"net/url"
	"strings"

	"github.com/latchkey-dev/latchkey/store"
)

// who is an actor or a target as a page shows it: what a person recognises
// (a user's email, an API key's name), and the id itself.
type who struct {
	// Label is the readable name.
	Label string
	// ID is the id shown beside it, or "" when Label says it all.
	ID string
	// Link leads to the page of the named user, or is "".
	Link string
}

// namer resolves ids for one request, looking each one up at most once.
type namer struct {
	h       *Handler
	ctx     context.Context
	project string
	emails  map[string]string // user id -> email, "" when unknown
	keys    map[string]string // API key id -> name; nil until first needed
}

func (h *Handler) newNamer(c *call) *namer {
	return &namer{h: h, ctx: c.r.Context(), project: c.project, emails: map[string]string{c.user.ID: c.user.Email}}
}

// name returns id as a page shows it; none is the label of the empty id.
// A lookup that fails leaves the id alone: names are a convenience of the
// page, and the id is shown in any case.
func (n *namer) name(id, none string) who {
	prefix, _, _ := strings.Cut(id, "_")
	switch {
	case id == "":
		return who{Label: none}
	case id == store.ActorCLI:
		return who{Label: "Command line"}
	case prefix == store.PrefixUser:
		if email := n.email(id); email != "" {
			return who{Label: email, ID: id, Link: "user?" + url.Values{"id": {id}}.Encode()}
		}
		return who{Label: "Unknown user", ID: id}
	case prefix == store.PrefixAPIKey:
		if name := n.keyName(id); name != "" {
			return who{Label: "API key “" + name + "”", ID: id}
		}
		return who{Label: "API key", ID: id}
	case prefix == store.PrefixSigningKey:
		return who{Label: "Signing key", ID: id}
	case prefix == store.PrefixFamily:
		return who{Label: "Session", ID: id}
	}
	return who{Label: id}
}

// email returns the email of the project's user id, or "".
func (n *namer) email(id string) string {
	if e, ok := n.emails[id]; ok {
		return e
	}
	u, err := n.h.deps.Users.Get(n.ctx, n.project, id)
	if err != nil && !errors.Is(err, store.ErrNotFound) && !errors.Is(err, store.ErrInvalid) {
		n.h.log.ErrorContext(n.ctx, "console: looking up a user to name", "project", n.project, "user", id, "err", err)
	}
	n.emails[id] = u.Email
	return u.Email
}

// keyName returns the name of the project's API key id, or "".
func (n *namer) keyName(id string) string {
	if n.keys == nil {
		n.keys = map[string]string{}
		list, err := n.h.deps.APIKeys.List(n.ctx, n.project)
		if err != nil {
			n.h.log.ErrorContext(n.ctx, "console: listing API keys to name them", "project", n.project, "err", err)
		}
		n.setKeys(list)
	}
	return n.keys[id]
}

// setKeys records the names of keys, which the caller already holds.
func (n *namer) setKeys(keys []store.APIKey) {
	if n.keys == nil {
		n.keys = make(map[string]string, len(keys))
	}
	for _, k := range keys {
		n.keys[k.ID] = k.Name
	}
}
