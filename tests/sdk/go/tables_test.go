// Tables through ServiceClient and Client: create (201/TableAlreadyExists, the
// create-if-not-exists idiom of the 409 code), delete (TableNotFound surfaced), list with a
// filter and through the ListTables pager with NextTableName continuation, invalid names,
// and entity operations on a missing table.
package aztablesuite

import (
	"errors"
	"net/http"
	"sort"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
)

func listTableNames(t *testing.T, svc *aztables.ServiceClient, opts *aztables.ListTablesOptions) ([]string, int) {
	t.Helper()
	pager := svc.NewListTablesPager(opts)
	var names []string
	pages := 0
	for pager.More() {
		page, err := pager.NextPage(ctx(t))
		must(t, err, "ListTables page")
		pages++
		for _, tp := range page.Tables {
			if tp.Name == nil {
				t.Fatal("a listed table has no name")
			}
			names = append(names, *tp.Name)
		}
	}
	return names, pages
}

func TestCreateTableAndDuplicate(t *testing.T) {
	eachStyle(t, func(t *testing.T, s *suite) {
		svc := s.service(t)
		name := uniqueTableName("GoMixedCase")
		resp, err := svc.CreateTable(ctx(t), name, nil)
		must(t, err, "CreateTable")
		t.Cleanup(func() { _, _ = svc.DeleteTable(ctx(t), name, nil) })
		if resp.TableName == nil || *resp.TableName != name {
			t.Fatalf("CreateTable answered TableName %v, want %q (case kept)", resp.TableName, name)
		}
		_, err = svc.CreateTable(ctx(t), name, nil)
		wantError(t, err, http.StatusConflict, aztables.TableAlreadyExists)
		// Names are case-insensitive: another casing is the same table.
		_, err = svc.CreateTable(ctx(t), strings.ToLower(name), nil)
		wantError(t, err, http.StatusConflict, aztables.TableAlreadyExists)
	})
}

// createIfNotExists is the Go SDK's documented idiom: CreateTable, and a 409
// TableAlreadyExists means the table is there.
func createIfNotExists(t *testing.T, svc *aztables.ServiceClient, name string) (created bool) {
	t.Helper()
	_, err := svc.CreateTable(ctx(t), name, nil)
	if err == nil {
		return true
	}
	var re *azcore.ResponseError
	if errors.As(err, &re) && re.ErrorCode == string(aztables.TableAlreadyExists) {
		return false
	}
	t.Fatalf("CreateTable(%s): %v", name, err)
	return false
}

func TestCreateTableIfNotExists(t *testing.T) {
	eachStyle(t, func(t *testing.T, s *suite) {
		svc := s.service(t)
		name := uniqueTableName("goine")
		if !createIfNotExists(t, svc, name) {
			t.Fatal("a new table was reported as existing")
		}
		t.Cleanup(func() { _, _ = svc.DeleteTable(ctx(t), name, nil) })
		client := svc.NewClient(name)
		addEntity(t, client, map[string]any{"PartitionKey": "p", "RowKey": "r"})
		if createIfNotExists(t, svc, name) {
			t.Fatal("an existing table was created again")
		}
		// The table and its data are untouched.
		es, _ := listAll(t, client, nil)
		if got := rowKeys(es); len(got) != 1 || got[0] != "r" {
			t.Fatalf("rows after the second create: %v", got)
		}
		// Client.CreateTable on the existing table: the same 409.
		_, err := client.CreateTable(ctx(t), nil)
		wantError(t, err, http.StatusConflict, aztables.TableAlreadyExists)
	})
}

func TestClientCreateTableAndDelete(t *testing.T) {
	eachStyle(t, func(t *testing.T, s *suite) {
		svc := s.service(t)
		name := uniqueTableName("goclient")
		client := svc.NewClient(name)
		resp, err := client.CreateTable(ctx(t), nil)
		must(t, err, "Client.CreateTable")
		if resp.TableName == nil || *resp.TableName != name {
			t.Fatalf("TableName %v, want %q", resp.TableName, name)
		}
		addEntity(t, client, map[string]any{"PartitionKey": "p", "RowKey": "r"})
		_, err = client.Delete(ctx(t), nil)
		must(t, err, "Client.Delete")
		names, _ := listTableNames(t, svc, &aztables.ListTablesOptions{Filter: to.Ptr("TableName eq '" + name + "'")})
		if len(names) != 0 {
			t.Fatalf("deleted table still listed: %v", names)
		}
		// Its entities went with it: the table is not found any more.
		_, err = client.GetEntity(ctx(t), "p", "r", nil)
		wantError(t, err, http.StatusNotFound, aztables.TableNotFound)
		// Re-created, it is empty.
		_, err = client.CreateTable(ctx(t), nil)
		must(t, err, "re-create")
		t.Cleanup(func() { _, _ = svc.DeleteTable(ctx(t), name, nil) })
		es, _ := listAll(t, client, nil)
		if len(es) != 0 {
			t.Fatalf("a re-created table has %d entities", len(es))
		}
	})
}

