package main

import (
	"io"
	"net/http"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// scrape reads the metrics the server serves at url, as counter values by
// metric name and then by their labels ("k=v,k=v", sorted by key as
// Prometheus sorts them).
func scrape(t *testing.T, url string) map[string]map[string]float64 {
	t.Helper()
	res, err := http.Get(url)
	require.NoError(t, err)
	defer res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode)
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(res.Body)
	require.NoError(t, err)
	out := map[string]map[string]float64{}
	for name, f := range families {
		out[name] = map[string]float64{}
		for _, m := range f.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, l.GetName()+"="+l.GetValue())
			}
			key := strings.Join(labels, ",")
			switch f.GetType() {
			case dto.MetricType_COUNTER:
				out[name][key] = m.GetCounter().GetValue()
			case dto.MetricType_HISTOGRAM:
				out[name][key] = float64(m.GetHistogram().GetSampleCount())
			}
		}
	}
	return out
}

// TestE2E_metrics runs the server with -metrics-addr, logs in, refreshes,
// presents a forged token and a revoked API key, and finds each counted on
// the metrics listener, and no secret there.
func TestE2E_metrics(t *testing.T) {
	t.Parallel()
	dir := newDataDir(t)
	ok(t, dir, "pw-of-ada\n", "user create", "-project", "default", "-email", "ada@example.com")
	s := startServer(t, dir, "-metrics-addr", "127.0.0.1:0")
	var metricsURL string
	for _, line := range s.stdout {
		if line["event"] == "metrics" {
			metricsURL, _ = line["url"].(string)
		}
	}
	require.NotEmpty(t, metricsURL, "serve prints the metrics address: %v", s.stdout)
	assert.NotEqual(t, strings.TrimPrefix(s.base, "http://"), strings.TrimSuffix(strings.TrimPrefix(metricsURL, "http://"), "/metrics"),
		"the metrics have a listener of their own")
	r := s.do("GET", "/metrics", "", "")
	assert.Equal(t, http.StatusNotFound, r.status, "the API's listener does not serve the metrics")

	access, refresh := s.login("", "ada@example.com", "pw-of-ada")
	s.problem("POST", "/v1/identity/login", "", http.StatusUnsupportedMediaType, "unsupported_media_type") // not a login attempt
	r = s.do("POST", "/v1/identity/login", "", `{"email":"ada@example.com","password":"wrong"}`)
	require.Equal(t, http.StatusUnauthorized, r.status)
	r = s.do("POST", "/v1/identity/refresh", "", `{"refresh_token":"`+refresh+`"}`)
	require.Equal(t, http.StatusOK, r.status)
	s.list("", access, "")
	s.problem("GET", "/v1/contacts", "not.a.token", http.StatusUnauthorized, "invalid_token")
	key := ok(t, dir, "", "key create", "-project", "default", "-name", "svc")[0]
	ok(t, dir, "", "key revoke", "-project", "default", key["id"].(string))
	s.problem("GET", "/v1/contacts", key["token"].(string), http.StatusUnauthorized, "invalid_token")

	m := scrape(t, metricsURL)
	assert.Equal(t, map[string]float64{"result=success": 1, "result=failure": 1}, m["latchkey_logins_total"])
	assert.Equal(t, map[string]float64{"result=success": 1}, m["latchkey_refreshes_total"])
	verifications := m["latchkey_verifications_total"]
	assert.Equal(t, 1.0, verifications["cache=miss,result=ok"], "%v", verifications)
	assert.Equal(t, 1.0, verifications["cache=miss,result=malformed"], "%v", verifications)
	assert.Equal(t, 1.0, verifications["cache=miss,result=revoked"], "%v", verifications)
	assert.Equal(t, 2.0, m["latchkey_hash_queue_wait_seconds"][""], "one wait per hash: two logins, and none at start")
	assert.Contains(t, m, "go_goroutines", "the Go runtime's metrics too")

	// The CLI revoked the key in another process: this server counts
	// only what it does itself. A logout here ends a session.
	r = s.do("POST", "/v1/identity/logout", "", `{"refresh_token":"`+refresh+`"}`)
	require.Equal(t, http.StatusNoContent, r.status)
	m = scrape(t, metricsURL)
	assert.Equal(t, map[string]float64{"kind=session": 1}, m["latchkey_revocations_total"])

	res, err := http.Get(metricsURL)
	require.NoError(t, err)
	defer res.Body.Close()
	var body strings.Builder
	_, err = io.Copy(&body, res.Body)
	require.NoError(t, err)
	for _, secret := range []string{"ada@example.com", "pw-of-ada", access, refresh, key["token"].(string)} {
		assert.NotContains(t, body.String(), secret)
	}
}

// TestE2E_metricsOffByDefault checks that serve opens no metrics listener
// unless asked.
func TestE2E_metricsOffByDefault(t *testing.T) {
	t.Parallel()
	s := startServer(t, t.TempDir())
	for _, line := range s.stdout {
		assert.NotEqual(t, "metrics", line["event"])
	}
}
