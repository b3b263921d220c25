package identity

import (
	"strings"
	"testing"

	"github.com/latchkey-dev/latchkey/store"
)

// FuzzRefreshToken: the refresh-token decoder never panics, accepts only
// the one text the codec makes for a (project, family, generation), and
// accepts it for that project only.
func FuzzRefreshToken(f *testing.F) {
	master := []byte("fuzz master key, 32 bytes long!!")
	c := newRefreshCodec(master)
	fam := store.FormatID(store.PrefixFamily, [store.IDBytes]byte{1, 2, 3})
	good := c.token("alpha", fam, 7)
	for _, s := range []string{good, good[:len(good)-1] + "A", strings.ToUpper(good), "rt_", "rt_" + strings.Repeat("A", 75),
		c.token("beta", fam, 7), c.token("alpha", fam, 1<<62), good + "="} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		familyID, gen, ok := c.parse("alpha", text)
		if !ok {
			return
		}
		if again := c.token("alpha", familyID, gen); again != text {
			t.Fatalf("parse(%q) accepted a text the codec does not make (it makes %q)", text, again)
		}
		if _, _, ok := c.parse("beta", text); ok {
			t.Fatalf("parse(%q) accepted a token of alpha in beta", text)
		}
	})
}
