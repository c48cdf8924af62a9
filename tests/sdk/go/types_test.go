// Every Edm type through aztables.EDMEntity: Edm.Int64 at its extremes, Edm.DateTime with
// sub-microsecond (tick) precision and at the ends of its range, Edm.Binary, Edm.Guid,
// Edm.Double (NaN, ±Infinity, whole numbers, extremes), Edm.Boolean, Edm.Int32 and
// strings, checked both as EDMEntity decodes them and on the wire; typed filters.
package aztablesuite

import (
	"bytes"
	"encoding/json"
	"math"
	"net/http"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
)

const testGUID = "c9da6455-213d-42c9-9a79-3e9149a57833"

func allBytes() []byte {
	b := make([]byte, 256)
	for i := range b {
		b[i] = byte(i)
	}
	return b
}

var (
	tDateTime   = time.Date(2024, 2, 29, 13, 14, 15, 123456700, time.UTC) // 7 digits: a tick
	tNoFraction = time.Date(2001, 9, 9, 1, 46, 40, 0, time.UTC)
	tMin        = time.Date(1601, 1, 1, 0, 0, 0, 0, time.UTC)
	tMax        = time.Date(9999, 12, 31, 23, 59, 59, 999999900, time.UTC)
)

// typedEntity: Edm.Double values the SDK cannot write as plain float64 (NaN and ±Inf do
// not marshal; a whole float64 marshals as `2`, an Int32) carry their own
// `X@odata.type` annotation, which EDMEntity passes through.
func typedEntity(pk, rk string) aztables.EDMEntity {
	return aztables.EDMEntity{
		Entity: aztables.Entity{PartitionKey: pk, RowKey: rk},
		Properties: map[string]any{
			"Str":                       "hello world",
			"EmptyStr":                  "",
			"Unicode":                   "héllo wörld — 日本語 — 😀 — \u00a0\u2028",
			"NumericLookingStr":         "12345",
			"Int32":                     int32(42),
			"Int32Max":                  int32(math.MaxInt32),
			"Int32Min":                  int32(math.MinInt32),
			"Int64Max":                  aztables.EDMInt64(math.MaxInt64),
			"Int64Min":                  aztables.EDMInt64(math.MinInt64),
			"Int64Small":                aztables.EDMInt64(7),
			"Int64Past53":               aztables.EDMInt64(1<<53 + 1),
			"Double":                    3.141592653589793,
			"DoubleNeg":                 -0.1,
			"DoubleHuge":                1e308,
			"DoubleTiny":                5e-324,
			"DoubleWhole":               2.0,
			"DoubleWhole@odata.type":    "Edm.Double",
			"DoubleBigWhole":            1e15,
			"DoubleBigWhole@odata.type": "Edm.Double",
			"NaN":                       "NaN",
			"NaN@odata.type":            "Edm.Double",
			"Inf":                       "Infinity",
			"Inf@odata.type":            "Edm.Double",
			"NegInf":                    "-Infinity",
			"NegInf@odata.type":         "Edm.Double",
			"BoolTrue":                  true,
			"BoolFalse":                 false,
			"DateTime":                  aztables.EDMDateTime(tDateTime),
			"DateTimeNoFraction":        aztables.EDMDateTime(tNoFraction),
			"DateTimeMin":               aztables.EDMDateTime(tMin),
			"DateTimeMax":               aztables.EDMDateTime(tMax),
			"Guid":                      aztables.EDMGUID(testGUID),
			"Binary":                    aztables.EDMBinary(allBytes()),
			"BinaryEmpty":               aztables.EDMBinary{},
		},
	}
}

