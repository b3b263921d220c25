package latchkey_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/latchkey-dev/latchkey"
	"github.com/latchkey-dev/latchkey/internal/testutil"
	"github.com/latchkey-dev/latchkey/store"
	"github.com/latchkey-dev/latchkey/store/mysql"
	"github.com/latchkey-dev/latchkey/store/mysql/mytest"
	"github.com/latchkey-dev/latchkey/store/postgres"
	"github.com/latchkey-dev/latchkey/store/postgres/pgtest"
)

// instance is one full Latchkey deployment: its own PostgreSQL pool, its own
// handler stack and caches, served over real HTTP.
type instance struct {
	lk     *latchkey.Latchkey
	url    string
	client *http.Client // checks every exchange against the OpenAPI document
}

func startInstance(t *testing.T, dbURL string, now func() time.Time) instance {
	t.Helper()
	var st store.Store
	var err error
	if strings.HasPrefix(dbURL, "mysql://") {
		st, err = mysql.Open(t.Context(), dbURL, &mysql.Options{Logger: testLogger(t), MaxConns: 8})
	} else {
		st, err = postgres.Open(t.Context(), dbURL, &postgres.Options{Logger: testLogger(t), MaxConns: 8})
	}
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	lk, h := newPathLatchkey(t, st, &latchkey.Options{Now: now})
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	contract(t).WrapClient(srv.Client())
	return instance{lk: lk, url: srv.URL + "/p/shared", client: srv.Client()}
}

// call sends one request over HTTP and returns the status and the body.
func (in instance) call(t *testing.T, method, path, token, body string) (int, string) {
	res, b := in.do(t, method, path, token, body)
	if res == nil {
		return 0, b
	}
	return res.StatusCode, b
}

