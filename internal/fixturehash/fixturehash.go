// Package fixturehash gives Latchkey's tests an argon2id hash of a fixture
// password, made once per test binary: under the race detector a hash
// costs more CPU than the rest of most fixtures' setup. Tests of hashing
// itself, and logins, still hash. It is not part of Latchkey's API, and no
// production code imports it.
package fixturehash

import (
	"context"
	"sync"

	"github.com/latchkey-dev/latchkey/identity"
)

// hashes holds the hash Of made of each password.
var hashes sync.Map // password -> hash

// Of returns an argon2id hash of password as identity.Hasher makes one with
// its default options, the same string at every call for the same
// password. It panics if hashing fails (a password over identity's limit).
func Of(password string) string {
	if h, ok := hashes.Load(password); ok {
		return h.(string)
	}
	made, err := identity.NewHasher(nil).Hash(context.Background(), password)
	if err != nil {
		panic("fixturehash: " + err.Error())
	}
	h, _ := hashes.LoadOrStore(password, made)
	return h.(string)
}
