package dev.aztable.sdk;

import static dev.aztable.sdk.Aztable.expectHttpError;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.azure.core.util.Context;
import com.azure.data.tables.TableServiceClient;
import com.azure.data.tables.TableServiceClientBuilder;
import com.azure.data.tables.models.TableServiceCorsRule;
import com.azure.data.tables.models.TableServiceGeoReplicationStatus;
import com.azure.data.tables.models.TableServiceLogging;
import com.azure.data.tables.models.TableServiceMetrics;
import com.azure.data.tables.models.TableServiceProperties;
import com.azure.data.tables.models.TableServiceRetentionPolicy;
import com.azure.data.tables.models.TableServiceStatistics;
import java.net.URI;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * Get / Set Table Service Properties and Get Table Service Stats (on the -secondary account).
 * Service properties are account-wide: with AZTABLE_BINARY set (scripts/sdk-tests.sh sets it)
 * this class runs against a server of its own; otherwise against the shared server, without
 * the test of the never-set defaults, and clears the CORS rules it set.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ServicePropertiesTest {
    private OwnServer own;
    private String endpoint;
    private TableServiceClient svc;

    @BeforeAll
    void start() throws Exception {
        if (OwnServer.binary() != null) {
            own = OwnServer.start();
            endpoint = own.endpoint;
        } else {
            endpoint = Aztable.ENDPOINT;
        }
        svc = client(endpoint);
    }

    @AfterAll
    void stop() throws Exception {
        if (own != null) {
            own.close();
        } else if (svc != null) {
            svc.setProperties(new TableServiceProperties().setCorsRules(List.of()));
        }
    }

    private static TableServiceClient client(String endpoint) {
        return new TableServiceClientBuilder().endpoint(endpoint).credential(Aztable.credential())
            .retryOptions(Aztable.noRetries()).buildClient();
    }

    private static TableServiceCorsRule rule(String origins, String methods) {
        return new TableServiceCorsRule().setAllowedOrigins(origins).setAllowedMethods(methods)
            .setAllowedHeaders("").setExposedHeaders("").setMaxAgeInSeconds(0);
    }

    private static TableServiceRetentionPolicy retention(boolean enabled, Integer days) {
        return new TableServiceRetentionPolicy().setEnabled(enabled).setDaysToRetain(days);
    }

    private static List<String> list(String csv) {
        List<String> out = new ArrayList<>();
        for (String s : (csv == null ? "" : csv).split(",")) {
            if (!s.isBlank()) {
                out.add(s.trim().toLowerCase(java.util.Locale.ROOT));
            }
        }
        return out;
    }

    private static List<TableServiceCorsRule> cors(TableServiceProperties p) {
        return p.getCorsRules() == null ? List.of() : p.getCorsRules();
    }

    @Test
    @Order(1)
    void defaults() {
        assumeTrue(own != null, "AZTABLE_BINARY not set: the shared server's properties may be set already");
        TableServiceProperties p = svc.getProperties();
        // Azurite's defaults (docs/compatibility.md): logging 1.0 with delete/read/write on
        assertEquals("1.0", p.getLogging().getAnalyticsVersion());
        assertEquals(List.of(true, true, true), List.of(p.getLogging().isDeleteLogged(), p.getLogging().isReadLogged(),
            p.getLogging().isWriteLogged()));
        assertFalse(p.getLogging().getRetentionPolicy().isEnabled());
        for (TableServiceMetrics m : List.of(p.getHourMetrics(), p.getMinuteMetrics())) {
            assertEquals("1.0", m.getVersion());
            assertFalse(m.isEnabled());
            assertFalse(m.getTableServiceRetentionPolicy().isEnabled());
        }
        assertEquals(List.of(), cors(p));
    }

    @Test
    void setPropertiesRoundTrip() {
        svc.setProperties(new TableServiceProperties()
            .setLogging(new TableServiceLogging().setAnalyticsVersion("1.0").setReadLogged(true).setWriteLogged(false)
                .setDeleteLogged(true).setRetentionPolicy(retention(true, 5)))
            .setHourMetrics(new TableServiceMetrics().setVersion("1.0").setEnabled(true).setIncludeApis(true)
                .setRetentionPolicy(retention(true, 7)))
            .setMinuteMetrics(new TableServiceMetrics().setVersion("1.0").setEnabled(false)
                .setRetentionPolicy(retention(false, null)))
            .setCorsRules(List.of(
                rule("http://example.com,http://contoso.com", "GET,PUT").setAllowedHeaders("x-ms-meta-*,content-type")
                    .setExposedHeaders("x-ms-request-id").setMaxAgeInSeconds(300),
                rule("*", "DELETE,MERGE").setMaxAgeInSeconds(1))));
        TableServiceProperties p = svc.getProperties();
        TableServiceLogging l = p.getLogging();
        assertEquals(List.of(true, false, true, true, 5), List.of(l.isReadLogged(), l.isWriteLogged(),
            l.isDeleteLogged(), l.getRetentionPolicy().isEnabled(), l.getRetentionPolicy().getDaysToRetain()));
        TableServiceMetrics h = p.getHourMetrics();
        assertTrue(h.isEnabled());
        assertEquals(Boolean.TRUE, h.isIncludeApis());
        assertEquals(7, h.getTableServiceRetentionPolicy().getDaysToRetain());
        assertFalse(p.getMinuteMetrics().isEnabled());
        List<TableServiceCorsRule> rules = cors(p);
        assertEquals(2, rules.size());
        TableServiceCorsRule first = rules.get(0);
        assertEquals(List.of("http://example.com", "http://contoso.com"), list(first.getAllowedOrigins()));
        assertEquals(List.of("get", "put"), list(first.getAllowedMethods()));
        assertEquals(List.of("x-ms-meta-*", "content-type"), list(first.getAllowedHeaders()));
        assertEquals(List.of("x-ms-request-id"), list(first.getExposedHeaders()));
        assertEquals(300, first.getMaxAgeInSeconds());
        assertEquals("*", rules.get(1).getAllowedOrigins());
        assertEquals(List.of("delete", "merge"), list(rules.get(1).getAllowedMethods()));
        assertEquals(1, rules.get(1).getMaxAgeInSeconds());
    }

    @Test
    void aSubsetUpdateKeepsTheOtherRoots() {
        svc.setProperties(new TableServiceProperties()
            .setLogging(new TableServiceLogging().setAnalyticsVersion("1.0").setReadLogged(true).setWriteLogged(true)
                .setDeleteLogged(false).setRetentionPolicy(retention(false, null)))
            .setHourMetrics(new TableServiceMetrics().setVersion("1.0").setEnabled(true).setIncludeApis(false)
                .setRetentionPolicy(retention(true, 3)))
            .setCorsRules(List.of(rule("http://a.example", "GET"))));
        svc.setProperties(new TableServiceProperties()
            .setCorsRules(List.of(rule("http://b.example", "POST").setMaxAgeInSeconds(9))));
        TableServiceProperties p = svc.getProperties();
        assertEquals(List.of(true, true, false), List.of(p.getLogging().isReadLogged(),
            p.getLogging().isWriteLogged(), p.getLogging().isDeleteLogged()));
        assertEquals(3, p.getHourMetrics().getTableServiceRetentionPolicy().getDaysToRetain());
        assertEquals(List.of("http://b.example:9"), cors(p).stream()
            .map(r -> r.getAllowedOrigins() + ":" + r.getMaxAgeInSeconds()).collect(Collectors.toList()));

        svc.setProperties(new TableServiceProperties().setLogging(new TableServiceLogging().setAnalyticsVersion("1.0")
            .setReadLogged(false).setWriteLogged(false).setDeleteLogged(true).setRetentionPolicy(retention(false, null))));
        p = svc.getProperties();
        assertEquals(List.of(false, true), List.of(p.getLogging().isReadLogged(), p.getLogging().isDeleteLogged()));
        assertEquals(3, p.getHourMetrics().getTableServiceRetentionPolicy().getDaysToRetain());
        assertEquals(List.of("http://b.example"), cors(p).stream().map(TableServiceCorsRule::getAllowedOrigins)
            .collect(Collectors.toList()));

        svc.setProperties(new TableServiceProperties().setCorsRules(List.of()));
        assertEquals(List.of(), cors(svc.getProperties()));
    }

    @Test
    void sixCorsRulesAre400InvalidXmlDocumentAndChangeNothing() {
        List<TableServiceCorsRule> five = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            five.add(rule("http://o" + i + ".example", "GET"));
        }
        svc.setProperties(new TableServiceProperties().setCorsRules(five));
        List<TableServiceCorsRule> six = new ArrayList<>(five);
        six.add(rule("http://o5.example", "GET"));
        expectHttpError(400, "InvalidXmlDocument",
            () -> svc.setProperties(new TableServiceProperties().setCorsRules(six)));
        assertEquals(five.stream().map(TableServiceCorsRule::getAllowedOrigins).collect(Collectors.toList()),
            cors(svc.getProperties()).stream().map(TableServiceCorsRule::getAllowedOrigins)
                .collect(Collectors.toList()));
        svc.setProperties(new TableServiceProperties().setCorsRules(List.of()));
    }

    @Test
    void aRetentionOutsideOneTo365DaysIs400() {
        expectHttpError(400, "InvalidXmlDocument", () -> svc.setProperties(new TableServiceProperties()
            .setHourMetrics(new TableServiceMetrics().setVersion("1.0").setEnabled(true).setIncludeApis(true)
                .setRetentionPolicy(retention(true, 366)))));
    }

    private static void assertLiveAndSyncedNow(TableServiceStatistics stats) {
        assertNotNull(stats.getGeoReplication());
        assertEquals(TableServiceGeoReplicationStatus.LIVE, stats.getGeoReplication().getStatus());
        OffsetDateTime synced = stats.getGeoReplication().getLastSyncTime();
        assertNotNull(synced, "LastSyncTime is reported");
        assertTrue(Duration.between(synced, OffsetDateTime.now()).abs().toSeconds() < 60, "LastSyncTime " + synced);
    }

    @Test
    void getStatisticsOnTheSecondaryEndpointReportsLive() {
        // The Java SDK sends statistics to the endpoint it is given: point it at the
        // -secondary account, as a real read-access geo-redundant account's secondary host.
        Aztable.Recorder rec = new Aztable.Recorder();
        TableServiceClient secondary = new TableServiceClientBuilder().endpoint(endpoint + "-secondary")
            .credential(Aztable.credential()).retryOptions(Aztable.noRetries()).addPolicy(rec).buildClient();
        TableServiceStatistics stats = secondary.getStatistics();
        assertEquals("/" + Aztable.ACCOUNT_NAME + "-secondary", URI.create(rec.last().url()).getPath());
        assertLiveAndSyncedNow(stats);
        // the secondary serves reads and refuses writes, as a real secondary does
        assertNotNull(secondary.getProperties().getLogging());
        expectHttpError(403, "InsufficientAccountPermissions",
            () -> secondary.setProperties(new TableServiceProperties().setCorsRules(List.of())));
        Aztable.expectError(403, "InsufficientAccountPermissions",
            () -> secondary.createTable(Aztable.uniqueTableName("sec")));
    }

    @Test
    void getStatisticsOnThePrimaryEndpointReportsLive() {
        Aztable.Recorder rec = new Aztable.Recorder();
        TableServiceClient primary = new TableServiceClientBuilder().endpoint(endpoint).credential(Aztable.credential())
            .retryOptions(Aztable.noRetries()).addPolicy(rec).buildClient();
        assertLiveAndSyncedNow(primary.getStatisticsWithResponse(null, Context.NONE).getValue());
        assertEquals("/" + Aztable.ACCOUNT_NAME, URI.create(rec.last().url()).getPath());
    }
}
