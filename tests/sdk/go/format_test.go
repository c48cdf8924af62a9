// The Go SDK's Format option ($format in the query, over its Accept of minimal metadata):
// full metadata (odata.type, odata.id, odata.editLink, type annotations) and no metadata
// (bare values), for GetEntity, ListEntities, AddEntity's echo and ListTables.
package aztablesuite

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
)

func TestMetadataFormats(t *testing.T) {
	eachStyle(t, func(t *testing.T, s *suite) {
		c, name := s.freshTable(t, "goformat")
		e := aztables.EDMEntity{Entity: aztables.Entity{PartitionKey: "p", RowKey: "r"}, Properties: map[string]any{
			"S": "s", "I": int32(1), "L": aztables.EDMInt64(5), "G": aztables.EDMGUID(testGUID), "D": 1.5, "B": true,
		}}
		added, err := c.AddEntity(ctx(t), marshal(t, e), &aztables.AddEntityOptions{Format: to.Ptr(aztables.MetadataFormatFull)})
		must(t, err, "AddEntity full metadata")
		full, err := c.GetEntity(ctx(t), "p", "r", &aztables.GetEntityOptions{Format: to.Ptr(aztables.MetadataFormatFull)})
		must(t, err, "GetEntity full metadata")
		for what, raw := range map[string][]byte{"AddEntity": added.Value, "GetEntity": full.Value} {
			var m map[string]any
			must(t, json.Unmarshal(raw, &m), "unmarshal")
			if m["odata.type"] != s.account+"."+name {
				t.Errorf("%s odata.type %v", what, m["odata.type"])
			}
			id, _ := m["odata.id"].(string)
			link, _ := m["odata.editLink"].(string)
			if !strings.HasSuffix(id, name+"(PartitionKey='p',RowKey='r')") || link != name+"(PartitionKey='p',RowKey='r')" {
				t.Errorf("%s odata.id %q, odata.editLink %q", what, id, link)
			}
			for k, typ := range map[string]string{"L": "Edm.Int64", "G": "Edm.Guid", "Timestamp": "Edm.DateTime"} {
				if m[k+"@odata.type"] != typ {
					t.Errorf("%s %s@odata.type = %v, want %s", what, k, m[k+"@odata.type"], typ)
				}
			}
		}
		page, err := c.NewListEntitiesPager(&aztables.ListEntitiesOptions{Format: to.Ptr(aztables.MetadataFormatNone)}).NextPage(ctx(t))
		must(t, err, "ListEntities no metadata")
		if len(page.Entities) != 1 {
			t.Fatalf("%d entities", len(page.Entities))
		}
		var bare map[string]any
		must(t, json.Unmarshal(page.Entities[0], &bare), "unmarshal")
		for k := range bare {
			if strings.HasPrefix(k, "odata.") || strings.Contains(k, "@odata.type") {
				t.Errorf("no metadata, yet %s = %v", k, bare[k])
			}
		}
		if bare["L"] != "5" || bare["G"] != testGUID || bare["I"] != float64(1) || bare["B"] != true {
			t.Errorf("bare values: %v", bare)
		}
		svc := s.service(t)
		tables := svc.NewListTablesPager(&aztables.ListTablesOptions{Filter: to.Ptr("TableName eq '" + name + "'"), Format: to.Ptr(aztables.MetadataFormatFull)})
		tp, err := tables.NextPage(ctx(t))
		must(t, err, "ListTables full metadata")
		if len(tp.Tables) != 1 {
			t.Fatalf("%d tables", len(tp.Tables))
		}
		var meta map[string]any
		must(t, json.Unmarshal(tp.Tables[0].Value, &meta), "table metadata")
		if meta["odata.type"] != s.account+".Tables" || meta["odata.editLink"] != "Tables('"+name+"')" {
			t.Errorf("table metadata: %v", meta)
		}
	})
}