// do sends one request over HTTP and returns the response (its body read
// and closed) and the body; with no response, nil and the error.
func (in instance) do(t *testing.T, method, path, token, body string) (*http.Response, string) {
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, in.url+path, r)
	if err != nil {
		return nil, err.Error()
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := in.client.Do(req)
	if err != nil {
		return nil, err.Error()
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res, string(b)
}

type tokenSet struct {
	AccessToken  string `json:"access_token"`
	RefreshToken string `json:"refresh_token"`
}

func codeOf(body string) string {
	var p struct {
		Code string `json:"code"`
	}
	_ = json.Unmarshal([]byte(body), &p)
	return p.Code
}

// TestMultiInstance runs two instances on one PostgreSQL database and checks
// that every rule holds across them: revocation, the refresh race, replay
// detection and login throttling.
func TestMultiInstance(t *testing.T) { multiInstance(t, pgtest.NewDatabase(t)) }

// TestMultiInstance_MySQL is TestMultiInstance on one MySQL or MariaDB
// database.
func TestMultiInstance_MySQL(t *testing.T) { multiInstance(t, mytest.NewDatabase(t)) }

// multiInstance runs two instances on the database dbURL names.
func multiInstance(t *testing.T, dbURL string) {
	// A settable time shared by the two instances, so that the test can
	// step past the refresh reuse window without sleeping.
	clk := testutil.NewClock(time.Now().Round(0))
	a := startInstance(t, dbURL, clk.Now)
	b := startInstance(t, dbURL, clk.Now)
	ctx := t.Context()
	_, err := a.lk.CreateProject(ctx, "shared")
	require.NoError(t, err)
	_, err = b.lk.Users().Create(ctx, "shared", "ada@example.com", "pw-ada-secret", nil)
	require.NoError(t, err)
	createContact(t, a.lk.Store(), "shared", "Grace")

	t.Run("RevokeThroughOneRefusedByOther", func(t *testing.T) {
		key, token, err := a.lk.APIKeys().Create(ctx, "shared", "backend")
		require.NoError(t, err)
		for _, in := range []instance{a, b} {
			st, body := in.call(t, "GET", "/v1/contacts", token, "")
			require.Equal(t, http.StatusOK, st, body) // both have now cached the token
		}
		require.NoError(t, a.lk.APIKeys().Revoke(ctx, "shared", key.ID))
		st, body := b.call(t, "GET", "/v1/contacts", token, "")
		assert.Equal(t, http.StatusUnauthorized, st, body)
		assert.Equal(t, "invalid_token", codeOf(body))
		st, _ = a.call(t, "GET", "/v1/contacts", token, "")
		assert.Equal(t, http.StatusUnauthorized, st)
	})

	login := func(t *testing.T, in instance) tokenSet {
		t.Helper()
		st, body := in.call(t, "POST", "/v1/identity/login", "", `{"email":"ada@example.com","password":"pw-ada-secret"}`)
		require.Equal(t, http.StatusOK, st, body)
		var ts tokenSet
		require.NoError(t, json.Unmarshal([]byte(body), &ts))
		return ts
	}
	refresh := func(in instance, rt string) (int, tokenSet, string) {
		st, body := in.call(t, "POST", "/v1/identity/refresh", "", `{"refresh_token":"`+rt+`"}`)
		var ts tokenSet
		_ = json.Unmarshal([]byte(body), &ts)
		return st, ts, body
	}

	t.Run("RefreshRaceSplitAcrossInstances", func(t *testing.T) {
		first := login(t, a)
		const n = 20
		var wg sync.WaitGroup
		results := make([]tokenSet, n)
		statuses := make([]int, n)
		start := make(chan struct{})
		for i := range n {
			in := a
			if i%2 == 1 {
				in = b
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				statuses[i], results[i], _ = refresh(in, first.RefreshToken)
			}()
		}
		close(start)
		wg.Wait()
		successors := map[string]int{}
		for i := range n {
			require.Equal(t, http.StatusOK, statuses[i], "refresh %d", i)
			successors[results[i].RefreshToken]++
			st, body := b.call(t, "GET", "/v1/contacts", results[i].AccessToken, "")
			require.Equal(t, http.StatusOK, st, "access token of refresh %d: %s", i, body)
		}
		require.Len(t, successors, 1, "20 concurrent refreshes of one token must share one successor: %v", successors)
		for s := range successors {
			require.NotEqual(t, first.RefreshToken, s)
			st, _, body := refresh(a, s)
			require.Equal(t, http.StatusOK, st, "the successor works: %s", body)
		}
	})

	t.Run("ReplayOnOtherInstanceRevokesFamily", func(t *testing.T) {
		first := login(t, a)
		st, next, body := refresh(a, first.RefreshToken)
		require.Equal(t, http.StatusOK, st, body)
		clk.Advance(11 * time.Second) // past the 10 s reuse window
		st, _, body = refresh(b, first.RefreshToken)
		require.Equal(t, http.StatusUnauthorized, st, body)
		assert.Equal(t, "invalid_refresh_token", codeOf(body))
		st, _, body = refresh(a, next.RefreshToken)
		assert.Equal(t, http.StatusUnauthorized, st, "the family is revoked everywhere: %s", body)
		assert.Equal(t, "invalid_refresh_token", codeOf(body))
	})

	t.Run("ThrottlingCountedAcrossInstances", func(t *testing.T) {
		// The default account limit is 10 failures per window: five
		// through each instance reach it together.
		wrong := `{"email":"ada@example.com","password":"wrong"}`
		for i := range 10 {
			in := a
			if i%2 == 1 {
				in = b
			}
			st, body := in.call(t, "POST", "/v1/identity/login", "", wrong)
			require.Equal(t, http.StatusUnauthorized, st, "attempt %d: %s", i+1, body)
		}
		for _, in := range []instance{a, b} {
			st, body := in.call(t, "POST", "/v1/identity/login", "", `{"email":"ada@example.com","password":"pw-ada-secret"}`)
			require.Equal(t, http.StatusTooManyRequests, st, fmt.Sprintf("after 10 failures split across instances: %s", body))
			assert.Equal(t, "rate_limited", codeOf(body))
		}
	})
}
