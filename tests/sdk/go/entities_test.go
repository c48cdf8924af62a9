// Entities in every mode: AddEntity (ETag, conflict), GetEntity, UpsertEntity merge and
// replace (insert and update), UpdateEntity merge and replace with a current ETag, a stale
// ETag and `*`, DeleteEntity with and without an ETag, missing entities, and keys that
// need quoting.
package aztablesuite

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
)

func TestAddAndGetEntity(t *testing.T) {
	eachStyle(t, func(t *testing.T, s *suite) {
		c, _ := s.freshTable(t, "goadd")
		etag := addEntity(t, c, map[string]any{"PartitionKey": "p", "RowKey": "r", "Name": "first", "N": 7})
		got, getTag := getEntity(t, c, "p", "r")
		if getTag != etag {
			t.Fatalf("GetEntity ETag %q, AddEntity ETag %q", getTag, etag)
		}
		if got["Name"] != "first" || got["N"] != float64(7) {
			t.Fatalf("entity: %v", got)
		}
		if got["odata.etag"] != string(etag) {
			t.Fatalf("odata.etag %v, want %q", got["odata.etag"], etag)
		}
		if ts, _ := got["Timestamp"].(string); ts == "" {
			t.Fatalf("no Timestamp: %v", got)
		}
		_, err := c.AddEntity(ctx(t), marshal(t, map[string]any{"PartitionKey": "p", "RowKey": "r"}), nil)
		wantError(t, err, http.StatusConflict, aztables.EntityAlreadyExists)
		_, err = c.GetEntity(ctx(t), "p", "missing", nil)
		wantError(t, err, http.StatusNotFound, aztables.ResourceNotFound)
	})
}

func TestKeysThatNeedQuoting(t *testing.T) {
	eachStyle(t, func(t *testing.T, s *suite) {
		c, _ := s.freshTable(t, "gokeys")
		// The SDK doubles single quotes in the URL's key literals; the others are percent-encoded.
		for _, k := range [][2]string{{"it's", "o'clock"}, {"a b", "c&d=e"}, {"ü ✓", "😀"}} {
			addEntity(t, c, map[string]any{"PartitionKey": k[0], "RowKey": k[1], "V": k[0] + "|" + k[1]})
			got, etag := getEntity(t, c, k[0], k[1])
			if got["V"] != k[0]+"|"+k[1] || got["PartitionKey"] != k[0] || got["RowKey"] != k[1] {
				t.Fatalf("keys %q: %v", k, got)
			}
			_, err := c.UpdateEntity(ctx(t), marshal(t, map[string]any{"PartitionKey": k[0], "RowKey": k[1], "W": 1}),
				&aztables.UpdateEntityOptions{UpdateMode: aztables.UpdateModeMerge, IfMatch: &etag})
			must(t, err, "UpdateEntity merge")
			_, err = c.DeleteEntity(ctx(t), k[0], k[1], nil)
			must(t, err, "DeleteEntity")
		}
		es, _ := listAll(t, c, nil)
		if len(es) != 0 {
			t.Fatalf("left: %v", es)
		}
		// Empty keys are valid keys; the SDK's point operations refuse them client-side
		// ("parameter partitionKey cannot be empty"), so they are read back by a query.
		addEntity(t, c, map[string]any{"PartitionKey": "", "RowKey": "", "V": "empty"})
		es, _ = listAll(t, c, &aztables.ListEntitiesOptions{Filter: to.Ptr("PartitionKey eq '' and RowKey eq ''")})
		if len(es) != 1 || es[0]["V"] != "empty" {
			t.Fatalf("empty keys: %v", es)
		}
	})
}

func TestUpsertEntityModes(t *testing.T) {
	eachStyle(t, func(t *testing.T, s *suite) {
		c, _ := s.freshTable(t, "goupsert")
		for _, mode := range []aztables.UpdateMode{aztables.UpdateModeMerge, aztables.UpdateModeReplace} {
			rk := string(mode)
			// Insert: the row does not exist yet.
			resp, err := c.UpsertEntity(ctx(t), marshal(t, map[string]any{"PartitionKey": "p", "RowKey": rk, "A": "a1", "B": "b1"}),
				&aztables.UpsertEntityOptions{UpdateMode: mode})
			must(t, err, "UpsertEntity insert "+rk)
			got, etag := getEntity(t, c, "p", rk)
			if resp.ETag == "" || resp.ETag != etag || got["A"] != "a1" || got["B"] != "b1" {
				t.Fatalf("%s insert: ETag %q/%q, %v", rk, resp.ETag, etag, got)
			}
			// Update: merge keeps B, replace drops it.
			resp, err = c.UpsertEntity(ctx(t), marshal(t, map[string]any{"PartitionKey": "p", "RowKey": rk, "A": "a2"}),
				&aztables.UpsertEntityOptions{UpdateMode: mode})
			must(t, err, "UpsertEntity update "+rk)
			got, etag2 := getEntity(t, c, "p", rk)
			if resp.ETag != etag2 || etag2 == etag {
				t.Fatalf("%s update: ETag %q, entity ETag %q, before %q", rk, resp.ETag, etag2, etag)
			}
			_, hasB := got["B"]
			if got["A"] != "a2" || hasB != (mode == aztables.UpdateModeMerge) {
				t.Fatalf("%s update: %v", rk, got)
			}
		}
	})
}

