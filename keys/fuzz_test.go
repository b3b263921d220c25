package keys

import (
	"crypto/ed25519"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// FuzzBearerToken: the bearer parser never panics, and what it accepts is
// one non-empty RFC 6750 b64token of at most MaxTokenBytes, taken from a
// single Authorization header with the Bearer scheme and one or more spaces
// ("Bearer" 1*SP b64token).
func FuzzBearerToken(f *testing.F) {
	for _, s := range []string{"Bearer abc.def.ghi", "bearer x", "BEARER a==", "Bearer  x", "Bearer", "Basic dXNlcg==",
		"Bearer a b", "Bearer a,b", "Bearer =", "Bearer " + strings.Repeat("a", MaxTokenBytes+1), ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, value string) {
		h := http.Header{}
		h.Set("Authorization", value)
		tok, presented, reason := BearerToken(h)
		if reason != "" {
			if tok != "" {
				t.Fatalf("BearerToken(%q) refused (%s) but returned a token", value, reason)
			}
			return
		}
		scheme, rest, _ := strings.Cut(value, " ")
		switch {
		case !presented:
			t.Fatalf("BearerToken(%q) accepted a token it says was not presented", value)
		case !strings.EqualFold(scheme, "Bearer") || strings.TrimLeft(rest, " ") != tok:
			t.Fatalf("BearerToken(%q) = %q, not the rest of a Bearer header", value, tok)
		case tok == "" || len(tok) > MaxTokenBytes || !isB64Token(tok):
			t.Fatalf("BearerToken(%q) accepted %q", value, tok)
		}
	})
}

// FuzzParse: Parse never panics, and accepts no token but the genuine one:
// any change to its text (a flipped character, a part cut or added, another
// header or claim) is refused, because the signature covers the exact bytes.
func FuzzParse(f *testing.F) {
	seed := make([]byte, ed25519.SeedSize)
	priv := ed25519.NewKeyFromSeed(seed)
	pub := priv.Public().(ed25519.PublicKey)
	now := time.Unix(1_800_000_000, 0)
	sign := func(c jwt.MapClaims) string {
		t := jwt.NewWithClaims(jwt.SigningMethodEdDSA, c)
		t.Header["kid"] = "sk_fuzz"
		s, err := t.SignedString(priv)
		if err != nil {
			f.Fatal(err)
		}
		return s
	}
	genuine := []string{
		sign(jwt.MapClaims{"aud": "alpha", "sub": "usr_a", "iat": now.Unix(), "exp": now.Add(time.Hour).Unix(),
			"jti": "j1", "sid": "rf_s", "tags": []string{"admin"}, "iss": "https://id.example.com"}),
		sign(jwt.MapClaims{"aud": "alpha", "sub": "key_k", "iat": now.Unix(), "jti": "j2"}),
	}
	for _, g := range genuine {
		f.Add(g)
		f.Add(g[:len(g)-1])
		f.Add(g + "x")
		f.Add(strings.Replace(g, ".", "..", 1))
	}
	f.Add("eyJhbGciOiJub25lIn0.e30.")
	key := func(kid string) (PublicKey, error) {
		if kid != "sk_fuzz" {
			return PublicKey{}, wrongProject("unknown kid")
		}
		return PublicKey{Alg: EdDSA, Key: pub}, nil
	}
	opts := &ParseOptions{Now: func() time.Time { return now }}
	f.Fuzz(func(t *testing.T, token string) {
		c, err := Parse(token, "alpha", key, opts)
		if err != nil {
			if !errors.Is(err, ErrInvalidToken) {
				t.Fatalf("Parse(%q): %v is not a refusal", token, err)
			}
			return
		}
		for _, g := range genuine {
			if token == g {
				if c.Audience != "alpha" {
					t.Fatalf("Parse(%q) audience %q", token, c.Audience)
				}
				return
			}
		}
		t.Fatalf("Parse accepted an altered token %q", token)
	})
}
