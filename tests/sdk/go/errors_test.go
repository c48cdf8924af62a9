// Service error codes as the Go SDK exposes them (aztables.TableErrorCode values through
// errors.As to *azcore.ResponseError) for entity validation: property value, name and
// count limits, entity size, forbidden key characters, typed values out of range; and
// authentication: a wrong key, another account name, the connection string of the
// environment, and UseDevelopmentStorage=true (AZTABLE_DEFAULT_PORT_TEST=1).
package aztablesuite

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
)

func TestValidationErrorCodes(t *testing.T) {
	eachStyle(t, func(t *testing.T, s *suite) {
		c, _ := s.freshTable(t, "govalid")
		add := func(e map[string]any) error {
			_, err := c.AddEntity(ctx(t), marshal(t, e), nil)
			return err
		}
		base := func() map[string]any { return map[string]any{"PartitionKey": "p", "RowKey": "r"} }

		// A string of 32 Ki UTF-16 units is the limit; one more is PropertyValueTooLarge.
		e := base()
		e["S"] = strings.Repeat("s", 32*1024)
		must(t, add(e), "32 Ki string")
		e = base()
		e["RowKey"] = "big"
		e["S"] = strings.Repeat("s", 32*1024+1)
		wantError(t, add(e), 400, aztables.PropertyValueTooLarge)
		// Binary: 64 KiB.
		ee := aztables.EDMEntity{Entity: aztables.Entity{PartitionKey: "p", RowKey: "bin"}, Properties: map[string]any{"B": aztables.EDMBinary(make([]byte, 64*1024+1))}}
		_, err := c.AddEntity(ctx(t), marshal(t, ee), nil)
		wantError(t, err, 400, aztables.PropertyValueTooLarge)
		// 252 custom properties are the limit.
		e = base()
		e["RowKey"] = "many"
		for i := 0; i < 253; i++ {
			e[fmt.Sprintf("P%03d", i)] = i
		}
		wantError(t, add(e), 400, aztables.TooManyProperties)
		delete(e, "P252")
		must(t, add(e), "252 properties")
		// Property names.
		for _, name := range []string{"has space", "1digit", "dash-name"} {
			e = base()
			e["RowKey"] = "name"
			e[name] = "v"
			wantError(t, add(e), 400, aztables.PropertyNameInvalid)
		}
		e = base()
		e["RowKey"] = "long"
		e[strings.Repeat("n", 256)] = 1
		wantError(t, add(e), 400, aztables.PropertyNameTooLong)
		// An entity over 1 MiB: EntityTooLarge, nothing stored.
		e = base()
		e["RowKey"] = "huge"
		for i := 0; i < 40; i++ {
			e[fmt.Sprintf("S%d", i)] = strings.Repeat("x", 30000)
		}
		wantError(t, add(e), 400, aztables.EntityTooLarge)
		// Forbidden key characters.
		for _, k := range [][2]string{{"a/b", "r"}, {"p", "a\\b"}, {"p", "a#b"}, {"p", "a?b"}, {"p", "tab\there"}, {"p", "del\x7f"}} {
			wantError(t, add(map[string]any{"PartitionKey": k[0], "RowKey": k[1]}), 400, "")
		}
		// Typed values out of range.
		for _, raw := range []string{
			`{"PartitionKey":"p","RowKey":"i32","N":2147483648,"N@odata.type":"Edm.Int32"}`,
			`{"PartitionKey":"p","RowKey":"i64","N":"9223372036854775808","N@odata.type":"Edm.Int64"}`,
			`{"PartitionKey":"p","RowKey":"dt","N":"not a date","N@odata.type":"Edm.DateTime"}`,
			`{"PartitionKey":"p","RowKey":"g","N":"not-a-guid","N@odata.type":"Edm.Guid"}`,
		} {
			_, err := c.AddEntity(ctx(t), json.RawMessage(raw), nil)
			wantError(t, err, 400, aztables.InvalidInput)
		}
		es, _ := listAll(t, c, nil)
		if got := strings.Join(rowKeys(es), ","); got != "many,r" {
			t.Fatalf("rows after the refusals: %s", got)
		}
		// A row key is required: the SDK refuses before sending (its own error).
		_, err = c.AddEntity(ctx(t), marshal(t, map[string]any{"PartitionKey": "p"}), nil)
		if err == nil {
			t.Fatal("an entity without RowKey was accepted")
		}
	})
}

