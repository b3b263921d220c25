package sqlite

import (
	"os/exec"
	"strings"
	"testing"
)

// TestLibcMatchesSQLite: modernc.org/sqlite is built for one exact version
// of modernc.org/libc and says the two must match. The store does not
// require libc itself (go.mod lists it as indirect), so the version built is
// the one modernc.org/sqlite requires, unless another requirement of the
// module raises it; this test fails then.
func TestLibcMatchesSQLite(t *testing.T) {
	t.Parallel()
	goCmd := func(args ...string) string {
		t.Helper()
		out, err := exec.Command("go", args...).Output()
		if err != nil {
			t.Fatalf("go %s: %v", strings.Join(args, " "), err)
		}
		return string(out)
	}
	// The versions the build selects.
	selected := map[string]string{}
	for _, line := range strings.Split(goCmd("list", "-m", "modernc.org/sqlite", "modernc.org/libc"), "\n") {
		if path, v, ok := strings.Cut(strings.TrimSpace(line), " "); ok {
			selected[path] = v
		}
	}
	sqliteV, libcV := selected["modernc.org/sqlite"], selected["modernc.org/libc"]
	if sqliteV == "" || libcV == "" {
		t.Fatalf("the build selects modernc.org/sqlite %q and modernc.org/libc %q", sqliteV, libcV)
	}
	// The version modernc.org/sqlite requires.
	want := ""
	for _, line := range strings.Split(goCmd("mod", "graph"), "\n") {
		from, to, ok := strings.Cut(line, " ")
		if ok && from == "modernc.org/sqlite@"+sqliteV && strings.HasPrefix(to, "modernc.org/libc@") {
			want = strings.TrimPrefix(to, "modernc.org/libc@")
		}
	}
	if want == "" {
		t.Fatalf("go mod graph names no modernc.org/libc requirement of modernc.org/sqlite@%s", sqliteV)
	}
	if libcV != want {
		t.Errorf("the build selects modernc.org/libc %s, modernc.org/sqlite %s requires %s: they must match (go get modernc.org/libc@%s)",
			libcV, sqliteV, want, want)
	}
}
