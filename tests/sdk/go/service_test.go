// Account-level operations through ServiceClient: GetProperties defaults, SetProperties
// round trip (logging, metrics, CORS), the limit of 5 CORS rules, and GetStatistics on the
// read-only -secondary endpoint (path-style /devstoreaccount1-secondary and host-style
// devstoreaccount1-secondary.table.localhost), where writes are refused.
package aztablesuite

import (
	"context"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
)

// propertySuites: a server of their own when AZTABLE_BINARY is set (fresh = never set),
// else the shared server.
func propertySuites(t *testing.T) ([]*suite, bool) {
	if os.Getenv("AZTABLE_BINARY") != "" {
		return ownServer(t), true
	}
	return suites(t), false
}

func plainProperties() aztables.ServiceProperties {
	off := &aztables.RetentionPolicy{Enabled: to.Ptr(false)}
	return aztables.ServiceProperties{
		Logging:       &aztables.Logging{Version: to.Ptr("1.0"), Read: to.Ptr(false), Write: to.Ptr(false), Delete: to.Ptr(false), RetentionPolicy: off},
		HourMetrics:   &aztables.Metrics{Version: to.Ptr("1.0"), Enabled: to.Ptr(false), RetentionPolicy: off},
		MinuteMetrics: &aztables.Metrics{Version: to.Ptr("1.0"), Enabled: to.Ptr(false), RetentionPolicy: off},
		Cors:          []*aztables.CorsRule{},
	}
}

func TestServiceProperties(t *testing.T) {
	ss, fresh := propertySuites(t)
	for i, s := range ss {
		t.Run(s.style, func(t *testing.T) {
			svc := s.service(t)
			t.Cleanup(func() { _, _ = svc.SetProperties(context.Background(), plainProperties(), nil) })
			if fresh && i == 0 {
				got, err := svc.GetProperties(ctx(t), nil)
				must(t, err, "GetProperties")
				if got.Logging == nil || *got.Logging.Version != "1.0" || *got.Logging.RetentionPolicy.Enabled ||
					got.HourMetrics == nil || *got.HourMetrics.Enabled || got.MinuteMetrics == nil || *got.MinuteMetrics.Enabled ||
					len(got.Cors) != 0 {
					t.Fatalf("defaults: %+v %+v %+v %v", got.Logging, got.HourMetrics, got.MinuteMetrics, got.Cors)
				}
			}
			props := aztables.ServiceProperties{
				Logging: &aztables.Logging{Version: to.Ptr("1.0"), Read: to.Ptr(true), Write: to.Ptr(false), Delete: to.Ptr(true),
					RetentionPolicy: &aztables.RetentionPolicy{Enabled: to.Ptr(true), Days: to.Ptr[int32](5)}},
				HourMetrics: &aztables.Metrics{Version: to.Ptr("1.0"), Enabled: to.Ptr(true), IncludeAPIs: to.Ptr(true),
					RetentionPolicy: &aztables.RetentionPolicy{Enabled: to.Ptr(true), Days: to.Ptr[int32](7)}},
				MinuteMetrics: &aztables.Metrics{Version: to.Ptr("1.0"), Enabled: to.Ptr(false),
					RetentionPolicy: &aztables.RetentionPolicy{Enabled: to.Ptr(false)}},
				Cors: []*aztables.CorsRule{
					{AllowedOrigins: to.Ptr("http://example.com,http://contoso.com"), AllowedMethods: to.Ptr("GET,PUT"),
						AllowedHeaders: to.Ptr("x-ms-meta-*,content-type"), ExposedHeaders: to.Ptr("x-ms-request-id"), MaxAgeInSeconds: to.Ptr[int32](300)},
					{AllowedOrigins: to.Ptr("*"), AllowedMethods: to.Ptr("DELETE,MERGE"), AllowedHeaders: to.Ptr(""), ExposedHeaders: to.Ptr(""), MaxAgeInSeconds: to.Ptr[int32](1)},
				},
			}
			_, err := svc.SetProperties(ctx(t), props, nil)
			must(t, err, "SetProperties")
			got, err := svc.GetProperties(ctx(t), nil)
			must(t, err, "GetProperties")
			lg := got.Logging
			if *lg.Read != true || *lg.Write != false || *lg.Delete != true || !*lg.RetentionPolicy.Enabled || *lg.RetentionPolicy.Days != 5 {
				t.Fatalf("logging: %+v %+v", lg, lg.RetentionPolicy)
			}
			hm := got.HourMetrics
			if !*hm.Enabled || hm.IncludeAPIs == nil || !*hm.IncludeAPIs || *hm.RetentionPolicy.Days != 7 {
				t.Fatalf("hour metrics: %+v %+v", hm, hm.RetentionPolicy)
			}
			if *got.MinuteMetrics.Enabled || *got.MinuteMetrics.RetentionPolicy.Enabled {
				t.Fatalf("minute metrics: %+v", got.MinuteMetrics)
			}
			if len(got.Cors) != 2 {
				t.Fatalf("%d CORS rules", len(got.Cors))
			}
			c0, c1 := got.Cors[0], got.Cors[1]
			if *c0.AllowedOrigins != "http://example.com,http://contoso.com" || *c0.AllowedMethods != "GET,PUT" ||
				*c0.AllowedHeaders != "x-ms-meta-*,content-type" || *c0.ExposedHeaders != "x-ms-request-id" || *c0.MaxAgeInSeconds != 300 {
				t.Fatalf("first rule: %+v", c0)
			}
			if *c1.AllowedOrigins != "*" || *c1.AllowedMethods != "DELETE,MERGE" || *c1.MaxAgeInSeconds != 1 {
				t.Fatalf("second rule: %+v", c1)
			}
			// Six CORS rules: 400 InvalidXmlDocument, nothing changed.
			six := props
			for len(six.Cors) < 6 {
				six.Cors = append(six.Cors, props.Cors[1])
			}
			_, err = svc.SetProperties(ctx(t), six, nil)
			wantError(t, err, http.StatusBadRequest, aztables.InvalidXmlDocument)
			got, err = svc.GetProperties(ctx(t), nil)
			must(t, err, "GetProperties")
			if len(got.Cors) != 2 {
				t.Fatalf("%d CORS rules after a refused set", len(got.Cors))
			}
			// Retention days out of range: 400.
			bad := plainProperties()
			bad.Logging.RetentionPolicy = &aztables.RetentionPolicy{Enabled: to.Ptr(true), Days: to.Ptr[int32](366)}
			_, err = svc.SetProperties(ctx(t), bad, nil)
			wantError(t, err, http.StatusBadRequest, "")
		})
	}
}

