package openapitest

import (
	"bytes"
	"io"
	"net/http"
)

// Transport returns a RoundTripper that sends each request with next (nil
// means http.DefaultTransport), reads the whole answer, checks the exchange
// and fails the test (t.Errorf, so it may run on any goroutine) when the
// document does not allow it. The caller reads the answer as it came.
func (v *Validator) Transport(next http.RoundTripper) http.RoundTripper {
	if next == nil {
		next = http.DefaultTransport
	}
	return transport{v: v, next: next}
}

// WrapClient makes c send through v.Transport(c.Transport).
func (v *Validator) WrapClient(c *http.Client) {
	c.Transport = v.Transport(c.Transport)
}

type transport struct {
	v    *Validator
	next http.RoundTripper
}

func (tr transport) RoundTrip(req *http.Request) (*http.Response, error) {
	var reqBody []byte
	if req.Body != nil && req.Body != http.NoBody {
		b, err := io.ReadAll(req.Body)
		_ = req.Body.Close()
		if err != nil {
			return nil, err
		}
		reqBody = b
	}
	out := req.Clone(req.Context())
	if reqBody != nil {
		out.Body = io.NopCloser(bytes.NewReader(reqBody))
		out.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(reqBody)), nil }
		out.ContentLength = int64(len(reqBody))
	}
	res, err := tr.next.RoundTrip(out)
	if err != nil {
		return res, err
	}
	body, err := io.ReadAll(res.Body)
	_ = res.Body.Close()
	if err != nil {
		return nil, err
	}
	res.Body = io.NopCloser(bytes.NewReader(body))
	tr.v.report(req.Context(), Exchange{
		Request: req, RequestBody: reqBody, Status: res.StatusCode, Header: res.Header, Body: body,
	})
	return res, nil
}
