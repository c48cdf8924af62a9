// Queries through ListEntitiesOptions (Filter, Select, Top) and the ListEntities pager:
// results in PartitionKey/RowKey order across pages and partitions, continuation by
// NextPartitionKey/NextRowKey (followed by the pager, and resumed by hand).
package aztablesuite

import (
	"fmt"
	"net/http"
	"sort"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
)

// seedGrid adds partitions p0..p(np-1) with rows r00..r(nr-1) in transactions.
func seedGrid(t *testing.T, c *aztables.Client, np, nr int) []string {
	t.Helper()
	var keys []string
	for p := 0; p < np; p++ {
		var actions []aztables.TransactionAction
		for r := 0; r < nr; r++ {
			pk, rk := fmt.Sprintf("p%d", p), fmt.Sprintf("r%02d", r)
			actions = append(actions, aztables.TransactionAction{ActionType: aztables.TransactionTypeAdd,
				Entity: marshal(t, map[string]any{"PartitionKey": pk, "RowKey": rk, "N": p*100 + r, "Even": r%2 == 0, "Tag": "t" + rk})})
			keys = append(keys, pk+"/"+rk)
		}
		_, err := c.SubmitTransaction(ctx(t), actions, nil)
		must(t, err, "SubmitTransaction seed")
	}
	return keys
}

func keysOf(es []map[string]any) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = fmt.Sprint(e["PartitionKey"], "/", e["RowKey"])
	}
	return out
}

func TestQueryFilterSelectTop(t *testing.T) {
	eachStyle(t, func(t *testing.T, s *suite) {
		c, _ := s.freshTable(t, "goquery")
		seedGrid(t, c, 2, 6)
		es, _ := listAll(t, c, &aztables.ListEntitiesOptions{Filter: to.Ptr("PartitionKey eq 'p1' and Even eq true and N ge 102")})
		if got := strings.Join(keysOf(es), ","); got != "p1/r02,p1/r04" {
			t.Fatalf("filter: %s", got)
		}
		// Select: only the named properties come back.
		es, _ = listAll(t, c, &aztables.ListEntitiesOptions{Filter: to.Ptr("RowKey eq 'r03'"), Select: to.Ptr("N,Tag")})
		if len(es) != 2 {
			t.Fatalf("select: %d entities", len(es))
		}
		for _, e := range es {
			if _, ok := e["Even"]; ok {
				t.Fatalf("select N,Tag returned Even: %v", e)
			}
			if e["Tag"] != "tr03" || e["N"] == nil {
				t.Fatalf("select N,Tag: %v", e)
			}
		}
		// A selected property an entity lacks comes back as null.
		es, _ = listAll(t, c, &aztables.ListEntitiesOptions{Filter: to.Ptr("RowKey eq 'r00'"), Select: to.Ptr("Missing,N")})
		for _, e := range es {
			if v, ok := e["Missing"]; !ok || v != nil {
				t.Fatalf("select of a missing property: %v", e)
			}
		}
		// Top: the first page has that many, the rest follow.
		pager := c.NewListEntitiesPager(&aztables.ListEntitiesOptions{Top: to.Ptr[int32](5)})
		first, err := pager.NextPage(ctx(t))
		must(t, err, "first page")
		if len(first.Entities) != 5 || first.NextPartitionKey == nil || first.NextRowKey == nil {
			t.Fatalf("top 5: %d entities, next %v/%v", len(first.Entities), first.NextPartitionKey, first.NextRowKey)
		}
		// An invalid filter is the service's 400 InvalidInput.
		_, err = c.NewListEntitiesPager(&aztables.ListEntitiesOptions{Filter: to.Ptr("N eq")}).NextPage(ctx(t))
		wantError(t, err, http.StatusBadRequest, aztables.InvalidInput)
	})
}

func TestListEntitiesPagerAcrossPagesAndPartitions(t *testing.T) {
	eachStyle(t, func(t *testing.T, s *suite) {
		c, _ := s.freshTable(t, "gopager")
		want := seedGrid(t, c, 3, 7)
		sort.Strings(want)
		// 21 rows, 4 a page: six pages, the pager following the continuation keys across
		// partition boundaries.
		es, pages := listAll(t, c, &aztables.ListEntitiesOptions{Top: to.Ptr[int32](4)})
		if strings.Join(keysOf(es), ",") != strings.Join(want, ",") || pages != 6 {
			t.Fatalf("%d pages: %v", pages, keysOf(es))
		}
		// With a filter spanning partitions.
		es, pages = listAll(t, c, &aztables.ListEntitiesOptions{Filter: to.Ptr("Even eq true"), Top: to.Ptr[int32](3)})
		if len(es) != 12 || pages != 4 {
			t.Fatalf("filtered: %d entities in %d pages", len(es), pages)
		}
		for i, e := range es {
			if e["Even"] != true || (i > 0 && keysOf(es[i-1 : i])[0] >= keysOf(es[i : i+1])[0]) {
				t.Fatalf("filtered page order at %d: %v", i, keysOf(es))
			}
		}
		// Resume by hand from a page's NextPartitionKey/NextRowKey.
		pager := c.NewListEntitiesPager(&aztables.ListEntitiesOptions{Top: to.Ptr[int32](8)})
		first, err := pager.NextPage(ctx(t))
		must(t, err, "first page")
		if first.NextPartitionKey == nil || first.NextRowKey == nil || *first.NextPartitionKey == "" {
			t.Fatalf("no continuation after 8 of 21")
		}
		rest, _ := listAll(t, c, &aztables.ListEntitiesOptions{NextPartitionKey: first.NextPartitionKey, NextRowKey: first.NextRowKey})
		if strings.Join(keysOf(rest), ",") != strings.Join(want[8:], ",") {
			t.Fatalf("resumed: %v, want %v", keysOf(rest), want[8:])
		}
		// The last page of an exact multiple ends the listing (no empty extra page needed).
		es, _ = listAll(t, c, &aztables.ListEntitiesOptions{Top: to.Ptr[int32](7)})
		if len(es) != 21 {
			t.Fatalf("top 7: %d entities", len(es))
		}
	})
}

// Over 1000 rows the service pages by itself (1000 a page) even without Top.
func TestListEntitiesServerPageLimit(t *testing.T) {
	eachStyle(t, func(t *testing.T, s *suite) {
		c, _ := s.freshTable(t, "gobig")
		for b := 0; b < 11; b++ {
			var actions []aztables.TransactionAction
			for r := 0; r < 100; r++ {
				actions = append(actions, aztables.TransactionAction{ActionType: aztables.TransactionTypeAdd,
					Entity: marshal(t, map[string]any{"PartitionKey": "big", "RowKey": fmt.Sprintf("%05d", b*100+r)})})
			}
			_, err := c.SubmitTransaction(ctx(t), actions, nil)
			must(t, err, "SubmitTransaction")
		}
		pager := c.NewListEntitiesPager(nil)
		var sizes []int
		for pager.More() {
			page, err := pager.NextPage(ctx(t))
			must(t, err, "page")
			sizes = append(sizes, len(page.Entities))
		}
		if len(sizes) != 2 || sizes[0] != 1000 || sizes[1] != 100 {
			t.Fatalf("page sizes %v, want [1000 100]", sizes)
		}
	})
}
