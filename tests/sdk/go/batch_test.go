// SubmitTransaction with every action type (add, update merge/replace, upsert
// merge/replace, delete, with and without ETags), and failing transactions: the error the
// Go SDK gives (an *azcore.ResponseError for the whole batch response, whose text carries
// the failed operation's index and error), nothing applied; limits and refusals.
package aztablesuite

import (
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
)

func action(t *testing.T, typ aztables.TransactionType, e map[string]any, ifMatch *azcore.ETag) aztables.TransactionAction {
	return aztables.TransactionAction{ActionType: typ, Entity: marshal(t, e), IfMatch: ifMatch}
}

func TestTransactionWithEveryActionType(t *testing.T) {
	eachStyle(t, func(t *testing.T, s *suite) {
		c, _ := s.freshTable(t, "gobatch")
		for _, rk := range []string{"um", "ur", "sm", "sr", "del", "deltag"} {
			addEntity(t, c, map[string]any{"PartitionKey": "p", "RowKey": rk, "Old": "o", "V": 0})
		}
		_, tagUR := getEntity(t, c, "p", "ur")
		_, tagDel := getEntity(t, c, "p", "deltag")
		star := azcore.ETagAny
		actions := []aztables.TransactionAction{
			action(t, aztables.TransactionTypeAdd, map[string]any{"PartitionKey": "p", "RowKey": "add", "V": 1}, nil),
			action(t, aztables.TransactionTypeUpdateMerge, map[string]any{"PartitionKey": "p", "RowKey": "um", "V": 2}, &star),
			action(t, aztables.TransactionTypeUpdateReplace, map[string]any{"PartitionKey": "p", "RowKey": "ur", "V": 3}, &tagUR),
			action(t, aztables.TransactionTypeInsertMerge, map[string]any{"PartitionKey": "p", "RowKey": "sm", "V": 4}, nil),
			action(t, aztables.TransactionTypeInsertReplace, map[string]any{"PartitionKey": "p", "RowKey": "sr", "V": 5}, nil),
			action(t, aztables.TransactionTypeInsertMerge, map[string]any{"PartitionKey": "p", "RowKey": "newm", "V": 6}, nil),
			action(t, aztables.TransactionTypeInsertReplace, map[string]any{"PartitionKey": "p", "RowKey": "newr", "V": 7}, nil),
			action(t, aztables.TransactionTypeDelete, map[string]any{"PartitionKey": "p", "RowKey": "del"}, nil),
			action(t, aztables.TransactionTypeDelete, map[string]any{"PartitionKey": "p", "RowKey": "deltag"}, &tagDel),
		}
		_, err := c.SubmitTransaction(ctx(t), actions, nil)
		must(t, err, "SubmitTransaction")
		es, _ := listAll(t, c, nil)
		got := map[string]map[string]any{}
		for _, e := range es {
			got[e["RowKey"].(string)] = e
		}
		want := map[string]struct {
			v   float64
			old bool
		}{"add": {1, false}, "um": {2, true}, "ur": {3, false}, "sm": {4, true}, "sr": {5, false}, "newm": {6, false}, "newr": {7, false}}
		if len(got) != len(want) {
			t.Fatalf("rows after the transaction: %v", rowKeys(es))
		}
		for rk, w := range want {
			e := got[rk]
			_, hasOld := e["Old"]
			if e == nil || e["V"] != w.v || hasOld != w.old {
				t.Errorf("%s: %v (want V=%v, Old kept=%v)", rk, e, w.v, w.old)
			}
		}
	})
}

// batchFailure is what a failed transaction gives through the Go SDK: an
// *azcore.ResponseError for the batch response (202 Accepted, the status of the batch as a
// whole), whose message holds the failed change set response: its status line and the
// service's OData error, whose message starts with the failed operation's index.
func batchFailure(t *testing.T, err error) (index int, status int, code string) {
	t.Helper()
	if err == nil {
		t.Fatal("the transaction succeeded; expected it to fail")
	}
	var re *azcore.ResponseError
	if !errors.As(err, &re) {
		t.Fatalf("%T: %v", err, err)
	}
	if re.StatusCode != http.StatusAccepted {
		t.Fatalf("batch response status %d, want 202: %v", re.StatusCode, err)
	}
	// The batch response has no x-ms-error-code and a multipart body: the SDK finds no code.
	if re.ErrorCode != "" {
		t.Fatalf("ErrorCode %q on the 202 batch response", re.ErrorCode)
	}
	text := err.Error()
	m := regexp.MustCompile(`HTTP/1\.1 (\d{3}) `).FindStringSubmatch(text)
	if m == nil {
		t.Fatalf("no inner status line in %q", text)
	}
	fmt.Sscan(m[1], &status)
	c := regexp.MustCompile(`"code"\s*:\s*"([A-Za-z]+)"`).FindStringSubmatch(text)
	if c == nil {
		t.Fatalf("no OData error code in %q", text)
	}
	i := regexp.MustCompile(`"value"\s*:\s*"(\d+):`).FindStringSubmatch(text)
	if i == nil {
		t.Fatalf("no index prefix in the error message of %q", text)
	}
	fmt.Sscan(i[1], &index)
	return index, status, c[1]
}

