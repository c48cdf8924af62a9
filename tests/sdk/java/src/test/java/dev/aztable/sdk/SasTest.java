package dev.aztable.sdk;

import static dev.aztable.sdk.Aztable.expectError;
import static dev.aztable.sdk.Aztable.expectHttpError;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.azure.core.credential.AzureSasCredential;
import com.azure.core.util.Context;
import com.azure.data.tables.TableClientBuilder;
import com.azure.data.tables.TableClient;
import com.azure.data.tables.TableServiceClient;
import com.azure.data.tables.TableServiceClientBuilder;
import com.azure.data.tables.models.ListTablesOptions;
import com.azure.data.tables.models.TableEntity;
import com.azure.data.tables.models.TableEntityUpdateMode;
import com.azure.data.tables.models.TableErrorCode;
import com.azure.data.tables.models.TableItem;
import com.azure.data.tables.models.TableTransactionAction;
import com.azure.data.tables.models.TableTransactionActionType;
import com.azure.data.tables.sas.TableAccountSasPermission;
import com.azure.data.tables.sas.TableAccountSasResourceType;
import com.azure.data.tables.sas.TableAccountSasService;
import com.azure.data.tables.sas.TableAccountSasSignatureValues;
import com.azure.data.tables.sas.TableSasIpRange;
import com.azure.data.tables.sas.TableSasPermission;
import com.azure.data.tables.sas.TableSasProtocol;
import com.azure.data.tables.sas.TableSasSignatureValues;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Shared access signatures made by the SDK: table SAS from TableSasSignatureValues (permissions,
 * validity window, IP range, protocol, key ranges) and account SAS from
 * TableAccountSasSignatureValues, each used by a client built with sasToken().
 */
class SasTest {
    private static final String MISMATCH = "AuthorizationPermissionMismatch";

    private Aztable.FreshTable table;
    private TableClient owner;

    @BeforeEach
    void setUp() {
        table = Aztable.freshTable();
        owner = table.client;
        owner.createEntity(new TableEntity("p", "r").addProperty("v", 1));
    }

    @AfterEach
    void tearDown() {
        table.close();
    }

    private static OffsetDateTime inAnHour() {
        return OffsetDateTime.now(ZoneOffset.UTC).plusHours(1);
    }

    private String tableSas(String permissions) {
        return owner.generateSas(new TableSasSignatureValues(inAnHour(), TableSasPermission.parse(permissions)));
    }

    private TableClient sasClient(String sas) {
        return Aztable.sasTable(table.name, sas);
    }

    private static TableServiceClient sasService(String sas) {
        return new TableServiceClientBuilder().endpoint(Aztable.ENDPOINT).sasToken(sas)
            .retryOptions(Aztable.noRetries()).buildClient();
    }

    @Test
    void raudAllowsEveryEntityOperation() {
        String sas = tableSas("raud");
        assertTrue(sas.contains("tn=" + table.name), sas);
        assertTrue(sas.contains("sp=raud"), sas);
        TableClient c = sasClient(sas);
        c.createEntity(new TableEntity("p", "n").addProperty("v", 2));
        assertEquals(2, c.getEntity("p", "n").getProperty("v"));
        c.updateEntity(new TableEntity("p", "n").addProperty("v", 3), TableEntityUpdateMode.REPLACE);
        c.upsertEntity(new TableEntity("p", "u").addProperty("v", 4));
        c.submitTransaction(List.of(new TableTransactionAction(TableTransactionActionType.UPSERT_MERGE,
            new TableEntity("p", "b").addProperty("v", 5))));
        assertEquals(Set.of("r", "n", "u", "b"),
            c.listEntities().stream().map(TableEntity::getRowKey).collect(Collectors.toSet()));
        c.deleteEntity("p", "n");
        assertEquals(3, owner.listEntities().stream().count());
    }

