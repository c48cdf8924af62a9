// Shared access signatures made by the Go SDK and used by its clients: Client.GetTableSASURL
// (table SAS, permissions enforced), ServiceClient.GetAccountSASURL (https-only, so refused
// over http with AuthorizationProtocolMismatch, as the service does) and an account SAS
// signed for https,http by AccountSASSignatureValues, used by service and table clients.
package aztablesuite

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
)

// sasService: a shared-key service client whose endpoint ends with '/': GetTableSASURL
// appends the table name to the endpoint as it is, so without the slash the name would be
// glued onto the account (".../devstoreaccount1mytable").
func (s *suite) sasService(t *testing.T) *aztables.ServiceClient {
	t.Helper()
	c, err := aztables.NewServiceClientWithSharedKey(s.endpoint+"/", s.cred, clientOptions())
	must(t, err, "NewServiceClientWithSharedKey")
	return c
}

func sasClient(t *testing.T, sasURL string) *aztables.Client {
	t.Helper()
	c, err := aztables.NewClientWithNoCredential(sasURL, clientOptions())
	must(t, err, "NewClientWithNoCredential("+sasURL+")")
	return c
}

func TestTableSASURL(t *testing.T) {
	eachStyle(t, func(t *testing.T, s *suite) {
		_, name := s.freshTable(t, "GoSasMixedCase")
		owner := s.sasService(t).NewClient(name)
		addEntity(t, owner, map[string]any{"PartitionKey": "p", "RowKey": "r", "V": 1})
		start, expiry := time.Now().Add(-5*time.Minute), time.Now().Add(time.Hour)

		all, err := owner.GetTableSASURL(aztables.SASPermissions{Read: true, Add: true, Update: true, Delete: true}, start, expiry)
		must(t, err, "GetTableSASURL")
		u, err := url.Parse(all)
		must(t, err, "parse SAS URL")
		if !strings.HasSuffix(u.Path, "/"+name) || u.Query().Get("sig") == "" || u.Query().Get("tn") != strings.ToLower(name) {
			t.Fatalf("SAS URL %s", all)
		}
		c := sasClient(t, all)
		got, _ := getEntity(t, c, "p", "r")
		if got["V"] != float64(1) {
			t.Fatalf("read through the SAS: %v", got)
		}
		addEntity(t, c, map[string]any{"PartitionKey": "p", "RowKey": "n", "V": 2})
		_, err = c.UpsertEntity(ctx(t), marshal(t, map[string]any{"PartitionKey": "p", "RowKey": "n", "V": 3}), &aztables.UpsertEntityOptions{UpdateMode: aztables.UpdateModeReplace})
		must(t, err, "UpsertEntity through the SAS")
		_, err = c.DeleteEntity(ctx(t), "p", "r", nil)
		must(t, err, "DeleteEntity through the SAS")
		es, _ := listAll(t, owner, nil)
		if got := rowKeys(es); len(got) != 1 || got[0] != "n" || es[0]["V"] != float64(3) {
			t.Fatalf("after SAS writes: %v", es)
		}

		// Read only: writes are 403 AuthorizationPermissionMismatch.
		ro, err := owner.GetTableSASURL(aztables.SASPermissions{Read: true}, start, expiry)
		must(t, err, "GetTableSASURL r")
		reader := sasClient(t, ro)
		if es, _ := listAll(t, reader, nil); len(es) != 1 {
			t.Fatalf("reader sees %d", len(es))
		}
		_, err = reader.AddEntity(ctx(t), marshal(t, map[string]any{"PartitionKey": "p", "RowKey": "x"}), nil)
		wantError(t, err, http.StatusForbidden, "AuthorizationPermissionMismatch")
		_, err = reader.DeleteEntity(ctx(t), "p", "n", nil)
		wantError(t, err, http.StatusForbidden, "AuthorizationPermissionMismatch")
		// Add only: reads are refused.
		ao, err := owner.GetTableSASURL(aztables.SASPermissions{Add: true}, start, expiry)
		must(t, err, "GetTableSASURL a")
		_, err = sasClient(t, ao).GetEntity(ctx(t), "p", "n", nil)
		wantError(t, err, http.StatusForbidden, "AuthorizationPermissionMismatch")
		// Expired, and for another table: 403.
		old, err := owner.GetTableSASURL(aztables.SASPermissions{Read: true}, time.Now().Add(-2*time.Hour), time.Now().Add(-time.Hour))
		must(t, err, "GetTableSASURL expired")
		_, err = sasClient(t, old).GetEntity(ctx(t), "p", "n", nil)
		wantError(t, err, http.StatusForbidden, "AuthenticationFailed")
		_, other := s.freshTable(t, "gosasother")
		otherURL := strings.Replace(all, "/"+name+"?", "/"+other+"?", 1)
		_, err = sasClient(t, otherURL).NewListEntitiesPager(nil).NextPage(ctx(t))
		wantError(t, err, http.StatusForbidden, "")
		// A tampered signature: 403 AuthenticationFailed.
		q := u.Query()
		q.Set("sp", "raud")
		q.Set("sig", "AAAA"+q.Get("sig")[4:])
		u.RawQuery = q.Encode()
		_, err = sasClient(t, u.String()).GetEntity(ctx(t), "p", "n", nil)
		wantError(t, err, http.StatusForbidden, "AuthenticationFailed")
	})
}

