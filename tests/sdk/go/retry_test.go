// Retries: against a server of its own that answers a share of the inserts 503 ServerBusy
// (--faultRate), the suite's clients (retries off) see every fault as an
// *azcore.ResponseError, so no 5xx is hidden anywhere in the suite; a client with the
// SDK's retry policy on gets every insert through. Needs AZTABLE_BINARY.
package aztablesuite

import (
	"errors"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
)

func faultyServer(t *testing.T) *suite {
	t.Helper()
	return ownServer(t, "--faultRate", "0.3", "--faultSeed", "7", "--faultOps", "InsertEntity")[0]
}

func TestRetriesOffSurfaceEveryFault(t *testing.T) {
	s := faultyServer(t)
	c, _ := s.freshTable(t, "gofaults")
	ok, busy := map[string]bool{}, 0
	for i := 0; i < 30; i++ {
		rk := fmt.Sprintf("%03d", i)
		_, err := c.AddEntity(ctx(t), marshal(t, map[string]any{"PartitionKey": "p", "RowKey": rk}), nil)
		if err == nil {
			ok[rk] = true
			continue
		}
		var re *azcore.ResponseError
		if !errors.As(err, &re) || re.StatusCode != http.StatusServiceUnavailable || re.ErrorCode != "ServerBusy" {
			t.Fatalf("insert %s: %v", rk, err)
		}
		busy++
	}
	if busy == 0 {
		t.Fatal("no insert was answered 503: the test proved nothing")
	}
	es, _ := listAll(t, c, nil)
	if len(es) != len(ok) {
		t.Fatalf("%d rows for %d successful inserts (a refused insert must write nothing)", len(es), len(ok))
	}
}

func TestSDKRetryPolicyGetsEveryInsertThrough(t *testing.T) {
	s := faultyServer(t)
	_, name := s.freshTable(t, "goretry")
	opts := clientOptions()
	opts.Retry = policy.RetryOptions{MaxRetries: 8, RetryDelay: 10 * time.Millisecond, MaxRetryDelay: 50 * time.Millisecond}
	rec := &recorder{}
	opts.PerRetryPolicies = []policy.Policy{rec}
	svc, err := aztables.NewServiceClientWithSharedKey(s.endpoint, s.cred, opts)
	must(t, err, "client")
	c := svc.NewClient(name)
	for i := 0; i < 30; i++ {
		_, err := c.AddEntity(ctx(t), marshal(t, map[string]any{"PartitionKey": "p", "RowKey": fmt.Sprintf("%03d", i)}), nil)
		must(t, err, "AddEntity with retries")
	}
	retried := 0
	for _, st := range rec.statuses {
		if st == http.StatusServiceUnavailable {
			retried++
		}
	}
	if retried == 0 {
		t.Fatal("no 503 was retried: the test proved nothing")
	}
	es, _ := listAll(t, c, nil)
	if len(es) != 30 {
		t.Fatalf("%d rows after 30 inserts", len(es))
	}
}
