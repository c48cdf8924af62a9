package dev.aztable.sdk;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.azure.core.http.rest.Response;
import com.azure.core.util.Context;
import com.azure.data.tables.TableClient;
import com.azure.data.tables.models.TableEntity;
import com.azure.data.tables.models.TableErrorCode;
import com.azure.data.tables.models.TableServiceException;
import com.azure.data.tables.models.TableTransactionAction;
import com.azure.data.tables.models.TableTransactionActionResponse;
import com.azure.data.tables.models.TableTransactionActionType;
import com.azure.data.tables.models.TableTransactionFailedException;
import com.azure.data.tables.models.TableTransactionResult;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Entity Group Transactions through submitTransaction: every action type, and failures. */
class BatchTest extends FreshTableTest {
    private static TableEntity e(String rk, Object... kv) {
        TableEntity e = new TableEntity("p", rk);
        for (int i = 0; i < kv.length; i += 2) {
            e.addProperty((String) kv[i], kv[i + 1]);
        }
        return e;
    }

    private static TableTransactionAction act(TableTransactionActionType type, TableEntity e) {
        return new TableTransactionAction(type, e);
    }

    private Set<String> rowKeys() {
        return client.listEntities().stream().map(TableEntity::getRowKey).collect(Collectors.toSet());
    }

    /** The TableTransactionFailedException a failing transaction throws (the SDK may wrap it). */
    static TableTransactionFailedException expectTransactionFailure(org.junit.jupiter.api.function.Executable call) {
        RuntimeException thrown = assertThrows(RuntimeException.class, call);
        Throwable t = thrown;
        while (t != null && !(t instanceof TableTransactionFailedException)) {
            t = t.getCause();
        }
        assertNotNull(t, () -> "expected a TableTransactionFailedException, got " + thrown);
        return (TableTransactionFailedException) t;
    }

    @Test
    void everyActionTypeInOneTransaction() {
        client.createEntity(e("upd-merge", "a", "1", "b", "2"));
        client.createEntity(e("upd-replace", "a", "1", "b", "2"));
        client.createEntity(e("ups-merge", "a", "1", "b", "2"));
        client.createEntity(e("ups-replace", "a", "1", "b", "2"));
        client.createEntity(e("delete"));
        client.createEntity(e("upd-etag", "v", 0));
        client.createEntity(e("del-etag"));
        TableEntity updEtag = client.getEntity("p", "upd-etag").addProperty("v", 1);
        TableEntity delEtag = client.getEntity("p", "del-etag");

        List<TableTransactionAction> actions = List.of(
            act(TableTransactionActionType.CREATE, e("create", "a", "new")),
            act(TableTransactionActionType.UPDATE_MERGE, e("upd-merge", "a", "10")),
            act(TableTransactionActionType.UPDATE_REPLACE, e("upd-replace", "c", "3")),
            act(TableTransactionActionType.UPSERT_MERGE, e("ups-merge", "a", "10")),
            act(TableTransactionActionType.UPSERT_REPLACE, e("ups-replace", "c", "3")),
            act(TableTransactionActionType.UPSERT_MERGE, e("ups-new", "x", "y")),
            act(TableTransactionActionType.DELETE, e("delete")),
            new TableTransactionAction(TableTransactionActionType.UPDATE_REPLACE, updEtag, true),
            new TableTransactionAction(TableTransactionActionType.DELETE, delEtag, true));
        Response<TableTransactionResult> r = client.submitTransactionWithResponse(actions, null, Context.NONE);
        assertEquals(202, r.getStatusCode());
        List<TableTransactionActionResponse> parts = r.getValue().getTransactionActionResponses();
        assertEquals(actions.size(), parts.size());
        assertEquals(List.of(204, 204, 204, 204, 204, 204, 204, 204, 204),
            parts.stream().map(TableTransactionActionResponse::getStatusCode).collect(Collectors.toList()));
        // (no check of the parts' ETag headers: 12.5.9's multipart reader copies the headers it
        // parsed in the wrong direction, so every TableTransactionActionResponse has none)
        assertEquals(204, r.getValue().getTableTransactionActionResponseByRowKey("create").getStatusCode());

        assertEquals(Set.of("create", "upd-merge", "upd-replace", "ups-merge", "ups-replace", "ups-new", "upd-etag"),
            rowKeys());
        assertEquals("new", client.getEntity("p", "create").getProperty("a"));
        TableEntity um = client.getEntity("p", "upd-merge");
        assertEquals("10", um.getProperty("a"));
        assertEquals("2", um.getProperty("b"));
        TableEntity ur = client.getEntity("p", "upd-replace");
        assertEquals("3", ur.getProperty("c"));
        assertFalse(ur.getProperties().containsKey("a"));
        assertEquals("2", client.getEntity("p", "ups-merge").getProperty("b"));
        assertFalse(client.getEntity("p", "ups-replace").getProperties().containsKey("b"));
        assertEquals(1, client.getEntity("p", "upd-etag").getProperty("v"));
    }