func TestUpdateEntityModesWithETags(t *testing.T) {
	eachStyle(t, func(t *testing.T, s *suite) {
		c, _ := s.freshTable(t, "goupdate")
		for _, mode := range []aztables.UpdateMode{aztables.UpdateModeMerge, aztables.UpdateModeReplace} {
			rk := string(mode)
			etag := addEntity(t, c, map[string]any{"PartitionKey": "p", "RowKey": rk, "A": "a1", "B": "b1"})
			// The current ETag matches.
			resp, err := c.UpdateEntity(ctx(t), marshal(t, map[string]any{"PartitionKey": "p", "RowKey": rk, "A": "a2"}),
				&aztables.UpdateEntityOptions{UpdateMode: mode, IfMatch: &etag})
			must(t, err, "UpdateEntity with the current ETag")
			got, etag2 := getEntity(t, c, "p", rk)
			_, hasB := got["B"]
			if resp.ETag != etag2 || etag2 == etag || got["A"] != "a2" || hasB != (mode == aztables.UpdateModeMerge) {
				t.Fatalf("%s: ETag %q/%q (before %q), %v", rk, resp.ETag, etag2, etag, got)
			}
			// The old ETag is stale now: 412, nothing written.
			_, err = c.UpdateEntity(ctx(t), marshal(t, map[string]any{"PartitionKey": "p", "RowKey": rk, "A": "stale"}),
				&aztables.UpdateEntityOptions{UpdateMode: mode, IfMatch: &etag})
			wantError(t, err, http.StatusPreconditionFailed, aztables.UpdateConditionNotSatisfied)
			if got, _ := getEntity(t, c, "p", rk); got["A"] != "a2" {
				t.Fatalf("%s: a stale update was written: %v", rk, got)
			}
			// `*` matches any version.
			star := azcore.ETagAny
			_, err = c.UpdateEntity(ctx(t), marshal(t, map[string]any{"PartitionKey": "p", "RowKey": rk, "A": "a3"}),
				&aztables.UpdateEntityOptions{UpdateMode: mode, IfMatch: &star})
			must(t, err, "UpdateEntity with *")
			if got, _ := getEntity(t, c, "p", rk); got["A"] != "a3" {
				t.Fatalf("%s: %v", rk, got)
			}
			// No IfMatch: the SDK sends `*` itself.
			_, err = c.UpdateEntity(ctx(t), marshal(t, map[string]any{"PartitionKey": "p", "RowKey": rk, "A": "a4"}),
				&aztables.UpdateEntityOptions{UpdateMode: mode})
			must(t, err, "UpdateEntity without IfMatch")
			// An update never creates: a missing row is 404 ResourceNotFound.
			_, err = c.UpdateEntity(ctx(t), marshal(t, map[string]any{"PartitionKey": "p", "RowKey": "nope" + rk}),
				&aztables.UpdateEntityOptions{UpdateMode: mode, IfMatch: &star})
			wantError(t, err, http.StatusNotFound, aztables.ResourceNotFound)
		}
	})
}

func TestDeleteEntityWithETag(t *testing.T) {
	eachStyle(t, func(t *testing.T, s *suite) {
		c, _ := s.freshTable(t, "godelete")
		etag := addEntity(t, c, map[string]any{"PartitionKey": "p", "RowKey": "r", "V": 1})
		_, err := c.UpdateEntity(ctx(t), marshal(t, map[string]any{"PartitionKey": "p", "RowKey": "r", "V": 2}), nil)
		must(t, err, "UpdateEntity")
		_, err = c.DeleteEntity(ctx(t), "p", "r", &aztables.DeleteEntityOptions{IfMatch: &etag})
		wantError(t, err, http.StatusPreconditionFailed, aztables.UpdateConditionNotSatisfied)
		_, current := getEntity(t, c, "p", "r")
		_, err = c.DeleteEntity(ctx(t), "p", "r", &aztables.DeleteEntityOptions{IfMatch: &current})
		must(t, err, "DeleteEntity with the current ETag")
		_, err = c.GetEntity(ctx(t), "p", "r", nil)
		wantError(t, err, http.StatusNotFound, aztables.ResourceNotFound)
		// Unconditional (the SDK sends `*`), and on a missing row: 404 ResourceNotFound.
		addEntity(t, c, map[string]any{"PartitionKey": "p", "RowKey": "r2"})
		_, err = c.DeleteEntity(ctx(t), "p", "r2", nil)
		must(t, err, "DeleteEntity unconditional")
		_, err = c.DeleteEntity(ctx(t), "p", "r2", nil)
		wantError(t, err, http.StatusNotFound, aztables.ResourceNotFound)
	})
}

