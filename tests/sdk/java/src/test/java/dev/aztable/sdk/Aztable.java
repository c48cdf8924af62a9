package dev.aztable.sdk;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import com.azure.core.credential.AzureNamedKeyCredential;
import com.azure.core.http.HttpPipelineCallContext;
import com.azure.core.http.HttpPipelineNextPolicy;
import com.azure.core.http.HttpResponse;
import com.azure.core.http.policy.FixedDelayOptions;
import com.azure.core.http.policy.HttpPipelinePolicy;
import com.azure.core.http.policy.RetryOptions;
import com.azure.core.exception.HttpResponseException;
import com.azure.data.tables.TableAsyncClient;
import com.azure.data.tables.TableClient;
import com.azure.data.tables.TableClientBuilder;
import com.azure.data.tables.TableServiceAsyncClient;
import com.azure.data.tables.TableServiceClient;
import com.azure.data.tables.TableServiceClientBuilder;
import com.azure.data.tables.models.TableErrorCode;
import com.azure.data.tables.models.TableServiceException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.function.Executable;
import reactor.core.publisher.Mono;

/**
 * What every test class shares: the server under test (from AZTABLE_CONNECTION_STRING and
 * AZTABLE_ENDPOINT, exported by scripts/sdk-tests.sh), clients built with retries off so that
 * no 5xx is hidden, unique table names, and assertions on the service's error answers.
 */
final class Aztable {
    static final String WELL_KNOWN_ACCOUNT = "devstoreaccount1";
    static final String WELL_KNOWN_KEY =
        "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";

    static final String CONNECTION_STRING = connectionString();
    static final Map<String, String> PARTS = parseConnectionString(CONNECTION_STRING);
    static final String ACCOUNT_NAME = PARTS.get("AccountName");
    static final String ACCOUNT_KEY = PARTS.get("AccountKey");
    static final String ENDPOINT = endpoint();

    private Aztable() {
    }

    private static String connectionString() {
        String cs = System.getenv("AZTABLE_CONNECTION_STRING");
        if (cs == null || cs.isBlank()) {
            throw new IllegalStateException(
                "AZTABLE_CONNECTION_STRING is not set; run via scripts/sdk-tests.sh or export it");
        }
        return cs;
    }

    private static String endpoint() {
        String ep = System.getenv("AZTABLE_ENDPOINT");
        if (ep == null || ep.isBlank()) {
            ep = PARTS.get("TableEndpoint");
        }
        if (ep == null || ep.isBlank()) {
            throw new IllegalStateException(
                "no endpoint: set AZTABLE_ENDPOINT or TableEndpoint= in the connection string");
        }
        return ep.replaceAll("/+$", "");
    }

    static Map<String, String> parseConnectionString(String cs) {
        Map<String, String> parts = new LinkedHashMap<>();
        for (String segment : cs.split(";")) {
            String s = segment.trim();
            int eq = s.indexOf('=');
            if (eq > 0) {
                parts.put(s.substring(0, eq).trim(), s.substring(eq + 1).trim());
            }
        }
        return parts;
    }

    static String connectionStringFor(String endpoint) {
        return "DefaultEndpointsProtocol=http;AccountName=" + WELL_KNOWN_ACCOUNT + ";AccountKey=" + WELL_KNOWN_KEY
            + ";TableEndpoint=" + endpoint + ";";
    }

    /** Retries off: the SDK's default policy retries 408/429/5xx and would hide a server fault. */
    static RetryOptions noRetries() {
        return new RetryOptions(new FixedDelayOptions(0, Duration.ofMillis(1)));
    }

    static AzureNamedKeyCredential credential() {
        return new AzureNamedKeyCredential(ACCOUNT_NAME, ACCOUNT_KEY);
    }

    static TableServiceClientBuilder serviceBuilder() {
        return new TableServiceClientBuilder().connectionString(CONNECTION_STRING).retryOptions(noRetries());
    }