    static Stream<Arguments> failingThirdActions() {
        return Stream.of(
            Arguments.of("create of an existing row", TableTransactionActionType.CREATE, "exists",
                TableErrorCode.ENTITY_ALREADY_EXISTS),
            Arguments.of("update of a missing row", TableTransactionActionType.UPDATE_MERGE, "missing",
                TableErrorCode.RESOURCE_NOT_FOUND),
            Arguments.of("replace of a missing row", TableTransactionActionType.UPDATE_REPLACE, "missing",
                TableErrorCode.RESOURCE_NOT_FOUND),
            Arguments.of("delete of a missing row", TableTransactionActionType.DELETE, "missing",
                TableErrorCode.RESOURCE_NOT_FOUND));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("failingThirdActions")
    void aFailingThirdActionRollsBackTheWholeTransaction(String label, TableTransactionActionType type, String rk,
        TableErrorCode code) {
        // (the SDK hands out no status for the failed part: the exception's response is null)
        client.createEntity(e("exists", "v", "before"));
        client.createEntity(e("touched", "v", "before"));
        List<TableTransactionAction> actions = List.of(
            act(TableTransactionActionType.CREATE, e("a1")),
            act(TableTransactionActionType.UPSERT_REPLACE, e("touched", "v", "after")),
            act(type, e(rk, "v", "x")),
            act(TableTransactionActionType.CREATE, e("a4")));
        TableTransactionFailedException failed = expectTransactionFailure(() -> client.submitTransaction(actions));
        assertEquals(2, failed.getFailedTransactionActionIndex(), failed.getMessage());
        assertNotNull(failed.getValue(), failed.getMessage());
        assertEquals(code, failed.getValue().getErrorCode(), failed.getMessage());
        assertTrue(failed.getMessage().contains("rolled back"), failed.getMessage());
        assertEquals(Set.of("exists", "touched"), rowKeys(), "nothing of the transaction was applied");
        assertEquals("before", client.getEntity("p", "touched").getProperty("v"));
    }

    @Test
    void aStaleEtagInATransactionIs412AtItsIndex() {
        client.createEntity(e("r", "v", 0));
        TableEntity stale = client.getEntity("p", "r");
        client.updateEntity(e("r", "v", 1));
        List<TableTransactionAction> actions = List.of(
            act(TableTransactionActionType.CREATE, e("new")),
            new TableTransactionAction(TableTransactionActionType.DELETE, stale, true));
        TableTransactionFailedException failed = expectTransactionFailure(() -> client.submitTransaction(actions));
        assertEquals(1, failed.getFailedTransactionActionIndex());
        assertEquals(TableErrorCode.UPDATE_CONDITION_NOT_SATISFIED, failed.getValue().getErrorCode());
        assertEquals(Set.of("r"), rowKeys());
    }

    @Test
    void differentPartitionKeysAreRefused() {
        // The Java SDK sends them (the JS SDK refuses before sending); the service refuses all.
        List<TableTransactionAction> actions = List.of(
            act(TableTransactionActionType.CREATE, new TableEntity("p1", "r")),
            act(TableTransactionActionType.CREATE, new TableEntity("p2", "r")));
        TableTransactionFailedException failed = expectTransactionFailure(() -> client.submitTransaction(actions));
        assertEquals(TableErrorCode.COMMANDS_IN_BATCH_ACT_ON_DIFFERENT_PARTITIONS, failed.getValue().getErrorCode(),
            failed.getMessage());
        assertEquals(1, failed.getFailedTransactionActionIndex(), "the first operation in another partition");
        assertEquals(Set.of(), rowKeys());
    }

    @Test
    void theSameRowTwiceIs400InvalidDuplicateRow() {
        List<TableTransactionAction> actions = List.of(
            act(TableTransactionActionType.CREATE, e("r")),
            act(TableTransactionActionType.UPSERT_MERGE, e("r", "v", 1)));
        TableTransactionFailedException failed = expectTransactionFailure(() -> client.submitTransaction(actions));
        assertEquals(TableErrorCode.INVALID_DUPLICATE_ROW, failed.getValue().getErrorCode(), failed.getMessage());
        assertEquals(1, failed.getFailedTransactionActionIndex(), failed.getMessage());
        assertEquals(Set.of(), rowKeys());
    }

    @Test
    void oneHundredActionsSucceedAndOneHundredAndOneAreRefused() {
        List<TableTransactionAction> actions = new ArrayList<>();
        for (int i = 0; i < 100; i++) {
            actions.add(act(TableTransactionActionType.CREATE, e(String.format("r%03d", i), "i", i)));
        }
        assertEquals(100, client.submitTransaction(actions).getTransactionActionResponses().size());
        assertEquals(100, rowKeys().size());

        List<TableTransactionAction> tooMany = new ArrayList<>();
        for (int i = 0; i < 101; i++) {
            tooMany.add(act(TableTransactionActionType.UPSERT_MERGE, e(String.format("s%03d", i))));
        }
        TableTransactionFailedException failed = expectTransactionFailure(() -> client.submitTransaction(tooMany));
        assertEquals(TableErrorCode.INVALID_INPUT, failed.getValue().getErrorCode(), failed.getMessage());
        assertEquals(100, rowKeys().size(), "none of the 101 was applied");
    }

    @Test
    void anEmptyTransactionIsRefusedByTheSdk() {
        assertThrows(IllegalArgumentException.class, () -> client.submitTransaction(List.of()));
    }

    @Test
    void aTransactionOnAMissingTableIs404TableNotFound() {
        TableClient missing = Aztable.table(Aztable.uniqueTableName("nobatch"));
        RuntimeException thrown = assertThrows(RuntimeException.class, () -> missing.submitTransaction(
            List.of(act(TableTransactionActionType.CREATE, e("r")))));
        Throwable t = thrown;
        while (t != null && !(t instanceof TableServiceException)) {
            t = t.getCause();
        }
        assertNotNull(t, () -> "no TableServiceException: " + thrown);
        TableServiceException ex = (TableServiceException) t;
        assertEquals(TableErrorCode.TABLE_NOT_FOUND, ex.getValue().getErrorCode(), ex.getMessage());
    }
}
