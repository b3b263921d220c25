package openapitest

import (
	"encoding/json"
	"errors"
	"net/url"
	"strings"
)

// secretMembers are the members of a JSON body, and the parameters of a
// form body, whose values are secrets.
var secretMembers = []string{"password", "access_token", "refresh_token", "token"}

// secretsOf returns the secrets an exchange carries: the Authorization
// header's credentials and the values of the secret members of both bodies.
func secretsOf(ex Exchange) []string {
	var out []string
	for _, a := range ex.Request.Header.Values("Authorization") {
		if _, cred, ok := strings.Cut(a, " "); ok && cred != "" {
			out = append(out, cred)
			if _, secret, err := basicCredentials(cred); err == nil {
				out = append(out, secret)
			}
		}
		out = append(out, a)
	}
	for _, body := range [][]byte{ex.RequestBody, ex.Body} {
		var m map[string]any
		if json.Unmarshal(body, &m) == nil {
			for _, k := range secretMembers {
				if s, ok := m[k].(string); ok && s != "" {
					out = append(out, s)
				}
			}
		}
	}
	if form, err := url.ParseQuery(string(ex.RequestBody)); err == nil {
		for _, k := range secretMembers {
			for _, s := range form[k] {
				if s != "" {
					out = append(out, s)
				}
			}
		}
	}
	return out
}

// redact returns err with every secret in its text replaced, or nil for a
// nil err.
func redact(err error, secrets []string) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	for _, s := range secrets {
		msg = strings.ReplaceAll(msg, s, "[redacted]")
	}
	return errors.New(msg)
}