    @Test
    void theSasWorksAsAzureSasCredentialAndInAConnectionString() {
        String sas = tableSas("r");
        TableClient viaCredential = new TableClientBuilder().endpoint(Aztable.ENDPOINT).tableName(table.name)
            .credential(new AzureSasCredential(sas)).retryOptions(Aztable.noRetries()).buildClient();
        assertEquals(1, viaCredential.getEntity("p", "r").getProperty("v"));
        TableClient viaConnectionString = new TableClientBuilder()
            .connectionString("TableEndpoint=" + Aztable.ENDPOINT + ";SharedAccessSignature=" + sas)
            .tableName(table.name).retryOptions(Aztable.noRetries()).buildClient();
        assertEquals(1, viaConnectionString.getEntity("p", "r").getProperty("v"));
        expectError(403, MISMATCH, () -> viaConnectionString.createEntity(new TableEntity("p", "n")));
    }

    @Test
    void aMissingPermissionIs403AuthorizationPermissionMismatch() {
        TableClient reader = sasClient(tableSas("r"));
        assertEquals(1, reader.getEntity("p", "r").getProperty("v"));
        expectError(403, MISMATCH, () -> reader.createEntity(new TableEntity("p", "n")));
        expectError(403, MISMATCH, () -> reader.updateEntity(new TableEntity("p", "r").addProperty("v", 9)));
        expectError(403, MISMATCH, () -> reader.deleteEntity("p", "r"));
        TableClient adder = sasClient(tableSas("a"));
        expectError(403, MISMATCH, () -> adder.getEntity("p", "r"));
        expectHttpError(403, MISMATCH, () -> adder.listEntities().stream().count());
        adder.createEntity(new TableEntity("p", "added"));
        // an upsert needs both a and u
        expectError(403, MISMATCH, () -> adder.upsertEntity(new TableEntity("p", "up")));
        expectError(403, MISMATCH, () -> sasClient(tableSas("u")).upsertEntity(new TableEntity("p", "up")));
        sasClient(tableSas("au")).upsertEntity(new TableEntity("p", "up"));
        assertEquals(3, owner.listEntities().stream().count());
        assertEquals(1, owner.getEntity("p", "r").getProperty("v"), "nothing was changed by the refused calls");
    }

    @Test
    void expiredNotYetValidAndTamperedTokensAre403AuthenticationFailed() {
        OffsetDateTime now = OffsetDateTime.now(ZoneOffset.UTC);
        String expired = owner.generateSas(new TableSasSignatureValues(now.minusMinutes(5),
            TableSasPermission.parse("r")).setStartTime(now.minusHours(1)));
        expectError(403, "AuthenticationFailed", () -> sasClient(expired).getEntity("p", "r"));
        String early = owner.generateSas(new TableSasSignatureValues(now.plusHours(2),
            TableSasPermission.parse("r")).setStartTime(now.plusHours(1)));
        expectError(403, "AuthenticationFailed", () -> sasClient(early).getEntity("p", "r"));
        String widened = tableSas("r").replace("sp=r", "sp=raud");
        expectError(403, "AuthenticationFailed", () -> sasClient(widened).deleteEntity("p", "r"));
        assertEquals(1, owner.getEntity("p", "r").getProperty("v"));
    }

    @Test
    void anotherTableAndTableOperationsAre403AuthorizationFailure() {
        String sas = tableSas("raud");
        try (Aztable.FreshTable other = Aztable.freshTable()) {
            TableClient wrong = Aztable.sasTable(other.name, sas);
            expectError(403, "AuthorizationFailure", () -> wrong.getEntity("p", "r"));
            expectError(403, "AuthorizationFailure", () -> wrong.createEntity(new TableEntity("p", "x")));
            assertEquals(0, other.client.listEntities().stream().count());
        }
        TableServiceClient svc = sasService(sas);
        expectError(403, "AuthorizationFailure", () -> svc.createTable(Aztable.uniqueTableName("sasno")));
        expectHttpError(403, "AuthorizationFailure", () -> svc.listTables().stream().count());
        // the XML APIs throw the SDK's internal TableServiceErrorException
        expectHttpError(403, "AuthorizationFailure", () -> sasClient(sas).getAccessPolicies());
    }

