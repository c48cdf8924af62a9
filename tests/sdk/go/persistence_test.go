// Data written through the Go SDK survives a SIGKILL of the server and a restart on the
// same --location (RocksDB): tables, deletions, every Edm type, ETags. Needs AZTABLE_BINARY.
package aztablesuite

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
)

func TestDataSurvivesSIGKILLAndRestart(t *testing.T) {
	location := t.TempDir()
	first := startServer(t, "--location", location)
	s := suitesAt(t, first.port)[1] // host-style before the restart, path-style after
	svc := s.service(t)
	name, gone := uniqueTableName("gopersist"), uniqueTableName("gogone")
	_, err := svc.CreateTable(ctx(t), name, nil)
	must(t, err, "CreateTable")
	_, err = svc.CreateTable(ctx(t), gone, nil)
	must(t, err, "CreateTable")
	_, err = svc.DeleteTable(ctx(t), gone, nil)
	must(t, err, "DeleteTable")
	c := svc.NewClient(name)
	for i := 0; i < 50; i++ {
		addEntity(t, c, map[string]any{"PartitionKey": fmt.Sprintf("p%d", i%2), "RowKey": fmt.Sprintf("r%03d", i), "N": i})
	}
	when := time.Date(2020, 5, 17, 8, 9, 10, 654321700, time.UTC)
	typed := aztables.EDMEntity{Entity: aztables.Entity{PartitionKey: "typed", RowKey: "r"}, Properties: map[string]any{
		"S": "héllo 😀", "L": aztables.EDMInt64(1 << 40), "D": 1.25, "T": aztables.EDMDateTime(when),
		"G": aztables.EDMGUID(testGUID), "B": aztables.EDMBinary{0, 0xff}, "Bool": true,
	}}
	_, err = c.AddEntity(ctx(t), marshal(t, typed), nil)
	must(t, err, "AddEntity typed")
	_, err = c.UpdateEntity(ctx(t), marshal(t, map[string]any{"PartitionKey": "p0", "RowKey": "r000", "N": -1}), nil)
	must(t, err, "UpdateEntity")
	_, err = c.DeleteEntity(ctx(t), "p1", "r001", nil)
	must(t, err, "DeleteEntity")
	_, etagBefore := getEntity(t, c, "typed", "r")
	first.kill()

	second := startServer(t, "--location", location)
	s = suitesAt(t, second.port)[0]
	svc = s.service(t)
	names, _ := listTableNames(t, svc, nil)
	has := map[string]bool{}
	for _, n := range names {
		has[n] = true
	}
	if !has[name] || has[gone] {
		t.Fatalf("tables after the restart: %v", names)
	}
	c = svc.NewClient(name)
	if es, _ := listAll(t, c, nil); len(es) != 50 {
		t.Fatalf("%d rows after the restart, want 50", len(es))
	}
	if e, _ := getEntity(t, c, "p0", "r000"); e["N"] != float64(-1) {
		t.Fatalf("the update was lost: %v", e)
	}
	_, err = c.GetEntity(ctx(t), "p1", "r001", nil)
	wantError(t, err, http.StatusNotFound, aztables.ResourceNotFound)
	resp, err := c.GetEntity(ctx(t), "typed", "r", nil)
	must(t, err, "GetEntity typed")
	var got aztables.EDMEntity
	must(t, json.Unmarshal(resp.Value, &got), "unmarshal")
	p := got.Properties
	if p["S"] != "héllo 😀" || p["L"] != aztables.EDMInt64(1<<40) || p["D"] != 1.25 || p["G"] != aztables.EDMGUID(testGUID) || p["Bool"] != true {
		t.Fatalf("typed after the restart: %#v", p)
	}
	if dt, ok := p["T"].(aztables.EDMDateTime); !ok || !time.Time(dt).Equal(when) {
		t.Fatalf("DateTime after the restart: %#v", p["T"])
	}
	if b, ok := p["B"].(aztables.EDMBinary); !ok || !bytes.Equal(b, []byte{0, 0xff}) {
		t.Fatalf("Binary after the restart: %#v", p["B"])
	}
	if resp.ETag != etagBefore {
		t.Fatalf("ETag %q after the restart, %q before", resp.ETag, etagBefore)
	}
	up, err := c.UpdateEntity(ctx(t), marshal(t, map[string]any{"PartitionKey": "typed", "RowKey": "r", "S": "x"}), nil)
	must(t, err, "UpdateEntity after the restart")
	if up.ETag == etagBefore {
		t.Fatal("the ETag did not move on after the restart")
	}
}