    static TableClientBuilder tableBuilder(String tableName) {
        return new TableClientBuilder().connectionString(CONNECTION_STRING).tableName(tableName)
            .retryOptions(noRetries());
    }

    static TableServiceClient service() {
        return serviceBuilder().buildClient();
    }

    static TableServiceAsyncClient asyncService() {
        return serviceBuilder().buildAsyncClient();
    }

    static TableClient table(String name) {
        return tableBuilder(name).buildClient();
    }

    static TableAsyncClient asyncTable(String name) {
        return tableBuilder(name).buildAsyncClient();
    }

    /** A table client on ENDPOINT authenticated by a SAS token only. */
    static TableClient sasTable(String name, String sas) {
        return new TableClientBuilder().endpoint(ENDPOINT).tableName(name).sasToken(sas)
            .retryOptions(noRetries()).buildClient();
    }

    /** A valid table name (letter first, alphanumeric) no other test uses. */
    static String uniqueTableName(String prefix) {
        return prefix + UUID.randomUUID().toString().replace("-", "").substring(0, 20);
    }

    /** A freshly created, uniquely named table, deleted on close. */
    static final class FreshTable implements AutoCloseable {
        final String name;
        final TableClient client;

        FreshTable(String prefix) {
            this.name = uniqueTableName(prefix);
            this.client = service().createTable(name);
        }

        @Override
        public void close() {
            service().deleteTable(name);
        }
    }

    static FreshTable freshTable() {
        return new FreshTable("java");
    }

    /** Runs {@code call}, expects a TableServiceException with this status and service error code. */
    static TableServiceException expectError(int status, String code, Executable call) {
        TableServiceException e = assertThrows(TableServiceException.class, call);
        assertEquals(status, e.getResponse().getStatusCode(), () -> "status: " + e.getMessage());
        if (code != null) {
            assertNotNull(e.getValue(), () -> "no service error parsed: " + e.getMessage());
            assertEquals(TableErrorCode.fromString(code), e.getValue().getErrorCode(),
                () -> "error code: " + e.getMessage());
            assertEquals(code, e.getResponse().getHeaderValue("x-ms-error-code"), "x-ms-error-code header");
        }
        return e;
    }

    /**
     * Like expectError, for the calls where the SDK lets its internal exception type out (the sync
     * listEntities, 12.5.9): an HttpResponseException with this status and x-ms-error-code.
     */
    static HttpResponseException expectHttpError(int status, String code, Executable call) {
        HttpResponseException e = assertThrows(HttpResponseException.class, call);
        assertEquals(status, e.getResponse().getStatusCode(), () -> "status: " + e.getMessage());
        assertEquals(code, e.getResponse().getHeaderValue("x-ms-error-code"), "x-ms-error-code header");
        return e;
    }

    static TableServiceException expectError(int status, TableErrorCode code, Executable call) {
        return expectError(status, code == null ? null : code.toString(), call);
    }

    /** A per-try pipeline policy that records each HTTP attempt (method, URL, status). */
    static final class Recorder implements HttpPipelinePolicy {
        record Attempt(String method, String url, int status, String errorCode) {
        }

        final List<Attempt> attempts = Collections.synchronizedList(new ArrayList<>());

        @Override
        public Mono<HttpResponse> process(HttpPipelineCallContext context, HttpPipelineNextPolicy next) {
            String method = context.getHttpRequest().getHttpMethod().toString();
            String url = context.getHttpRequest().getUrl().toString();
            return next.process().doOnNext(r -> attempts.add(
                new Attempt(method, url, r.getStatusCode(), r.getHeaderValue("x-ms-error-code"))));
        }

        Attempt last() {
            assertEquals(false, attempts.isEmpty(), "no HTTP response was recorded");
            return attempts.get(attempts.size() - 1);
        }
    }

    static String env(String name) {
        String v = System.getenv(name);
        return v == null || v.isBlank() ? null : v;
    }
}
