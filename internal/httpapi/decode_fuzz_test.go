package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/latchkey-dev/latchkey/problem"
)

// counter is a struct field that counts the members encoding/json decodes
// into it.
type counter int

func (c *counter) UnmarshalJSON([]byte) error { *c++; return nil }

// maxReferenceFields bounds the struct types the reference builds for one
// body, since reflect keeps every type it builds. Pairs of names past it
// are still checked against bytes.EqualFold.
const maxReferenceFields = 48

// fieldNamed returns a new *struct{F counter} whose field encoding/json
// names name, or false if no struct field can have that name (a tag that
// encoding/json finds invalid, "-", or one with a comma, names the field
// otherwise).
func fieldNamed(name string) (reflect.Value, bool) {
	typ := reflect.StructOf([]reflect.StructField{{
		Name: "F",
		Type: reflect.TypeFor[counter](),
		Tag:  reflect.StructTag("json:" + strconv.Quote(name)),
	}})
	v := reflect.New(typ)
	got, err := json.Marshal(v.Interface())
	if err != nil {
		return reflect.Value{}, false
	}
	want, err := json.Marshal(map[string]int{name: 0})
	if err != nil || !bytes.Equal(got, want) {
		return reflect.Value{}, false
	}
	return v, true
}

// reachesOneField reports whether encoding/json, decoding an object with
// the member names names into some struct, stores two of the members into
// one field: for each candidate field name (each name, upper- and
// lower-cased), it decodes an object with those names into a struct with
// that one field and counts the members the field received. It builds at
// most *budget struct types, and counts them off.
func reachesOneField(names []string, budget *int) bool {
	var obj bytes.Buffer
	obj.WriteByte('{')
	for i, n := range names {
		if i > 0 {
			obj.WriteByte(',')
		}
		q, _ := json.Marshal(n)
		obj.Write(q)
		obj.WriteString(":0")
	}
	obj.WriteByte('}')
	tried := map[string]bool{}
	for _, n := range names {
		for _, m := range []string{n, strings.ToUpper(n), strings.ToLower(n)} {
			if tried[m] || *budget <= 0 {
				continue
			}
			tried[m] = true
			*budget--
			v, ok := fieldNamed(m)
			if !ok {
				continue
			}
			if err := json.Unmarshal(obj.Bytes(), v.Interface()); err != nil {
				panic("decoding a valid object into a struct of counters: " + err.Error())
			}
			if v.Elem().Field(0).Int() >= 2 {
				return true
			}
		}
	}
	return false
}

