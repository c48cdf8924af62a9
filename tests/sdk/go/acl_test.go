// Stored access policies through Client.GetAccessPolicy / SetAccessPolicy: round trip of
// start/expiry/permission, replace-all and clear, the limit of five (the SDK's own error
// after the service's 400), and a table SAS that names a policy (valid, then revoked by
// removing the policy).
package aztablesuite

import (
	"errors"
	"net/http"
	"sort"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
)

func policies(t *testing.T, c *aztables.Client) map[string]*aztables.AccessPolicy {
	t.Helper()
	resp, err := c.GetAccessPolicy(ctx(t), nil)
	must(t, err, "GetAccessPolicy")
	out := map[string]*aztables.AccessPolicy{}
	for _, si := range resp.SignedIdentifiers {
		out[*si.ID] = si.AccessPolicy
	}
	return out
}

func TestAccessPolicyRoundTrip(t *testing.T) {
	eachStyle(t, func(t *testing.T, s *suite) {
		c, _ := s.freshTable(t, "goacl")
		if got := policies(t, c); len(got) != 0 {
			t.Fatalf("a new table has policies: %v", got)
		}
		start := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
		expiry := time.Date(2031, 6, 7, 8, 9, 10, 0, time.UTC)
		_, err := c.SetAccessPolicy(ctx(t), &aztables.SetAccessPolicyOptions{TableACL: []*aztables.SignedIdentifier{
			{ID: to.Ptr("read-only"), AccessPolicy: &aztables.AccessPolicy{Start: &start, Expiry: &expiry, Permission: to.Ptr("r")}},
			{ID: to.Ptr("writer"), AccessPolicy: &aztables.AccessPolicy{Expiry: &expiry, Permission: to.Ptr("raud")}},
			{ID: to.Ptr("perm-only"), AccessPolicy: &aztables.AccessPolicy{Permission: to.Ptr("a")}},
		}})
		must(t, err, "SetAccessPolicy")
		got := policies(t, c)
		if len(got) != 3 {
			t.Fatalf("policies: %v", got)
		}
		ro := got["read-only"]
		if ro == nil || ro.Start == nil || !ro.Start.Equal(start) || !ro.Expiry.Equal(expiry) || *ro.Permission != "r" {
			t.Fatalf("read-only: %+v", ro)
		}
		w := got["writer"]
		if w == nil || w.Start != nil || !w.Expiry.Equal(expiry) || *w.Permission != "raud" {
			t.Fatalf("writer: %+v", w)
		}
		p := got["perm-only"]
		if p == nil || p.Start != nil || p.Expiry != nil || *p.Permission != "a" {
			t.Fatalf("perm-only: %+v", p)
		}
		// A set replaces the whole ACL; an empty one clears it.
		_, err = c.SetAccessPolicy(ctx(t), &aztables.SetAccessPolicyOptions{TableACL: []*aztables.SignedIdentifier{
			{ID: to.Ptr("only"), AccessPolicy: &aztables.AccessPolicy{Expiry: &expiry, Permission: to.Ptr("d")}},
		}})
		must(t, err, "SetAccessPolicy replace")
		if got := policies(t, c); len(got) != 1 || got["only"] == nil || *got["only"].Permission != "d" {
			t.Fatalf("after replace: %v", got)
		}
		_, err = c.SetAccessPolicy(ctx(t), nil)
		must(t, err, "SetAccessPolicy clear")
		if got := policies(t, c); len(got) != 0 {
			t.Fatalf("after clear: %v", got)
		}
	})
}