    @Test
    void anIpRangeWithoutTheClientIs403AuthorizationSourceIpMismatch() {
        String outside = owner.generateSas(new TableSasSignatureValues(inAnHour(), TableSasPermission.parse("r"))
            .setSasIpRange(TableSasIpRange.parse("203.0.113.1-203.0.113.9")));
        expectError(403, "AuthorizationSourceIPMismatch", () -> sasClient(outside).getEntity("p", "r"));
        String inside = owner.generateSas(new TableSasSignatureValues(inAnHour(), TableSasPermission.parse("r"))
            .setSasIpRange(TableSasIpRange.parse("127.0.0.0-127.255.255.255")));
        assertEquals(1, sasClient(inside).getEntity("p", "r").getProperty("v"));
    }

    @Test
    void httpsOnlyOverHttpIs403AuthorizationProtocolMismatch() {
        String https = owner.generateSas(new TableSasSignatureValues(inAnHour(), TableSasPermission.parse("r"))
            .setProtocol(TableSasProtocol.HTTPS_ONLY));
        assertTrue(https.contains("spr=https"), https);
        expectError(403, "AuthorizationProtocolMismatch", () -> sasClient(https).getEntity("p", "r"));
        String both = owner.generateSas(new TableSasSignatureValues(inAnHour(), TableSasPermission.parse("r"))
            .setProtocol(TableSasProtocol.HTTPS_HTTP));
        assertEquals(1, sasClient(both).getEntity("p", "r").getProperty("v"));
    }

    @Test
    void keyRangesLimitQueriesPointReadsWritesAndTransactions() {
        for (String pk : List.of("a", "b", "c")) {
            for (String rk : List.of("1", "2", "3")) {
                owner.createEntity(new TableEntity(pk, rk));
            }
        }
        String sas = owner.generateSas(new TableSasSignatureValues(inAnHour(), TableSasPermission.parse("raud"))
            .setStartPartitionKey("a").setStartRowKey("2").setEndPartitionKey("b").setEndRowKey("2"));
        TableClient c = sasClient(sas);
        assertEquals(List.of("a/2", "a/3", "b/1", "b/2"), c.listEntities().stream()
            .map(e -> e.getPartitionKey() + "/" + e.getRowKey()).collect(Collectors.toList()));
        assertEquals("b", c.getEntity("b", "1").getPartitionKey());
        expectError(404, TableErrorCode.RESOURCE_NOT_FOUND, () -> c.getEntity("a", "1"));
        expectError(404, TableErrorCode.RESOURCE_NOT_FOUND, () -> c.getEntity("c", "1"));
        expectError(403, "AuthorizationFailure", () -> c.createEntity(new TableEntity("c", "9")));
        expectError(403, "AuthorizationFailure", () -> c.upsertEntity(new TableEntity("a", "0")));
        c.upsertEntity(new TableEntity("a", "25").addProperty("in", true));
        RuntimeException refused = org.junit.jupiter.api.Assertions.assertThrows(RuntimeException.class,
            () -> c.submitTransaction(List.of(
                new TableTransactionAction(TableTransactionActionType.CREATE, new TableEntity("b", "15")),
                new TableTransactionAction(TableTransactionActionType.CREATE, new TableEntity("b", "5")))));
        assertFalse(owner.listEntities().stream().anyMatch(e -> e.getRowKey().equals("15")),
            "the in-range operation of a refused transaction was not applied: " + refused);
        assertEquals(11, owner.listEntities().stream().count(), "9 + p/r + the in-range upsert a/25");
    }

    private static String accountSas(String resourceTypes, String permissions) {
        return Aztable.service().generateAccountSas(new TableAccountSasSignatureValues(inAnHour(),
            TableAccountSasPermission.parse(permissions), TableAccountSasService.parse("t"),
            TableAccountSasResourceType.parse(resourceTypes)));
    }