// objectNames returns the member names of each object in the JSON value
// body, in order, read with encoding/json's tokenizer, or false if body is
// not one valid JSON value.
func objectNames(body []byte) ([][]string, bool) {
	if !json.Valid(body) {
		return nil, false
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	var objects [][]string
	var walk func() bool
	walk = func() bool {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		switch tok {
		case json.Delim('{'):
			var names []string
			for dec.More() {
				tok, err := dec.Token()
				if err != nil {
					return false
				}
				names = append(names, tok.(string))
				if !walk() {
					return false
				}
			}
			objects = append(objects, names)
			_, err = dec.Token()
			return err == nil
		case json.Delim('['):
			for dec.More() {
				if !walk() {
					return false
				}
			}
			_, err = dec.Token()
			return err == nil
		}
		return true
	}
	return objects, walk()
}

// checkDuplicates fails t if DecodeJSON accepts body although encoding/json
// would store two of one object's members into one struct field, or if
// checkObject's verdict on duplicates differs from bytes.EqualFold's: a body
// is refused as giving a member twice exactly when one of its objects has
// two names that bytes.EqualFold finds equal (which encoding/json documents
// as its matching rule).
func checkDuplicates(t *testing.T, body []byte) {
	t.Helper()
	r := httptest.NewRequest(http.MethodPost, "/v1/identity/login", bytes.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	var dst struct{}
	decodeErr := DecodeJSON(httptest.NewRecorder(), r, &dst)
	checkErr := checkObject(body)
	if !utf8.Valid(body) {
		if decodeErr == nil {
			t.Fatalf("DecodeJSON accepted invalid UTF-8 %q", body)
		}
		return
	}
	// Into a struct{} no member has a wrong type: DecodeJSON refuses a
	// body exactly when checkObject does, for the same reason.
	if (decodeErr == nil) != (checkErr == nil) || checkErr != nil && !strings.Contains(decodeErr.Error(), checkErr.Error()) {
		t.Fatalf("DecodeJSON error %v and checkObject error %v disagree on %q", decodeErr, checkErr, body)
	}
	objects, ok := objectNames(body)
	if !ok {
		return
	}
	folded := false
	for _, names := range objects {
		for i := range names {
			for j := range i {
				folded = folded || bytes.EqualFold([]byte(names[i]), []byte(names[j]))
			}
		}
	}
	var dup *duplicateMemberError
	budget := maxReferenceFields
	for _, names := range objects {
		if decodeErr == nil && reachesOneField(names, &budget) {
			t.Fatalf("DecodeJSON accepted %q, whose object %q has two members encoding/json stores into one field", body, names)
		}
	}
	if errors.As(checkErr, &dup) != folded && (checkErr == nil || errors.As(checkErr, &dup)) {
		t.Fatalf("checkObject(%q) = %v, but two names of one object equal under bytes.EqualFold: %v", body, checkErr, folded)
	}
}

// FuzzDecodeJSONDuplicateMembers checks DecodeJSON's duplicate-member check
// against encoding/json's own field matching on whole bodies.
func FuzzDecodeJSONDuplicateMembers(f *testing.F) {
	for _, s := range []string{
		`{"email":"a@b.c","password":"pw"}`,
		`{"password":"a","PASSWORD":"b"}`,
		`{"password":"a","paſſword":"b"}`,
		`{"password":"a","pa\u017f\u017fword":"b"}`,
		`{"key":1,"\u212aey":2}`,
		`{"x":{"ι":1,"ͅ":2}}`,
		`{"x":[{"σ":1,"ς":2}]}`,
		`{"ǆ":1,"ǅ":2}`,
		`{"ß":1,"ẞ":2}`,
		`{"µ":1,"μ":2}`,
		`{"Ⓐ":1,"ⓐ":2}`,
		`{"a":1,"b":{"a":2}}`,
		`{"\ud800":1,"\ufffd":2}`,
		`{"a,string":1,"A,STRING":2}`,
		`{"-":1,"-":2}`,
		`[{"a":1,"a":2}]`,
		`{"a":1} {"a":2}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		checkDuplicates(t, body)
	})
}

// FuzzDecodeJSONMemberPair checks the duplicate-member check on two member
// names the fuzzer picks, given side by side at the top level, in a nested
// object and in an object in an array.
func FuzzDecodeJSONMemberPair(f *testing.F) {
	for _, p := range [][2]string{
		{"password", "password"}, {"password", "PASSWORD"}, {"password", "paſſword"},
		{"key", "\u212aey"}, {"kelvin", "KELVIN"}, {"ι", "\u0345"}, {"\u0345", "\u1fbe"},
		{"σ", "ς"}, {"ǆ", "ǅ"}, {"ß", "ẞ"}, {"µ", "Μ"}, {"å", "\u212b"}, {"Ⓐ", "ⓐ"},
		{"email", "emaıl"}, {"email", "EMAİL"}, {"a", "b"}, {"", ""}, {"\x00", "\x00"},
	} {
		f.Add(p[0], p[1])
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		qa, _ := json.Marshal(a)
		qb, _ := json.Marshal(b)
		pair := `{` + string(qa) + `:"first",` + string(qb) + `:"second"}`
		for _, body := range []string{pair, `{"outer":` + pair + `}`, `{"list":[1,` + pair + `]}`} {
			checkDuplicates(t, []byte(body))
		}
	})
}

// TestDecodeJSON_DuplicateMemberSecondValueWins shows why the check exists:
// for two spellings of one name encoding/json keeps the second value.
func TestDecodeJSON_DuplicateMemberSecondValueWins(t *testing.T) {
	body := `{"password":"a","paſſword":"b"}`
	var got loginBody
	require.NoError(t, json.Unmarshal([]byte(body), &got))
	assert.Equal(t, "b", got.Password, "encoding/json keeps the second value")

	_, err := decode(t, "application/json", body)
	var e *problem.Error
	require.ErrorAs(t, err, &e)
	assert.Equal(t, problem.CodeInvalidRequest, e.Code)

	budget := maxReferenceFields
	assert.True(t, reachesOneField([]string{"password", "paſſword"}, &budget), "the reference sees one field")
	assert.False(t, reachesOneField([]string{"password", "passwort"}, &budget), "the reference sees two")
	assert.False(t, reachesOneField([]string{"Ⓐ", "ⓐ"}, &budget), "no struct field is named Ⓐ or ⓐ")
}