func TestAccountSASURLIsHTTPSOnly(t *testing.T) {
	eachStyle(t, func(t *testing.T, s *suite) {
		svc := s.sasService(t)
		sasURL, err := svc.GetAccountSASURL(aztables.AccountSASResourceTypes{Service: true, Container: true, Object: true},
			aztables.AccountSASPermissions{Read: true, List: true}, time.Now().Add(-5*time.Minute), time.Now().Add(time.Hour))
		must(t, err, "GetAccountSASURL")
		u, err := url.Parse(sasURL)
		must(t, err, "parse")
		if u.Query().Get("spr") != "https" || u.Query().Get("ss") != "t" {
			t.Fatalf("account SAS URL %s", sasURL)
		}
		// Used over plain http the service refuses it: the token allows https only.
		c, err := aztables.NewServiceClientWithNoCredential(sasURL, clientOptions())
		must(t, err, "NewServiceClientWithNoCredential")
		_, err = c.NewListTablesPager(nil).NextPage(ctx(t))
		wantError(t, err, http.StatusForbidden, "AuthorizationProtocolMismatch")
	})
}

func accountSAS(t *testing.T, s *suite, resourceTypes, perms string) string {
	t.Helper()
	qp, err := aztables.AccountSASSignatureValues{
		Protocol:      aztables.SASProtocolHTTPSandHTTP,
		StartTime:     time.Now().Add(-5 * time.Minute).UTC(),
		ExpiryTime:    time.Now().Add(time.Hour).UTC(),
		Permissions:   perms,
		Services:      "t",
		ResourceTypes: resourceTypes,
	}.Sign(s.cred)
	must(t, err, "AccountSASSignatureValues.Sign")
	return qp.Encode()
}

func TestAccountSAS(t *testing.T) {
	eachStyle(t, func(t *testing.T, s *suite) {
		shared := s.service(t)
		full, err := aztables.NewServiceClientWithNoCredential(s.endpoint+"/?"+accountSAS(t, s, "sco", "rwdlacu"), clientOptions())
		must(t, err, "account SAS service client")
		name := uniqueTableName("goacct")
		_, err = full.CreateTable(ctx(t), name, nil)
		must(t, err, "CreateTable through an account SAS")
		t.Cleanup(func() { _, _ = shared.DeleteTable(ctx(t), name, nil) })
		tc := full.NewClient(name)
		addEntity(t, tc, map[string]any{"PartitionKey": "p", "RowKey": "r", "V": 1})
		if es, _ := listAll(t, shared.NewClient(name), nil); len(es) != 1 {
			t.Fatalf("shared key sees %d", len(es))
		}
		names, _ := listTableNames(t, full, &aztables.ListTablesOptions{Filter: to.Ptr("TableName eq '" + name + "'")})
		if len(names) != 1 {
			t.Fatalf("listed through the SAS: %v", names)
		}
		// A table client from a URL carrying the account SAS.
		byURL := sasClient(t, s.endpoint+"/"+name+"?"+accountSAS(t, s, "o", "r"))
		if got, _ := getEntity(t, byURL, "p", "r"); got["V"] != float64(1) {
			t.Fatalf("read through an object SAS: %v", got)
		}
		_, err = byURL.AddEntity(ctx(t), marshal(t, map[string]any{"PartitionKey": "p", "RowKey": "x"}), nil)
		wantError(t, err, http.StatusForbidden, "AuthorizationPermissionMismatch")
		// Resource type "s" does not cover creating tables ("c"): AuthorizationResourceTypeMismatch.
		svcOnly, err := aztables.NewServiceClientWithNoCredential(s.endpoint+"/?"+accountSAS(t, s, "s", "rwdlacu"), clientOptions())
		must(t, err, "service-only SAS")
		_, err = svcOnly.CreateTable(ctx(t), uniqueTableName("gonever"), nil)
		wantError(t, err, http.StatusForbidden, "AuthorizationResourceTypeMismatch")
		_, err = full.DeleteTable(ctx(t), name, nil)
		must(t, err, "DeleteTable through an account SAS")
	})
}

func toPtr[T any](v T) *T { return &v }

// SASSignatureValues.Sign (and so GetTableSASURL) signs the key range (spk, srk, epk, erk)
// but leaves it out of the query, so the service, which signs what the query carries,
// refuses such a token: 403 AuthenticationFailed. With the range added to the URL the same
// signature is valid and the service confines the token to the range.
func TestKeyRangeSAS(t *testing.T) {
	eachStyle(t, func(t *testing.T, s *suite) {
		_, name := s.freshTable(t, "gosasrange")
		owner := s.sasService(t).NewClient(name)
		for _, pk := range []string{"a", "k", "z"} {
			addEntity(t, owner, map[string]any{"PartitionKey": pk, "RowKey": "r"})
		}
		perms := aztables.SASPermissions{Read: true, Add: true, StartPartitionKey: "b", EndPartitionKey: "m"}
		sasURL, err := owner.GetTableSASURL(perms, time.Now().Add(-5*time.Minute), time.Now().Add(time.Hour))
		must(t, err, "GetTableSASURL")
		_, err = sasClient(t, sasURL).NewListEntitiesPager(nil).NextPage(ctx(t))
		wantError(t, err, http.StatusForbidden, "AuthenticationFailed")

		ranged := sasClient(t, sasURL+"&spk=b&epk=m")
		es, _ := listAll(t, ranged, nil)
		if got := keysOf(es); len(got) != 1 || got[0] != "k/r" {
			t.Fatalf("a b..m token listed %v", got)
		}
		// A point read outside the range: as if the row did not exist; a write: 403.
		_, err = ranged.GetEntity(ctx(t), "z", "r", nil)
		wantError(t, err, http.StatusNotFound, aztables.ResourceNotFound)
		addEntity(t, ranged, map[string]any{"PartitionKey": "c", "RowKey": "new"})
		_, err = ranged.AddEntity(ctx(t), marshal(t, map[string]any{"PartitionKey": "n", "RowKey": "out"}), nil)
		wantError(t, err, http.StatusForbidden, "AuthorizationFailure")
	})
}