func TestWrongCredentials(t *testing.T) {
	eachStyle(t, func(t *testing.T, s *suite) {
		c, name := s.freshTable(t, "goauth")
		addEntity(t, c, map[string]any{"PartitionKey": "p", "RowKey": "r", "V": 1})
		wrongKey, err := aztables.NewSharedKeyCredential(s.account, "AAAA"+wellKnownKey[4:])
		must(t, err, "credential")
		bad, err := aztables.NewServiceClientWithSharedKey(s.endpoint, wrongKey, clientOptions())
		must(t, err, "client")
		_, err = bad.NewListTablesPager(nil).NextPage(ctx(t))
		wantError(t, err, http.StatusForbidden, "AuthenticationFailed")
		_, err = bad.CreateTable(ctx(t), uniqueTableName("gonever"), nil)
		wantError(t, err, http.StatusForbidden, "AuthenticationFailed")
		_, err = bad.NewClient(name).UpdateEntity(ctx(t), marshal(t, map[string]any{"PartitionKey": "p", "RowKey": "r", "V": 2}), nil)
		wantError(t, err, http.StatusForbidden, "AuthenticationFailed")
		if got, _ := getEntity(t, c, "p", "r"); got["V"] != float64(1) {
			t.Fatalf("a refused update was written: %v", got)
		}
		other, err := aztables.NewSharedKeyCredential("someotheraccount", wellKnownKey)
		must(t, err, "credential")
		wrongAccount, err := aztables.NewServiceClientWithSharedKey(s.endpoint, other, clientOptions())
		must(t, err, "client")
		_, err = wrongAccount.NewListTablesPager(nil).NextPage(ctx(t))
		wantError(t, err, http.StatusForbidden, "")
	})
}

func TestConnectionStringFromTheEnvironment(t *testing.T) {
	svc, err := aztables.NewServiceClientFromConnectionString(os.Getenv("AZTABLE_CONNECTION_STRING"), clientOptions())
	must(t, err, "NewServiceClientFromConnectionString")
	name := uniqueTableName("gocs")
	_, err = svc.CreateTable(ctx(t), name, nil)
	must(t, err, "CreateTable")
	t.Cleanup(func() { _, _ = svc.DeleteTable(ctx(t), name, nil) })
	addEntity(t, svc.NewClient(name), map[string]any{"PartitionKey": "p", "RowKey": "r", "V": "cs"})
	names, _ := listTableNames(t, svc, &aztables.ListTablesOptions{Filter: to.Ptr("TableName eq '" + name + "'")})
	if len(names) != 1 {
		t.Fatalf("listed: %v", names)
	}
}

// The Go SDK has no UseDevelopmentStorage=true shortcut (its parser needs AccountName):
// the shortcut is refused client-side, and the connection string it stands for (the
// well-known account on 127.0.0.1:10002) is used instead, in both URL styles.
func TestUseDevelopmentStorage(t *testing.T) {
	if os.Getenv("AZTABLE_DEFAULT_PORT_TEST") != "1" {
		t.Skip("set AZTABLE_DEFAULT_PORT_TEST=1 with a server on 127.0.0.1:10002 to test UseDevelopmentStorage=true")
	}
	if _, err := aztables.NewServiceClientFromConnectionString("UseDevelopmentStorage=true", clientOptions()); err == nil {
		t.Fatal("aztables accepted UseDevelopmentStorage=true; this test assumed it does not")
	}
	for _, endpoint := range []string{"http://127.0.0.1:10002/" + wellKnownAccount, "http://" + wellKnownAccount + ".table.localhost:10002"} {
		t.Run(endpoint, func(t *testing.T) {
			cs := "DefaultEndpointsProtocol=http;AccountName=" + wellKnownAccount + ";AccountKey=" + wellKnownKey + ";TableEndpoint=" + endpoint + ";"
			svc, err := aztables.NewServiceClientFromConnectionString(cs, clientOptions())
			must(t, err, "NewServiceClientFromConnectionString")
			name := uniqueTableName("godev")
			_, err = svc.CreateTable(ctx(t), name, nil)
			must(t, err, "CreateTable")
			t.Cleanup(func() { _, _ = svc.DeleteTable(ctx(t), name, nil) })
			tc := svc.NewClient(name)
			addEntity(t, tc, map[string]any{"PartitionKey": "p", "RowKey": "r", "V": "dev"})
			if got, _ := getEntity(t, tc, "p", "r"); got["V"] != "dev" {
				t.Fatalf("%v", got)
			}
		})
	}
}
