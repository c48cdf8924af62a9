// Testcontainers for Go's Azurite module (modules/azure/azurite) with aztable's image in
// place of Azurite's: the module starts it (the entrypoint `azurite`), waits its own way
// (each enabled service's port listens: a /bin/sh, cat, awk and grep check inside the
// container, and a connection from the host), and aztables runs a table round trip
// through a connection string made of the module's account, key and table URL. Then
// the Table service alone, and the Blob service alone, which the image refuses (the
// entrypoint `azurite-blob` exits 1) with a message saying how to ask for Table.
//
// Usage: go run . IMAGE (scripts/container-test.sh, MODULES=1).
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/testcontainers/testcontainers-go"
	"github.com/testcontainers/testcontainers-go/modules/azure/azurite"
)

func main() {
	if len(os.Args) != 2 {
		fail("usage: go run . IMAGE")
	}
	image := os.Args[1]
	ctx := context.Background()

	for _, c := range []struct {
		what string
		opts []testcontainers.ContainerCustomizer
	}{
		{"all three services (the default)", nil},
		{"the Table service alone", []testcontainers.ContainerCustomizer{azurite.WithEnabledServices(azurite.TableService)}},
		{"in memory", []testcontainers.ContainerCustomizer{azurite.WithInMemoryPersistence(16)}},
	} {
		t := time.Now()
		ctr, err := azurite.Run(ctx, image, c.opts...)
		if err != nil {
			terminate(ctr)
			fail("%s: %v", c.what, err)
		}
		fmt.Printf("   go module: %s: started and waited in %.1f s\n", c.what, time.Since(t).Seconds())
		url, err := ctr.TableServiceURL(ctx)
		if err != nil {
			terminate(ctr)
			fail("%s: table URL: %v", c.what, err)
		}
		conn := fmt.Sprintf("DefaultEndpointsProtocol=http;AccountName=%s;AccountKey=%s;TableEndpoint=%s/%s;",
			azurite.AccountName, azurite.AccountKey, url, azurite.AccountName)
		if err := roundTrip(ctx, conn); err != nil {
			terminate(ctr)
			fail("%s: %v", c.what, err)
		}
		fmt.Printf("   go module: %s: aztables round trip through %s: ok\n", c.what, url)
		terminate(ctr)
	}

	// Blob alone: the module sets the entrypoint azurite-blob, which this image refuses
	ctr, err := azurite.Run(ctx, image, azurite.WithEnabledServices(azurite.BlobService))
	if err == nil {
		terminate(ctr)
		fail("the Blob service alone started")
	}
	if ctr == nil {
		fail("the Blob service alone: no container to read the log of: %v", err)
	}
	logs, lerr := ctr.Logs(ctx)
	if lerr != nil {
		terminate(ctr)
		fail("the Blob service alone: logs: %v", lerr)
	}
	text, _ := io.ReadAll(logs)
	terminate(ctr)
	line := strings.TrimSpace(string(text))
	if !strings.Contains(line, "serves the Table service only") ||
		!strings.Contains(line, "azurite.WithEnabledServices(azurite.TableService)") {
		fail("the Blob service alone: the log does not say how to ask for Table: %q", line)
	}
	first := err.Error()
	if i := strings.Index(first, "exited with code"); i >= 0 {
		first = first[i:]
	}
	fmt.Printf("   go module: the Blob service alone: refused (%s); the log says: %.90s...\n", first, line)
}

// roundTrip creates a table, inserts two entities, gets one, queries, deletes both and the table.
func roundTrip(ctx context.Context, conn string) error {
	svc, err := aztables.NewServiceClientFromConnectionString(conn, nil)
	if err != nil {
		return err
	}
	name := fmt.Sprintf("go%x", time.Now().UnixNano())
	if _, err := svc.CreateTable(ctx, name, nil); err != nil {
		return fmt.Errorf("create table: %w", err)
	}
	table := svc.NewClient(name)
	for _, e := range []aztables.EDMEntity{
		{Entity: aztables.Entity{PartitionKey: "p", RowKey: "1"}, Properties: map[string]any{"Name": "Ada", "Age": int32(36)}},
		{Entity: aztables.Entity{PartitionKey: "p", RowKey: "2"}, Properties: map[string]any{"Name": "Grace", "Age": int32(45)}},
	} {
		body, err := json.Marshal(e)
		if err != nil {
			return err
		}
		if _, err := table.AddEntity(ctx, body, nil); err != nil {
			return fmt.Errorf("insert: %w", err)
		}
	}
	got, err := table.GetEntity(ctx, "p", "1", nil)
	if err != nil {
		return fmt.Errorf("get: %w", err)
	}
	var e aztables.EDMEntity
	if err := json.Unmarshal(got.Value, &e); err != nil {
		return err
	}
	if e.Properties["Name"] != "Ada" || e.Properties["Age"] != int32(36) {
		return fmt.Errorf("get: %+v", e.Properties)
	}
	var names []string
	pager := table.NewListEntitiesPager(&aztables.ListEntitiesOptions{Filter: to.Ptr("PartitionKey eq 'p' and Age gt 40")})
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			return fmt.Errorf("query: %w", err)
		}
		for _, raw := range page.Entities {
			var q aztables.EDMEntity
			if err := json.Unmarshal(raw, &q); err != nil {
				return err
			}
			names = append(names, fmt.Sprint(q.Properties["Name"]))
		}
	}
	if strings.Join(names, ",") != "Grace" {
		return fmt.Errorf("query: %v", names)
	}
	for _, rk := range []string{"1", "2"} {
		if _, err := table.DeleteEntity(ctx, "p", rk, nil); err != nil {
			return fmt.Errorf("delete entity: %w", err)
		}
	}
	if _, err := svc.DeleteTable(ctx, name, nil); err != nil {
		return fmt.Errorf("delete table: %w", err)
	}
	return nil
}

func terminate(c *azurite.Container) {
	if c != nil {
		_ = testcontainers.TerminateContainer(c)
	}
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "go module: "+format+"\n", args...)
	os.Exit(1)
}
