package interop

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/coreos/go-oidc/v3/oidc"
	"github.com/stretchr/testify/require"
)

// goService is the README's Go service verifying a Latchkey token: go-oidc
// given the project's base_url and id.
func goService(ctx context.Context, issuer, project, bearerToken string) (string, error) {
	// README: go-oidc
	provider, err := oidc.NewProvider(ctx, issuer) // issuer: the project's base_url, its tokens' iss
	if err != nil {
		return "", err
	}
	verifier := provider.Verifier(&oidc.Config{ClientID: project}) // aud: the project id
	token, err := verifier.Verify(ctx, bearerToken)                // signature (the key's own alg), iss, aud, exp
	// end README
	if err != nil {
		return "", err
	}
	return token.Subject, nil
}

// TestReadme_goService runs the README's Go snippet on a login token of a
// project of each algorithm, and on another project's token.
func TestReadme_goService(t *testing.T) {
	projects := deployment(t)
	for _, p := range projects {
		sub, err := goService(t.Context(), p.issuer, p.id, p.login)
		require.NoError(t, err, p.alg)
		require.True(t, strings.HasPrefix(sub, "usr_"), sub)
	}
	_, err := goService(t.Context(), projects["rs"].issuer, "rs", projects["ed"].login)
	require.Error(t, err, "another project's token")
}

// regionRE matches a region the README shows: from a "README: name" comment
// line to an "end README" comment line.
var regionRE = regexp.MustCompile(`(?s)\n[ \t]*// README: [^\n]*\n(.*?)\n[ \t]*// end README`)

// TestReadme_snippets: the README shows the Go and Node snippets exactly as
// the tests run them (TestReadme_goService above; the Node check,
// node/check.mjs, which .ci/run runs), less their common indentation.
func TestReadme_snippets(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	require.NoError(t, err)
	for _, file := range []string{"readme_test.go", filepath.Join("node", "check.mjs")} {
		src, err := os.ReadFile(file)
		require.NoError(t, err)
		regions := regionRE.FindAllSubmatch(src, -1)
		require.NotEmpty(t, regions, file)
		for _, m := range regions {
			snippet := dedent(string(m[1]))
			require.Contains(t, string(readme), snippet, "README.md must show this region of %s verbatim", file)
		}
	}
}

// dedent removes the leading tabs or spaces that every non-empty line of s
// shares.
func dedent(s string) string {
	lines := strings.Split(s, "\n")
	prefix := ""
	first := true
	for _, l := range lines {
		if strings.TrimSpace(l) == "" {
			continue
		}
		ws := l[:len(l)-len(strings.TrimLeft(l, " \t"))]
		if first || strings.HasPrefix(prefix, ws) {
			prefix, first = ws, false
		} else {
			for !strings.HasPrefix(ws, prefix) {
				prefix = prefix[:len(prefix)-1]
			}
		}
	}
	for i, l := range lines {
		lines[i] = strings.TrimPrefix(l, prefix)
	}
	return strings.Join(lines, "\n")
}