func (s *suite) secondaryService(t *testing.T, perCall ...*recorder) *aztables.ServiceClient {
	t.Helper()
	opts := clientOptions()
	for _, r := range perCall {
		opts.PerCallPolicies = append(opts.PerCallPolicies, r)
	}
	c, err := aztables.NewServiceClientWithSharedKey(s.secondary, s.cred, opts)
	must(t, err, "NewServiceClientWithSharedKey(secondary)")
	return c
}

func TestGetStatisticsOnTheSecondary(t *testing.T) {
	eachStyle(t, func(t *testing.T, s *suite) {
		rec := &recorder{}
		stats, err := s.secondaryService(t, rec).GetStatistics(ctx(t), nil)
		must(t, err, "GetStatistics")
		_, _, u := rec.last(t)
		if !strings.Contains(u, s.account+"-secondary") || !strings.Contains(u, "comp=stats") {
			t.Fatalf("request went to %s", u)
		}
		geo := stats.GeoReplication
		if geo == nil || geo.Status == nil || *geo.Status != aztables.GeoReplicationStatusLive || geo.LastSyncTime == nil {
			t.Fatalf("geo replication: %+v", geo)
		}
		if d := time.Since(*geo.LastSyncTime); d < -time.Minute || d > 10*time.Minute {
			t.Fatalf("LastSyncTime %s is not recent", geo.LastSyncTime)
		}
	})
}

func TestSecondaryIsReadOnly(t *testing.T) {
	eachStyle(t, func(t *testing.T, s *suite) {
		c, name := s.freshTable(t, "gosec")
		addEntity(t, c, map[string]any{"PartitionKey": "p", "RowKey": "r", "V": 1})
		sec := s.secondaryService(t)
		// Reads work and see the primary's data.
		es, _ := listAll(t, sec.NewClient(name), nil)
		if len(es) != 1 || es[0]["V"] != float64(1) {
			t.Fatalf("secondary read: %v", es)
		}
		_, err := sec.CreateTable(ctx(t), uniqueTableName("gosecnew"), nil)
		wantError(t, err, http.StatusForbidden, "InsufficientAccountPermissions")
		_, err = sec.NewClient(name).AddEntity(ctx(t), marshal(t, map[string]any{"PartitionKey": "p", "RowKey": "r2"}), nil)
		wantError(t, err, http.StatusForbidden, "InsufficientAccountPermissions")
		_, err = sec.DeleteTable(ctx(t), name, nil)
		wantError(t, err, http.StatusForbidden, "InsufficientAccountPermissions")
	})
}
