package dev.aztable.sdk;

import static dev.aztable.sdk.Aztable.expectError;
import static dev.aztable.sdk.Aztable.expectHttpError;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.azure.core.credential.AzureNamedKeyCredential;
import com.azure.core.exception.HttpResponseException;
import com.azure.core.http.policy.FixedDelayOptions;
import com.azure.core.http.policy.RetryOptions;
import com.azure.data.tables.TableClient;
import com.azure.data.tables.TableClientBuilder;
import com.azure.data.tables.TableServiceClient;
import com.azure.data.tables.TableServiceClientBuilder;
import com.azure.data.tables.models.TableEntity;
import java.time.Duration;
import java.util.Base64;
import org.junit.jupiter.api.Test;

/**
 * Authentication (connection strings, AzureNamedKeyCredential, wrong keys and accounts,
 * UseDevelopmentStorage=true) and the suite's own promise: clients with retries off.
 */
class AuthTest {
    @Test
    void azureNamedKeyCredentialOnTheEndpointWorks() {
        TableServiceClient svc = new TableServiceClientBuilder().endpoint(Aztable.ENDPOINT)
            .credential(Aztable.credential()).retryOptions(Aztable.noRetries()).buildClient();
        String name = Aztable.uniqueTableName("cred");
        TableClient t = svc.createTable(name);
        try {
            t.createEntity(new TableEntity("p", "r").addProperty("v", "cred"));
            assertEquals("cred", t.getEntity("p", "r").getProperty("v"));
        } finally {
            svc.deleteTable(name);
        }
    }

    @Test
    void aWrongAccountKeyIs403AuthenticationFailed() {
        String wrongKey = Base64.getEncoder().encodeToString(new byte[64]);
        TableServiceClient svc = new TableServiceClientBuilder().endpoint(Aztable.ENDPOINT)
            .credential(new AzureNamedKeyCredential(Aztable.ACCOUNT_NAME, wrongKey))
            .retryOptions(Aztable.noRetries()).buildClient();
        expectError(403, "AuthenticationFailed", () -> svc.createTable(Aztable.uniqueTableName("wrong")));
        expectHttpError(403, "AuthenticationFailed", () -> svc.getProperties());
    }

    @Test
    void aWrongAccountNameIsRejected() {
        TableClient t = new TableClientBuilder().endpoint(Aztable.ENDPOINT).tableName("whatever")
            .credential(new AzureNamedKeyCredential("nosuchaccount", Aztable.ACCOUNT_KEY))
            .retryOptions(Aztable.noRetries()).buildClient();
        expectError(403, "AuthenticationFailed", () -> t.getEntity("p", "r"));
    }

    @Test
    void useDevelopmentStorageConnectionStringWorks() {
        assumeTrue("1".equals(System.getenv("AZTABLE_DEFAULT_PORT_TEST")),
            "set AZTABLE_DEFAULT_PORT_TEST=1 with a server on 127.0.0.1:10002");
        TableServiceClient svc = new TableServiceClientBuilder().connectionString("UseDevelopmentStorage=true")
            .retryOptions(Aztable.noRetries()).buildClient();
        String name = Aztable.uniqueTableName("dev");
        svc.createTable(name);
        try {
            TableClient t = new TableClientBuilder().connectionString("UseDevelopmentStorage=true").tableName(name)
                .retryOptions(Aztable.noRetries()).buildClient();
            t.createEntity(new TableEntity("p", "r").addProperty("v", "dev"));
            assertEquals("dev", t.getEntity("p", "r").getProperty("v"));
        } finally {
            svc.deleteTable(name);
        }
    }

    @Test
    void clientsSendEachRequestOnceAndSee5xx() throws Exception {
        // A server of its own that answers every QueryEntities with 503 ServerBusy: the suite's
        // clients try once and throw; a client allowed two retries tries three times (so the
        // count is a real count of attempts).
        assumeTrue(OwnServer.binary() != null, "AZTABLE_BINARY not set: no server with --faultRate to start");
        try (OwnServer own = OwnServer.start("--faultRate", "1", "--faultOps", "QueryEntities")) {
            String cs = own.connectionString();
            new TableServiceClientBuilder().connectionString(cs).retryOptions(Aztable.noRetries()).buildClient()
                .createTable("faulty");
            Aztable.Recorder once = new Aztable.Recorder();
            TableClient noRetry = new TableClientBuilder().connectionString(cs).tableName("faulty")
                .retryOptions(Aztable.noRetries()).addPolicy(once).buildClient();
            HttpResponseException e = assertThrows(HttpResponseException.class,
                () -> noRetry.listEntities().stream().count());
            assertEquals(503, e.getResponse().getStatusCode());
            assertEquals("ServerBusy", e.getResponse().getHeaderValue("x-ms-error-code"));
            assertEquals(1, once.attempts.size(), once.attempts.toString());

            Aztable.Recorder thrice = new Aztable.Recorder();
            TableClient twoRetries = new TableClientBuilder().connectionString(cs).tableName("faulty")
                .retryOptions(new RetryOptions(new FixedDelayOptions(2, Duration.ofMillis(1)))).addPolicy(thrice)
                .buildClient();
            assertThrows(HttpResponseException.class, () -> twoRetries.listEntities().stream().count());
            assertEquals(3, thrice.attempts.size(), thrice.attempts.toString());
            thrice.attempts.forEach(a -> assertEquals(503, a.status()));
        }
    }
}