    @Test
    void accountSasResourceTypesAndPermissions() {
        String all = accountSas("sco", "rwdlacu");
        assertTrue(all.contains("ss=t"), all);
        TableServiceClient svc = sasService(all);
        String name = Aztable.uniqueTableName("acct");
        TableClient created = svc.createTable(name);
        try {
            created.createEntity(new TableEntity("p", "r").addProperty("v", "acct"));
            assertEquals("acct", created.getEntity("p", "r").getProperty("v"));
            assertEquals(List.of(name), svc.listTables(new ListTablesOptions().setFilter("TableName eq '" + name + "'"),
                null, Context.NONE).stream().map(TableItem::getName).collect(Collectors.toList()));

            // resource type c without o: tables yes, entities no
            TableClient containerOnly = Aztable.sasTable(name, accountSas("c", "rwdlacu"));
            expectError(403, "AuthorizationResourceTypeMismatch", () -> containerOnly.getEntity("p", "r"));
            // o without c: entities yes, tables no
            TableServiceClient objectsOnly = sasService(accountSas("o", "rwdlacu"));
            expectError(403, "AuthorizationResourceTypeMismatch",
                () -> objectsOnly.createTable(Aztable.uniqueTableName("acctno")));
            assertEquals("acct", Aztable.sasTable(name, accountSas("o", "r")).getEntity("p", "r").getProperty("v"));
            // read-only: no writes
            TableClient reader = Aztable.sasTable(name, accountSas("sco", "rl"));
            expectError(403, MISMATCH, () -> reader.createEntity(new TableEntity("p", "n")));
            expectError(403, MISMATCH, () -> sasService(accountSas("sco", "rl")).deleteTable(name));
        } finally {
            svc.deleteTable(name);
        }
        assertFalse(Aztable.service().listTables(new ListTablesOptions().setFilter("TableName eq '" + name + "'"),
            null, Context.NONE).stream().findAny().isPresent(), "the account SAS deleted the table");
    }

    @Test
    void accountSasWithoutTheTableServiceIs403AuthorizationServiceMismatch() {
        String blobOnly = Aztable.service().generateAccountSas(new TableAccountSasSignatureValues(inAnHour(),
            TableAccountSasPermission.parse("rl"), TableAccountSasService.parse("b"),
            TableAccountSasResourceType.parse("sco")));
        expectError(403, "AuthorizationServiceMismatch", () -> sasClient(blobOnly).getEntity("p", "r"));
    }

    @Test
    void accountSasValidityWindowAndIpRange() {
        OffsetDateTime now = OffsetDateTime.now(ZoneOffset.UTC);
        String expired = Aztable.service().generateAccountSas(new TableAccountSasSignatureValues(now.minusMinutes(1),
            TableAccountSasPermission.parse("rl"), TableAccountSasService.parse("t"),
            TableAccountSasResourceType.parse("sco")).setStartTime(now.minusHours(1)));
        expectError(403, "AuthenticationFailed", () -> sasClient(expired).getEntity("p", "r"));
        String outside = Aztable.service().generateAccountSas(new TableAccountSasSignatureValues(inAnHour(),
            TableAccountSasPermission.parse("rl"), TableAccountSasService.parse("t"),
            TableAccountSasResourceType.parse("sco")).setSasIpRange(TableSasIpRange.parse("198.51.100.7")));
        expectError(403, "AuthorizationSourceIPMismatch", () -> sasClient(outside).getEntity("p", "r"));
        String https = Aztable.service().generateAccountSas(new TableAccountSasSignatureValues(inAnHour(),
            TableAccountSasPermission.parse("rl"), TableAccountSasService.parse("t"),
            TableAccountSasResourceType.parse("sco")).setProtocol(TableSasProtocol.HTTPS_ONLY));
        expectError(403, "AuthorizationProtocolMismatch", () -> sasClient(https).getEntity("p", "r"));
    }
}