func TestFailingTransactionRollsBack(t *testing.T) {
	eachStyle(t, func(t *testing.T, s *suite) {
		c, _ := s.freshTable(t, "gobatchfail")
		addEntity(t, c, map[string]any{"PartitionKey": "p", "RowKey": "exists", "V": "orig"})
		_, stale := getEntity(t, c, "p", "exists")
		_, err := c.UpdateEntity(ctx(t), marshal(t, map[string]any{"PartitionKey": "p", "RowKey": "exists", "V": "orig"}), nil)
		must(t, err, "UpdateEntity")
		_, current := getEntity(t, c, "p", "exists")
		cases := []struct {
			name   string
			third  aztables.TransactionAction
			status int
			code   aztables.TableErrorCode
		}{
			{"conflict", action(t, aztables.TransactionTypeAdd, map[string]any{"PartitionKey": "p", "RowKey": "exists"}, nil), 409, aztables.EntityAlreadyExists},
			{"stale", action(t, aztables.TransactionTypeUpdateReplace, map[string]any{"PartitionKey": "p", "RowKey": "exists", "V": "x"}, &stale), 412, aztables.UpdateConditionNotSatisfied},
			{"missing", action(t, aztables.TransactionTypeDelete, map[string]any{"PartitionKey": "p", "RowKey": "missing"}, nil), 404, aztables.ResourceNotFound},
		}
		for _, tc := range cases {
			actions := []aztables.TransactionAction{
				action(t, aztables.TransactionTypeAdd, map[string]any{"PartitionKey": "p", "RowKey": "new1"}, nil),
				action(t, aztables.TransactionTypeInsertMerge, map[string]any{"PartitionKey": "p", "RowKey": "new2"}, nil),
				tc.third,
				action(t, aztables.TransactionTypeAdd, map[string]any{"PartitionKey": "p", "RowKey": "new3"}, nil),
			}
			_, err := c.SubmitTransaction(ctx(t), actions, nil)
			index, status, code := batchFailure(t, err)
			if index != 2 || status != tc.status || code != string(tc.code) {
				t.Errorf("%s: index %d status %d code %s, want 2 %d %s", tc.name, index, status, code, tc.status, tc.code)
			}
			// The SDK sends its adds with Prefer: return-no-content; the service's part for a
			// failed add still says Preference-Applied (the SDK's TestBatchError recording).
			applied := strings.Contains(err.Error(), "Preference-Applied: return-no-content")
			if applied != (tc.third.ActionType == aztables.TransactionTypeAdd) {
				t.Errorf("%s: Preference-Applied in the failed part: %v", tc.name, applied)
			}
			// Nothing applied.
			es, _ := listAll(t, c, nil)
			if got := strings.Join(rowKeys(es), ","); got != "exists" {
				t.Fatalf("%s: rows after a failed transaction: %s", tc.name, got)
			}
			if e, tag := getEntity(t, c, "p", "exists"); e["V"] != "orig" || tag != current {
				t.Fatalf("%s: the existing row changed: %v %s", tc.name, e, tag)
			}
		}
	})
}

func TestTransactionRefusals(t *testing.T) {
	eachStyle(t, func(t *testing.T, s *suite) {
		c, name := s.freshTable(t, "gobatchbad")
		// The same row twice: 400 InvalidDuplicateRow for the whole batch.
		_, err := c.SubmitTransaction(ctx(t), []aztables.TransactionAction{
			action(t, aztables.TransactionTypeAdd, map[string]any{"PartitionKey": "p", "RowKey": "r"}, nil),
			action(t, aztables.TransactionTypeInsertMerge, map[string]any{"PartitionKey": "p", "RowKey": "r"}, nil),
		}, nil)
		assertBatchError(t, err, 400, aztables.InvalidDuplicateRow)
		// The service's message (the SDK's TestBatchErrorHandleResponse recording).
		if !strings.Contains(err.Error(), `"1:The batch request contains multiple changes with same row key. An entity can appear only once in a batch request.`) {
			t.Errorf("InvalidDuplicateRow message: %v", err)
		}
		// Two partitions in one change set (the Go SDK does not check it client-side).
		_, err = c.SubmitTransaction(ctx(t), []aztables.TransactionAction{
			action(t, aztables.TransactionTypeAdd, map[string]any{"PartitionKey": "p1", "RowKey": "r"}, nil),
			action(t, aztables.TransactionTypeAdd, map[string]any{"PartitionKey": "p2", "RowKey": "r"}, nil),
		}, nil)
		assertBatchError(t, err, 400, "CommandsInBatchActOnDifferentPartitions")
		// 100 operations succeed; 101 are refused.
		var actions []aztables.TransactionAction
		for i := 0; i < 101; i++ {
			actions = append(actions, action(t, aztables.TransactionTypeAdd, map[string]any{"PartitionKey": "big", "RowKey": fmt.Sprintf("%03d", i)}, nil))
		}
		_, err = c.SubmitTransaction(ctx(t), actions, nil)
		assertBatchError(t, err, 400, aztables.InvalidInput)
		_, err = c.SubmitTransaction(ctx(t), actions[:100], nil)
		must(t, err, "100 operations")
		es, _ := listAll(t, c, nil)
		if len(es) != 100 {
			t.Fatalf("%d rows after 100 adds", len(es))
		}
		// An empty transaction is refused by the SDK before sending.
		if _, err = c.SubmitTransaction(ctx(t), nil, nil); err == nil {
			t.Fatal("an empty transaction succeeded")
		}
		// A transaction on a missing table.
		missing := s.service(t).NewClient(name + "x")
		_, err = missing.SubmitTransaction(ctx(t), []aztables.TransactionAction{
			action(t, aztables.TransactionTypeAdd, map[string]any{"PartitionKey": "p", "RowKey": "r"}, nil),
		}, nil)
		assertBatchError(t, err, 404, aztables.TableNotFound)
	})
}

