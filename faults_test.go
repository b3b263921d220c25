package latchkey_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSlowBody_IsNeverAnsweredOK: a login, refresh or logout whose body is
// cut off by the server's ReadTimeout (the client sent half of it and
// stalled) is answered 400 invalid_request, never the empty 200 that
// net/http sends for a handler that wrote nothing.
func TestSlowBody_IsNeverAnsweredOK(t *testing.T) {
	_, h := newPathLatchkey(t, openStore(t), nil)
	srv := httptest.NewUnstartedServer(h)
	srv.Config.ReadTimeout = 200 * time.Millisecond
	srv.Start()
	t.Cleanup(srv.Close)

	for _, path := range []string{"/v1/identity/login", "/v1/identity/refresh", "/v1/identity/logout"} {
		t.Run(path, func(t *testing.T) {
			conn, err := net.Dial("tcp", srv.Listener.Addr().String())
			require.NoError(t, err)
			defer conn.Close()
			half := `{"email":"someone@example.com",`
			_, err = fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s",
				path, srv.Listener.Addr(), 2*len(half), half)
			require.NoError(t, err)
			// The rest never comes; the server's read deadline passes.
			require.NoError(t, conn.SetReadDeadline(time.Now().Add(time.Minute)))
			res, err := http.ReadResponse(bufio.NewReader(conn), nil)
			require.NoError(t, err, "the server answers a request whose body it gave up on")
			defer res.Body.Close()
			require.NotEqual(t, http.StatusOK, res.StatusCode)
			assert.Equal(t, http.StatusBadRequest, res.StatusCode)
			assert.Equal(t, "application/problem+json", res.Header.Get("Content-Type"))
			var p struct{ Code string }
			require.NoError(t, json.NewDecoder(res.Body).Decode(&p))
			assert.Equal(t, "invalid_request", p.Code)
		})
	}
}
