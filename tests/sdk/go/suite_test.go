// The shared part of the aztable Go SDK (aztables) conformance suite: the server under test
// from AZTABLE_CONNECTION_STRING / AZTABLE_ENDPOINT, the two URL styles every test runs
// under (path-style http://127.0.0.1:PORT/devstoreaccount1 and production-style
// http://devstoreaccount1.table.localhost:PORT), the transport that resolves *.localhost to
// 127.0.0.1 inside the test process, clients with retries off, unique table names and the
// service-error assertions.
package aztablesuite

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
)

const (
	wellKnownAccount = "devstoreaccount1"
	wellKnownKey     = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
)

// suite is one URL style of the server under test.
type suite struct {
	style     string // "path" or "host"
	endpoint  string // the account's table endpoint, no trailing slash
	secondary string // the read-only -secondary endpoint of the same account
	account   string
	cred      *aztables.SharedKeyCredential
}

// parseConnectionString splits `k=v;k=v` (values may contain '=').
func parseConnectionString(cs string) map[string]string {
	out := map[string]string{}
	for _, seg := range strings.Split(cs, ";") {
		seg = strings.TrimSpace(seg)
		if seg == "" {
			continue
		}
		k, v, _ := strings.Cut(seg, "=")
		out[strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	return out
}

// localhostTransport dials every `*.localhost` host (and `localhost`) at 127.0.0.1, so
// production-style host names work without touching the machine's resolver.
func localhostTransport() *http.Client {
	dialer := &net.Dialer{Timeout: 10 * time.Second}
	tr := &http.Transport{
		Proxy: nil,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			host, port, err := net.SplitHostPort(addr)
			if err != nil {
				return nil, err
			}
			if host == "localhost" || strings.HasSuffix(host, ".localhost") {
				addr = net.JoinHostPort("127.0.0.1", port)
			}
			return dialer.DialContext(ctx, network, addr)
		},
		MaxIdleConnsPerHost: 16,
	}
	return &http.Client{Transport: tr}
}

var sharedTransport = localhostTransport()

// clientOptions: the *.localhost transport and no retries (a 5xx must fail the test, not be
// retried away); extra per-call policies (e.g. a response recorder) may be added.
func clientOptions(perCall ...policy.Policy) *aztables.ClientOptions {
	return &aztables.ClientOptions{ClientOptions: azcore.ClientOptions{
		Transport:       sharedTransport,
		Retry:           policy.RetryOptions{MaxRetries: -1},
		PerCallPolicies: perCall,
	}}
}

// suites derives both URL styles from the environment; every test runs once per style.
func suites(t *testing.T) []*suite {
	t.Helper()
	cs := os.Getenv("AZTABLE_CONNECTION_STRING")
	if cs == "" {
		t.Fatal("AZTABLE_CONNECTION_STRING is not set; run via scripts/sdk-tests.sh or export it to point at a running server")
	}
	parts := parseConnectionString(cs)
	endpoint := os.Getenv("AZTABLE_ENDPOINT")
	if endpoint == "" {
		endpoint = parts["TableEndpoint"]
	}
	endpoint = strings.TrimRight(endpoint, "/")
	if endpoint == "" {
		t.Fatal("no table endpoint: set AZTABLE_ENDPOINT or TableEndpoint= in the connection string")
	}
	account, key := parts["AccountName"], parts["AccountKey"]
	if account == "" || key == "" {
		t.Fatal("AZTABLE_CONNECTION_STRING needs AccountName= and AccountKey=")
	}
	cred, err := aztables.NewSharedKeyCredential(account, key)
	if err != nil {
		t.Fatalf("shared key credential: %v", err)
	}
	u, err := url.Parse(endpoint)
	if err != nil {
		t.Fatalf("AZTABLE_ENDPOINT %q: %v", endpoint, err)
	}
	port := u.Port()
	if port == "" {
		port = "80"
	}
	var path *suite
	if strings.Trim(u.Path, "/") == account {
		path = &suite{style: "path", endpoint: endpoint, secondary: endpoint + "-secondary", account: account, cred: cred}
	} else if strings.HasPrefix(u.Hostname(), account+".") {
		// Given host-style: the path style is the same server at 127.0.0.1.
		base := u.Scheme + "://127.0.0.1:" + port + "/" + account
		path = &suite{style: "path", endpoint: base, secondary: base + "-secondary", account: account, cred: cred}
	} else {
		t.Fatalf("AZTABLE_ENDPOINT %q names neither /%s nor the host %s.*", endpoint, account, account)
	}
	host := &suite{
		style:     "host",
		endpoint:  u.Scheme + "://" + account + ".table.localhost:" + port,
		secondary: u.Scheme + "://" + account + "-secondary.table.localhost:" + port,
		account:   account,
		cred:      cred,
	}
	return []*suite{path, host}
}

// eachStyle runs fn as a parallel subtest per URL style.
func eachStyle(t *testing.T, fn func(t *testing.T, s *suite)) {
	t.Helper()
	for _, s := range suites(t) {
		s := s
		t.Run(s.style, func(t *testing.T) {
			t.Parallel()
			fn(t, s)
		})
	}
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return c
}

func (s *suite) service(t *testing.T, perCall ...policy.Policy) *aztables.ServiceClient {
	t.Helper()
	c, err := aztables.NewServiceClientWithSharedKey(s.endpoint, s.cred, clientOptions(perCall...))
	if err != nil {
		t.Fatalf("NewServiceClientWithSharedKey(%s): %v", s.endpoint, err)
	}
	return c
}

// uniqueTableName: a valid table name no other test (or suite sharing the server) uses.
func uniqueTableName(prefix string) string {
	b := make([]byte, 10)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return prefix + hex.EncodeToString(b)
}

// freshTable creates a uniquely named table, deleted when the test ends.
func (s *suite) freshTable(t *testing.T, prefix string) (*aztables.Client, string) {
	t.Helper()
	svc := s.service(t)
	name := uniqueTableName(prefix)
	if _, err := svc.CreateTable(ctx(t), name, nil); err != nil {
		t.Fatalf("CreateTable(%s): %v", name, err)
	}
	t.Cleanup(func() {
		_, _ = svc.DeleteTable(context.Background(), name, nil)
	})
	return svc.NewClient(name), name
}

// wantError asserts err is the service's *azcore.ResponseError with the given status and
// error code (empty code: not checked).
func wantError(t *testing.T, err error, status int, code aztables.TableErrorCode) *azcore.ResponseError {
	t.Helper()
	if err == nil {
		t.Fatalf("expected a %d %s error, but the call succeeded", status, code)
	}
	var re *azcore.ResponseError
	if !errors.As(err, &re) {
		t.Fatalf("expected *azcore.ResponseError (%d %s), got %T: %v", status, code, err, err)
	}
	if re.StatusCode != status {
		t.Fatalf("status %d, want %d (%s): %v", re.StatusCode, status, re.ErrorCode, err)
	}
	if code != "" && re.ErrorCode != string(code) {
		t.Fatalf("error code %q, want %q: %v", re.ErrorCode, code, err)
	}
	return re
}

func must(t *testing.T, err error, what string) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// marshal is json.Marshal for test data that always marshals.
func marshal(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	must(t, err, "json.Marshal")
	return b
}

// addEntity adds a plain map entity and returns its ETag.
func addEntity(t *testing.T, c *aztables.Client, e map[string]any) azcore.ETag {
	t.Helper()
	resp, err := c.AddEntity(ctx(t), marshal(t, e), nil)
	must(t, err, "AddEntity")
	if resp.ETag == "" {
		t.Fatal("AddEntity: no ETag")
	}
	return resp.ETag
}

// getEntity reads an entity as a plain map (JSON numbers as float64, json.Number-free).
func getEntity(t *testing.T, c *aztables.Client, pk, rk string) (map[string]any, azcore.ETag) {
	t.Helper()
	resp, err := c.GetEntity(ctx(t), pk, rk, nil)
	must(t, err, "GetEntity("+pk+","+rk+")")
	var m map[string]any
	must(t, json.Unmarshal(resp.Value, &m), "unmarshal entity")
	return m, resp.ETag
}

// listAll drains a ListEntities pager into plain maps, also returning the page count.
func listAll(t *testing.T, c *aztables.Client, opts *aztables.ListEntitiesOptions) ([]map[string]any, int) {
	t.Helper()
	pager := c.NewListEntitiesPager(opts)
	var out []map[string]any
	pages := 0
	for pager.More() {
		page, err := pager.NextPage(ctx(t))
		must(t, err, "ListEntities page")
		pages++
		for _, raw := range page.Entities {
			var m map[string]any
			must(t, json.Unmarshal(raw, &m), "unmarshal listed entity")
			out = append(out, m)
		}
	}
	return out, pages
}

func rowKeys(es []map[string]any) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i], _ = e["RowKey"].(string)
	}
	return out
}

// recorder is a per-call policy that keeps the status and error code of every response
// (for the operations whose error the caller wants to look at on the wire too).
type recorder struct {
	statuses []int
	codes    []string
	urls     []string
	bodies   [][]byte
}

func (r *recorder) Do(req *policy.Request) (*http.Response, error) {
	resp, err := req.Next()
	if err == nil {
		r.statuses = append(r.statuses, resp.StatusCode)
		r.codes = append(r.codes, resp.Header.Get("x-ms-error-code"))
		r.urls = append(r.urls, req.Raw().URL.String())
		body, _ := runtime.Payload(resp) // buffered by the pipeline; not consumed
		r.bodies = append(r.bodies, body)
	}
	return resp, err
}

func (r *recorder) last(t *testing.T) (int, string, string) {
	t.Helper()
	if len(r.statuses) == 0 {
		t.Fatal("no HTTP response was recorded")
	}
	i := len(r.statuses) - 1
	return r.statuses[i], r.codes[i], r.urls[i]
}

var _ policy.Policy = (*recorder)(nil)
