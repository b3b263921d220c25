package openapitest

import (
	"context"
	"testing"
)

// BenchmarkCheck measures what checking one exchange adds to a test: a
// contacts page answered 200, and a refused request answered 401.
func BenchmarkCheck(b *testing.B) {
	v := New(b, nil)
	cases := map[string]Exchange{
		"page":    exchange{method: "GET", target: "/v1/contacts?limit=1", auth: "Bearer " + apiKey, status: 200, header: jsonOK, body: contactPage}.build(),
		"refused": exchange{method: "GET", target: "/v1/contacts", status: 401, header: problemHeaders("WWW-Authenticate", "Bearer"), body: problemBody("invalid_token", 401)}.build(),
	}
	for name, ex := range cases {
		b.Run("exchange="+name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := v.Check(context.Background(), ex); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
