// Package failovertest holds the failover test of the PostgreSQL store: two
// Latchkey instances on a primary with a synchronous standby, reached by a
// multi-host URL with target_session_attrs=read-write, through a promotion
// of the standby and the loss of the old primary. It has no code of its
// own, only tests.
//
// # What the tests check
//
//   - TestFailover_UnderLoad: under a bounded load (logins, logouts,
//     refresh chains, contacts read with API keys and with login tokens, an
//     API key created and revoked about every second), the standby is
//     promoted and the old primary stopped, in either order (a second
//     apart), each on a fresh pair. No revoked key or ended session
//     is accepted after its revocation was acknowledged, every refresh
//     token acknowledged before the failover still refreshes after it, no
//     acknowledged write is lost, each instance serves again within 15
//     seconds of the new primary accepting writes without a restart, and
//     in between every answer is 503 unavailable with Retry-After, never a
//     500. Afterwards a key revoked through one instance reaches a long
//     poll of the other's revocation feed. It logs each instance's window
//     of 5xx answers and the count of lost acknowledged writes.
//   - TestFailover_SnapshotReuse: a promoted standby reuses the transaction
//     ids the old primary handed out, so a snapshot's text can repeat on
//     another database. An instance that read with key K and with a login
//     token on the old primary after the promotion must refuse both once
//     K is revoked and the session ended on the new primary, even when the
//     new primary's snapshot text is the one the instance saw.
//   - TestFailover_InDoubtRefresh: a refresh whose commit the old primary
//     wrote and the synchronous standby received, but that was never
//     acknowledged (the primary died first), is answered 503; presented
//     again once the standby is promoted, within the reuse window, the
//     same refresh token gets the successor that commit made, and the
//     session goes on.
//   - TestFailover_StandbyRefusesWrites: a store opened on the hot standby
//     answers every write with store.ErrUnavailable and CheckWritable with
//     it too, the example server's /healthz is 503 there (200 on the
//     primary), and an instance on it answers console sign-in, login,
//     refresh and logout with 503 and changes nothing.
//
// # Running them
//
// The tests need a pair of PostgreSQL servers made by .ci/pgpair (which
// needs PostgreSQL 15's binaries, and root or the postgres user), named by
// the LATCHKEY_TEST_FAILOVER environment variable. Unset, they skip; set,
// they fail when the pair is missing or unhealthy. A test that promotes
// the standby uses the pair up; the next test makes a fresh pair in the
// same directory with .ci/pgpair reset. From the repository's root:
//
//	dir=$(mktemp -d) && .ci/pgpair start "$dir" &&
//	LATCHKEY_TEST_FAILOVER="$dir" go test -count=1 -v -run Failover ./internal/failovertest/;
//	.ci/pgpair teardown "$dir"
//
// .ci/run does this after the README's test command.
package failovertest