func TestDeleteMissingTable(t *testing.T) {
	eachStyle(t, func(t *testing.T, s *suite) {
		// The Go SDK surfaces the 404 (it does not swallow it like azure-data-tables).
		_, err := s.service(t).DeleteTable(ctx(t), uniqueTableName("gomissing"), nil)
		wantError(t, err, http.StatusNotFound, aztables.ResourceNotFound)
	})
}

func TestListTablesFilterAndPager(t *testing.T) {
	eachStyle(t, func(t *testing.T, s *suite) {
		svc := s.service(t)
		prefix := uniqueTableName("golist")
		var want []string
		for i := 0; i < 5; i++ {
			name := prefix + string(rune('a'+i))
			_, err := svc.CreateTable(ctx(t), name, nil)
			must(t, err, "CreateTable")
			t.Cleanup(func() { _, _ = svc.DeleteTable(ctx(t), name, nil) })
			want = append(want, name)
		}
		filter := "TableName ge '" + prefix + "' and TableName lt '" + prefix + "{'"
		names, pages := listTableNames(t, svc, &aztables.ListTablesOptions{Filter: &filter})
		if strings.Join(names, ",") != strings.Join(want, ",") || pages != 1 {
			t.Fatalf("filter: %v in %d pages, want %v in 1", names, pages, want)
		}
		// Two a page: the pager follows NextTableName across three pages, in order.
		names, pages = listTableNames(t, svc, &aztables.ListTablesOptions{Filter: &filter, Top: to.Ptr[int32](2)})
		if strings.Join(names, ",") != strings.Join(want, ",") || pages != 3 {
			t.Fatalf("paged: %v in %d pages, want %v in 3", names, pages, want)
		}
		// One page by hand, then resume from its NextTableName.
		first, err := svc.NewListTablesPager(&aztables.ListTablesOptions{Filter: &filter, Top: to.Ptr[int32](3)}).NextPage(ctx(t))
		must(t, err, "first page")
		// NextTableName is the service's opaque token: only handed back.
		if len(first.Tables) != 3 || first.NextTableName == nil || *first.NextTableName == "" {
			t.Fatalf("first page: %d tables, NextTableName %v", len(first.Tables), first.NextTableName)
		}
		rest, _ := listTableNames(t, svc, &aztables.ListTablesOptions{Filter: &filter, NextTableName: first.NextTableName})
		if strings.Join(rest, ",") != strings.Join(want[3:], ",") {
			t.Fatalf("resumed: %v, want %v", rest, want[3:])
		}
		// An equality filter names one table; an unfiltered listing includes them all.
		one, _ := listTableNames(t, svc, &aztables.ListTablesOptions{Filter: to.Ptr("TableName eq '" + want[2] + "'")})
		if len(one) != 1 || one[0] != want[2] {
			t.Fatalf("eq filter: %v", one)
		}
		all, _ := listTableNames(t, svc, nil)
		sort.Strings(all)
		for _, n := range want {
			if i := sort.SearchStrings(all, n); i == len(all) || all[i] != n {
				t.Fatalf("%s missing from the unfiltered listing", n)
			}
		}
	})
}

func TestInvalidTableNames(t *testing.T) {
	eachStyle(t, func(t *testing.T, s *suite) {
		svc := s.service(t)
		for _, bad := range []string{"ab", strings.Repeat("a", 64), "1abc", "ab_cd"} {
			_, err := svc.CreateTable(ctx(t), bad, nil)
			re := wantError(t, err, http.StatusBadRequest, "")
			if re.ErrorCode != string(aztables.OutOfRangeInput) && re.ErrorCode != "InvalidResourceName" {
				t.Fatalf("%q: error code %q", bad, re.ErrorCode)
			}
		}
	})
}

func TestEntityOperationsOnMissingTable(t *testing.T) {
	eachStyle(t, func(t *testing.T, s *suite) {
		client := s.service(t).NewClient(uniqueTableName("gonotable"))
		_, err := client.AddEntity(ctx(t), marshal(t, map[string]any{"PartitionKey": "p", "RowKey": "r"}), nil)
		wantError(t, err, http.StatusNotFound, aztables.TableNotFound)
		_, err = client.NewListEntitiesPager(nil).NextPage(ctx(t))
		wantError(t, err, http.StatusNotFound, aztables.TableNotFound)
	})
}