// checkTyped asserts what EDMEntity decodes from an entity the service returned, and the
// wire form of the values EDMEntity cannot represent.
func checkTyped(t *testing.T, raw []byte, wire []byte) {
	t.Helper()
	var e aztables.EDMEntity
	must(t, json.Unmarshal(raw, &e), "EDMEntity unmarshal")
	p := e.Properties
	for k, want := range map[string]string{"Str": "hello world", "EmptyStr": "", "NumericLookingStr": "12345",
		"Unicode": "héllo wörld — 日本語 — 😀 — \u00a0\u2028"} {
		if p[k] != want {
			t.Errorf("%s = %#v, want %q", k, p[k], want)
		}
	}
	for k, want := range map[string]int32{"Int32": 42, "Int32Max": math.MaxInt32, "Int32Min": math.MinInt32} {
		if p[k] != want {
			t.Errorf("%s = %#v (%T), want int32 %d", k, p[k], p[k], want)
		}
	}
	for k, want := range map[string]int64{"Int64Max": math.MaxInt64, "Int64Min": math.MinInt64, "Int64Small": 7, "Int64Past53": 1<<53 + 1} {
		if p[k] != aztables.EDMInt64(want) {
			t.Errorf("%s = %#v (%T), want EDMInt64 %d", k, p[k], p[k], want)
		}
	}
	for k, want := range map[string]float64{"Double": 3.141592653589793, "DoubleNeg": -0.1, "DoubleHuge": 1e308, "DoubleTiny": 5e-324} {
		if p[k] != want {
			t.Errorf("%s = %#v (%T), want float64 %v", k, p[k], p[k], want)
		}
	}
	if p["BoolTrue"] != true || p["BoolFalse"] != false {
		t.Errorf("booleans: %#v %#v", p["BoolTrue"], p["BoolFalse"])
	}
	for k, want := range map[string]time.Time{"DateTime": tDateTime, "DateTimeNoFraction": tNoFraction, "DateTimeMin": tMin, "DateTimeMax": tMax} {
		got, ok := p[k].(aztables.EDMDateTime)
		if !ok || !time.Time(got).Equal(want) {
			t.Errorf("%s = %#v, want %s", k, p[k], want.Format(time.RFC3339Nano))
		}
	}
	if p["Guid"] != aztables.EDMGUID(testGUID) {
		t.Errorf("Guid = %#v", p["Guid"])
	}
	if b, ok := p["Binary"].(aztables.EDMBinary); !ok || !bytes.Equal(b, allBytes()) {
		t.Errorf("Binary = %#v", p["Binary"])
	}
	if b, ok := p["BinaryEmpty"].(aztables.EDMBinary); !ok || len(b) != 0 {
		t.Errorf("BinaryEmpty = %#v", p["BinaryEmpty"])
	}
	// EDMEntity has no Edm.Double case: an annotated Double (NaN, ±Inf) decodes as nil, and
	// a whole Double (the service writes 2.0, which Go's map round-trip turns into 2) as an
	// int32. The wire form is what the service answered.
	for _, k := range []string{"NaN", "Inf", "NegInf"} {
		if v, ok := p[k]; !ok || v != nil {
			t.Errorf("%s: EDMEntity gives %#v; expected the SDK's nil for an annotated Edm.Double", k, v)
		}
	}
	if p["DoubleWhole"] != int32(2) {
		t.Errorf("DoubleWhole: EDMEntity gives %#v (%T)", p["DoubleWhole"], p["DoubleWhole"])
	}
	if wire == nil {
		return
	}
	var w map[string]json.RawMessage
	must(t, json.Unmarshal(wire, &w), "wire body")
	for k, want := range map[string]string{
		"NaN": `"NaN"`, "NaN@odata.type": `"Edm.Double"`,
		"Inf": `"Infinity"`, "Inf@odata.type": `"Edm.Double"`,
		"NegInf": `"-Infinity"`, "NegInf@odata.type": `"Edm.Double"`,
		"Int64Max": `"9223372036854775807"`, "Int64Max@odata.type": `"Edm.Int64"`,
		"Int64Min": `"-9223372036854775808"`,
		"DateTime": `"2024-02-29T13:14:15.1234567Z"`, "DateTime@odata.type": `"Edm.DateTime"`,
		"DateTimeMax":     `"9999-12-31T23:59:59.9999999Z"`,
		"Guid@odata.type": `"Edm.Guid"`, "Binary@odata.type": `"Edm.Binary"`,
	} {
		if string(w[k]) != want {
			t.Errorf("wire %s = %s, want %s", k, w[k], want)
		}
	}
	// A whole Double stays a Double: a JSON number with a fraction part, or annotated.
	for _, k := range []string{"DoubleWhole", "DoubleBigWhole"} {
		v := string(w[k])
		annotated := string(w[k+"@odata.type"]) == `"Edm.Double"`
		if !annotated && !bytes.ContainsAny(w[k], ".eE") {
			t.Errorf("wire %s = %s: a whole Edm.Double came back as an integer", k, v)
		}
		var f float64
		if err := json.Unmarshal(w[k], &f); err != nil {
			var s string
			if json.Unmarshal(w[k], &s) != nil {
				t.Errorf("wire %s = %s", k, v)
			}
		}
	}
}