func TestETagAndTimestampChangeOnEveryWrite(t *testing.T) {
	eachStyle(t, func(t *testing.T, s *suite) {
		c, _ := s.freshTable(t, "goetag")
		seen := map[azcore.ETag]bool{}
		seen[addEntity(t, c, map[string]any{"PartitionKey": "p", "RowKey": "r", "V": 0})] = true
		for i := 1; i <= 4; i++ {
			mode := aztables.UpdateModeMerge
			if i%2 == 0 {
				mode = aztables.UpdateModeReplace
			}
			resp, err := c.UpdateEntity(ctx(t), marshal(t, map[string]any{"PartitionKey": "p", "RowKey": "r", "V": i}),
				&aztables.UpdateEntityOptions{UpdateMode: mode})
			must(t, err, "UpdateEntity")
			if seen[resp.ETag] {
				t.Fatalf("write %d reused ETag %q", i, resp.ETag)
			}
			seen[resp.ETag] = true
		}
		// A Timestamp sent by the client is ignored: the service sets it.
		_, err := c.UpsertEntity(ctx(t), marshal(t, map[string]any{"PartitionKey": "p", "RowKey": "ts", "Timestamp": "2000-01-01T00:00:00Z"}), nil)
		must(t, err, "UpsertEntity")
		got, _ := getEntity(t, c, "p", "ts")
		if got["Timestamp"] == "2000-01-01T00:00:00Z" {
			t.Fatalf("client Timestamp stored: %v", got)
		}
	})
}

// From the Go SDK's own recorded tests (TestEntityQuotes, TestEntityUnicode): quotes and
// spaces in values, and a non-ASCII property name, round-trip through EDMEntity.
func TestEDMEntityQuotesSpacesAndUnicodeNames(t *testing.T) {
	eachStyle(t, func(t *testing.T, s *suite) {
		c, _ := s.freshTable(t, "goquotes")
		props := map[string]any{
			"SingleQuote": "''", "DoubleQuote": "\"\"", "JustSpaces": "    ", "LeadingSpaces": "   abc",
			"TrailingSpaces": "abc     ", "LeadingTrailingSpaces": "    abc    ", "Unicode": "ꀕ", "ꀕ": "Unicode",
		}
		e := aztables.EDMEntity{Entity: aztables.Entity{PartitionKey: "p", RowKey: "1"}, Properties: props}
		_, err := c.AddEntity(ctx(t), marshal(t, e), nil)
		must(t, err, "AddEntity")
		resp, err := c.GetEntity(ctx(t), "p", "1", nil)
		must(t, err, "GetEntity")
		var got aztables.EDMEntity
		must(t, json.Unmarshal(resp.Value, &got), "unmarshal")
		for k, v := range props {
			if got.Properties[k] != v {
				t.Errorf("%s = %#v, want %#v", k, got.Properties[k], v)
			}
		}
		if time.Since(time.Time(got.Timestamp)) > time.Hour || got.ETag == "" {
			t.Errorf("Timestamp %v, ETag %q", time.Time(got.Timestamp), got.ETag)
		}
	})
}

// EDMEntity.MarshalJSON doubles single quotes in PartitionKey/RowKey (the escaping of a
// URL key literal) inside the body too, so the service stores the doubled key: a key
// "it's" sent through EDMEntity is the key "it”s". A plain map body keeps it as it is.
func TestEDMEntityDoublesQuotesInKeys(t *testing.T) {
	eachStyle(t, func(t *testing.T, s *suite) {
		c, _ := s.freshTable(t, "gokeyquote")
		e := aztables.EDMEntity{Entity: aztables.Entity{PartitionKey: "it's", RowKey: "r"}, Properties: map[string]any{"V": "edm"}}
		_, err := c.AddEntity(ctx(t), marshal(t, e), nil)
		must(t, err, "AddEntity")
		_, err = c.GetEntity(ctx(t), "it's", "r", nil)
		wantError(t, err, http.StatusNotFound, aztables.ResourceNotFound)
		got, _ := getEntity(t, c, "it''s", "r")
		if got["PartitionKey"] != "it''s" || got["V"] != "edm" {
			t.Fatalf("%v", got)
		}
	})
}