// assertBatchError: a refusal of the whole batch or of its change set. The service answers
// some as the batch's own status (the SDK's ResponseError has it and its code) and some as
// a 202 whose change set response carries them (index 0 for the change set as a whole).
func assertBatchError(t *testing.T, err error, status int, code aztables.TableErrorCode) {
	t.Helper()
	var re *azcore.ResponseError
	if err == nil || !errors.As(err, &re) {
		t.Fatalf("expected %d %s, got %v", status, code, err)
	}
	if re.StatusCode == http.StatusAccepted {
		_, st, c := batchFailure(t, err)
		if st != status || c != string(code) {
			t.Fatalf("change set answered %d %s, want %d %s", st, c, status, code)
		}
		return
	}
	wantError(t, err, status, code)
}

// Keys with characters that URLs escape, through point operations and inside a batch,
// whose sub-requests carry them in absolute URLs (the Go SDK writes the full URL).
func TestURLSignificantKeysInPointOperationsAndBatches(t *testing.T) {
	eachStyle(t, func(t *testing.T, s *suite) {
		c, _ := s.freshTable(t, "gourlkeys")
		keys := []string{"a b", "ü✓", "c+d", "100%", "x&y=z", "semi;colon", "comma,", "at@", "dollar$", "paren()",
			"star*", "excl!", "tilde~", "brk[]", "caret^", "pipe|", "quote\"", "lt<gt>", "brace{}", "back`"}
		var merges, deletes []aztables.TransactionAction
		for _, k := range keys {
			addEntity(t, c, map[string]any{"PartitionKey": "p", "RowKey": k, "V": 1})
			got, _ := getEntity(t, c, "p", k)
			if got["RowKey"] != k {
				t.Fatalf("GetEntity(%q) returned RowKey %v", k, got["RowKey"])
			}
			_, err := c.UpdateEntity(ctx(t), marshal(t, map[string]any{"PartitionKey": "p", "RowKey": k, "V": 2}), nil)
			must(t, err, "UpdateEntity "+k)
			merges = append(merges, action(t, aztables.TransactionTypeUpdateMerge, map[string]any{"PartitionKey": "p", "RowKey": k, "W": 3}, nil))
			deletes = append(deletes, action(t, aztables.TransactionTypeDelete, map[string]any{"PartitionKey": "p", "RowKey": k}, nil))
		}
		_, err := c.SubmitTransaction(ctx(t), merges, nil)
		must(t, err, "batch of merges")
		es, _ := listAll(t, c, nil)
		if len(es) != len(keys) {
			t.Fatalf("%d rows for %d keys: %v", len(es), len(keys), rowKeys(es))
		}
		for _, e := range es {
			if e["V"] != float64(2) || e["W"] != float64(3) {
				t.Fatalf("after the batch merge: %v", e)
			}
		}
		_, err = c.SubmitTransaction(ctx(t), deletes, nil)
		must(t, err, "batch of deletes")
		if es, _ := listAll(t, c, nil); len(es) != 0 {
			t.Fatalf("left after the batch delete: %v", rowKeys(es))
		}
	})
}

// A batch body over 4 MiB is refused as a whole: 413 RequestBodyTooLarge, nothing written.
func TestTransactionOverFourMiB(t *testing.T) {
	eachStyle(t, func(t *testing.T, s *suite) {
		c, _ := s.freshTable(t, "gobatchbig")
		var actions []aztables.TransactionAction
		for i := 0; i < 100; i++ {
			actions = append(actions, action(t, aztables.TransactionTypeAdd, map[string]any{
				"PartitionKey": "p", "RowKey": fmt.Sprintf("%03d", i), "S": strings.Repeat("x", 30000), "T": strings.Repeat("y", 15000)}, nil))
		}
		_, err := c.SubmitTransaction(ctx(t), actions, nil)
		wantError(t, err, http.StatusRequestEntityTooLarge, "RequestBodyTooLarge")
		if es, _ := listAll(t, c, nil); len(es) != 0 {
			t.Fatalf("%d rows written by a refused batch", len(es))
		}
	})
}