func TestEveryEdmTypeRoundTrips(t *testing.T) {
	eachStyle(t, func(t *testing.T, s *suite) {
		_, name := s.freshTable(t, "gotypes")
		rec := &recorder{}
		c := s.service(t, rec).NewClient(name)
		body := marshal(t, typedEntity("types", "all"))
		resp, err := c.AddEntity(ctx(t), body, nil)
		must(t, err, "AddEntity")
		// The insert's answer (return-content) already carries the stored entity.
		checkTyped(t, resp.Value, nil)

		got, err := c.GetEntity(ctx(t), "types", "all", nil)
		must(t, err, "GetEntity")
		_, _, _ = rec.last(t)
		checkTyped(t, got.Value, rec.bodies[len(rec.bodies)-1])

		// Through a query feed, and after each update/upsert mode.
		es := c.NewListEntitiesPager(&aztables.ListEntitiesOptions{Filter: to.Ptr("RowKey eq 'all'")})
		page, err := es.NextPage(ctx(t))
		must(t, err, "ListEntities")
		if len(page.Entities) != 1 {
			t.Fatalf("%d entities", len(page.Entities))
		}
		checkTyped(t, page.Entities[0], nil)
		for _, mode := range []aztables.UpdateMode{aztables.UpdateModeMerge, aztables.UpdateModeReplace} {
			_, err = c.UpdateEntity(ctx(t), body, &aztables.UpdateEntityOptions{UpdateMode: mode})
			must(t, err, "UpdateEntity "+string(mode))
			got, err = c.GetEntity(ctx(t), "types", "all", nil)
			must(t, err, "GetEntity")
			checkTyped(t, got.Value, rec.bodies[len(rec.bodies)-1])
			_, err = c.UpsertEntity(ctx(t), marshal(t, typedEntity("types", "up"+string(mode))), &aztables.UpsertEntityOptions{UpdateMode: mode})
			must(t, err, "UpsertEntity "+string(mode))
			got, err = c.GetEntity(ctx(t), "types", "up"+string(mode), nil)
			must(t, err, "GetEntity")
			checkTyped(t, got.Value, rec.bodies[len(rec.bodies)-1])
		}
	})
}

// A whole float64 without an annotation is sent by the SDK as a JSON integer: the service
// stores an Edm.Int32 (what it does with any untyped `2`).
func TestWholeFloat64WithoutAnnotationIsInt32(t *testing.T) {
	eachStyle(t, func(t *testing.T, s *suite) {
		c, _ := s.freshTable(t, "gowhole")
		addEntity(t, c, map[string]any{"PartitionKey": "p", "RowKey": "r", "F": 2.0, "G": 2.5})
		es, _ := listAll(t, c, &aztables.ListEntitiesOptions{Filter: to.Ptr("F eq 2")})
		if len(es) != 1 {
			t.Fatalf("F eq 2 (an Int32 literal) matched %d", len(es))
		}
		es, _ = listAll(t, c, &aztables.ListEntitiesOptions{Filter: to.Ptr("F eq 2.0")})
		if len(es) != 0 {
			t.Fatalf("F eq 2.0 (a Double literal) matched the Int32 %v", es)
		}
		es, _ = listAll(t, c, &aztables.ListEntitiesOptions{Filter: to.Ptr("G eq 2.5")})
		if len(es) != 1 {
			t.Fatalf("G eq 2.5 matched %d", len(es))
		}
	})
}

func TestTypedFilters(t *testing.T) {
	eachStyle(t, func(t *testing.T, s *suite) {
		c, _ := s.freshTable(t, "gotypedq")
		_, err := c.AddEntity(ctx(t), marshal(t, typedEntity("types", "all")), nil)
		must(t, err, "AddEntity")
		near := typedEntity("types", "near")
		near.Properties["Int64Max"] = aztables.EDMInt64(math.MaxInt64 - 1)
		near.Properties["Int64Min"] = aztables.EDMInt64(math.MinInt64 + 1)
		near.Properties["DateTime"] = aztables.EDMDateTime(tDateTime.Add(100 * time.Nanosecond))
		near.Properties["Guid"] = aztables.EDMGUID("c9da6455-213d-42c9-9a79-3e9149a57834")
		near.Properties["Binary"] = aztables.EDMBinary([]byte{0, 1, 2})
		near.Properties["Double"] = 3.14159
		near.Properties["BoolTrue"] = false
		_, err = c.AddEntity(ctx(t), marshal(t, near), nil)
		must(t, err, "AddEntity near")
		for _, f := range []string{
			"Int64Max eq 9223372036854775807L",
			"Int64Min eq -9223372036854775808L",
			"DateTime eq datetime'2024-02-29T13:14:15.1234567Z'",
			"Guid eq guid'" + testGUID + "'",
			"Binary ne X'000102'",
			"Double eq 3.141592653589793",
			"BoolTrue eq true",
		} {
			es, _ := listAll(t, c, &aztables.ListEntitiesOptions{Filter: &f})
			if rk := rowKeys(es); len(rk) != 1 || rk[0] != "all" {
				t.Errorf("%s: %v", f, rk)
			}
		}
		// A malformed literal is the service's 400.
		_, err = c.NewListEntitiesPager(&aztables.ListEntitiesOptions{Filter: to.Ptr("Int64Max eq 12x")}).NextPage(ctx(t))
		wantError(t, err, http.StatusBadRequest, aztables.InvalidInput)
	})
}