func TestAtMostFiveAccessPolicies(t *testing.T) {
	eachStyle(t, func(t *testing.T, s *suite) {
		_, name := s.freshTable(t, "goacl5")
		rec := &recorder{}
		c := s.service(t, rec).NewClient(name)
		expiry := time.Now().Add(time.Hour).UTC().Truncate(time.Second)
		var ids []*aztables.SignedIdentifier
		for _, id := range []string{"id0", "id1", "id2", "id3", "id4", "id5"} {
			ids = append(ids, &aztables.SignedIdentifier{ID: to.Ptr(id), AccessPolicy: &aztables.AccessPolicy{Expiry: &expiry, Permission: to.Ptr("r")}})
		}
		_, err := c.SetAccessPolicy(ctx(t), &aztables.SetAccessPolicyOptions{TableACL: ids[:5]})
		must(t, err, "five policies")
		_, err = c.SetAccessPolicy(ctx(t), &aztables.SetAccessPolicyOptions{TableACL: ids})
		if err == nil {
			t.Fatal("six policies were accepted")
		}
		// The SDK replaces the service's error with its own for more than five.
		var re *azcore.ResponseError
		if errors.As(err, &re) {
			t.Fatalf("expected the SDK's own error, got %v", err)
		}
		status, code, _ := rec.last(t)
		if status != http.StatusBadRequest || code != string(aztables.InvalidXmlDocument) {
			t.Fatalf("the service answered %d %s", status, code)
		}
		got := policies(t, c)
		var names []string
		for k := range got {
			names = append(names, k)
		}
		sort.Strings(names)
		if len(names) != 5 || names[0] != "id0" || names[4] != "id4" {
			t.Fatalf("after a refused sixth: %v", names)
		}
	})
}

func TestSASNamingAPolicy(t *testing.T) {
	eachStyle(t, func(t *testing.T, s *suite) {
		c, name := s.freshTable(t, "goaclsas")
		addEntity(t, c, map[string]any{"PartitionKey": "p", "RowKey": "r", "V": 1})
		expiry := time.Now().Add(time.Hour).UTC().Truncate(time.Second)
		_, err := c.SetAccessPolicy(ctx(t), &aztables.SetAccessPolicyOptions{TableACL: []*aztables.SignedIdentifier{
			{ID: to.Ptr("reader"), AccessPolicy: &aztables.AccessPolicy{Expiry: &expiry, Permission: to.Ptr("r")}},
		}})
		must(t, err, "SetAccessPolicy")
		token, err := aztables.SASSignatureValues{Identifier: "reader", TableName: name}.Sign(s.cred)
		must(t, err, "SASSignatureValues.Sign")
		reader := sasClient(t, s.endpoint+"/"+name+"?"+token)
		if got, _ := getEntity(t, reader, "p", "r"); got["V"] != float64(1) {
			t.Fatalf("read through the policy SAS: %v", got)
		}
		_, err = reader.AddEntity(ctx(t), marshal(t, map[string]any{"PartitionKey": "p", "RowKey": "x"}), nil)
		wantError(t, err, http.StatusForbidden, "AuthorizationPermissionMismatch")
		// Removing the policy revokes the token (a token naming no policy: AuthorizationFailure).
		_, err = c.SetAccessPolicy(ctx(t), nil)
		must(t, err, "SetAccessPolicy clear")
		_, err = reader.GetEntity(ctx(t), "p", "r", nil)
		wantError(t, err, http.StatusForbidden, "AuthorizationFailure")
	})
}

// What the Go SDK's own recordings of the service show (TestSetNullAccessPolicy,
// TestSetInvalidAccessPolicy): an identifier without a policy is stored and listed; a
// policy without an identifier is 400 InvalidXmlDocument.
func TestAccessPolicyEdgeCases(t *testing.T) {
	eachStyle(t, func(t *testing.T, s *suite) {
		c, _ := s.freshTable(t, "goacledge")
		_, err := c.SetAccessPolicy(ctx(t), &aztables.SetAccessPolicyOptions{TableACL: []*aztables.SignedIdentifier{{ID: to.Ptr("null")}}})
		must(t, err, "SetAccessPolicy of an identifier without a policy")
		resp, err := c.GetAccessPolicy(ctx(t), nil)
		must(t, err, "GetAccessPolicy")
		if len(resp.SignedIdentifiers) != 1 || *resp.SignedIdentifiers[0].ID != "null" {
			t.Fatalf("identifiers: %+v", resp.SignedIdentifiers)
		}
		if ap := resp.SignedIdentifiers[0].AccessPolicy; ap != nil && (ap.Start != nil || ap.Expiry != nil || ap.Permission != nil) {
			t.Fatalf("an identifier set without a policy came back with one: %+v", ap)
		}
		expiry := time.Date(2042, 1, 1, 1, 1, 1, 0, time.UTC)
		_, err = c.SetAccessPolicy(ctx(t), &aztables.SetAccessPolicyOptions{TableACL: []*aztables.SignedIdentifier{
			{AccessPolicy: &aztables.AccessPolicy{Expiry: &expiry}},
		}})
		wantError(t, err, http.StatusBadRequest, aztables.InvalidXmlDocument)
	})
}
