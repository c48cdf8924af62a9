package dev.aztable.sdk;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.azure.core.exception.HttpResponseException;
import com.azure.core.http.rest.PagedResponse;
import com.azure.data.tables.TableAsyncClient;
import com.azure.data.tables.TableServiceAsyncClient;
import com.azure.data.tables.models.ListEntitiesOptions;
import com.azure.data.tables.models.ListTablesOptions;
import com.azure.data.tables.models.TableEntity;
import com.azure.data.tables.models.TableEntityUpdateMode;
import com.azure.data.tables.models.TableErrorCode;
import com.azure.data.tables.models.TableItem;
import com.azure.data.tables.models.TableServiceException;
import com.azure.data.tables.models.TableTransactionAction;
import com.azure.data.tables.models.TableTransactionActionType;
import com.azure.data.tables.models.TableTransactionFailedException;
import java.time.Duration;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;

/** The reactor clients (TableServiceAsyncClient, TableAsyncClient), blocked on in the tests. */
class AsyncClientTest {
    private static final Duration WAIT = Duration.ofSeconds(30);

    private final TableServiceAsyncClient svc = Aztable.asyncService();

    @Test
    void tableLifecycleAndEntityOperations() {
        String name = Aztable.uniqueTableName("async");
        TableAsyncClient client = svc.createTable(name).block(WAIT);
        assertNotNull(client);
        try {
            assertEquals(List.of(name), svc.listTables(new ListTablesOptions().setFilter("TableName eq '" + name + "'"))
                .map(TableItem::getName).collectList().block(WAIT));

            // 20 concurrent inserts
            Flux.range(0, 20).flatMap(i -> client.createEntity(new TableEntity("p", String.format("r%02d", i))
                .addProperty("i", i).addProperty("big", (long) i << 40)), 8).blockLast(WAIT);
            TableEntity got = client.getEntity("p", "r07").block(WAIT);
            assertEquals(7, got.getProperty("i"));
            assertEquals(7L << 40, got.getProperty("big"));

            client.updateEntityWithResponse(got.addProperty("i", 70), TableEntityUpdateMode.MERGE, true).block(WAIT);
            assertEquals(70, client.getEntity("p", "r07").block(WAIT).getProperty("i"));
            TableServiceException stale = assertThrows(TableServiceException.class,
                () -> client.updateEntityWithResponse(got, TableEntityUpdateMode.REPLACE, true).block(WAIT));
            assertEquals(412, stale.getResponse().getStatusCode());
            assertEquals(TableErrorCode.UPDATE_CONDITION_NOT_SATISFIED, stale.getValue().getErrorCode());
            client.upsertEntityWithResponse(new TableEntity("p", "r07").addProperty("only", true),
                TableEntityUpdateMode.REPLACE).block(WAIT);
            assertFalse(client.getEntity("p", "r07").block(WAIT).getProperties().containsKey("i"));

            List<PagedResponse<TableEntity>> pages = client.listEntities(new ListEntitiesOptions().setTop(6)
                .setFilter("PartitionKey eq 'p'")).byPage().collectList().block(WAIT);
            assertEquals(List.of(6, 6, 6, 2), pages.stream().map(p -> p.getValue().size()).collect(Collectors.toList()));
            List<String> resumed = client.listEntities(new ListEntitiesOptions().setTop(6))
                .byPage(pages.get(2).getContinuationToken()).flatMapIterable(PagedResponse::getValue)
                .map(TableEntity::getRowKey).collectList().block(WAIT);
            assertEquals(List.of("r18", "r19"), resumed);

            client.submitTransaction(IntStream.range(0, 10).mapToObj(i -> new TableTransactionAction(
                TableTransactionActionType.DELETE, new TableEntity("p", String.format("r%02d", i))))
                .collect(Collectors.toList())).block(WAIT);
            assertEquals(10L, client.listEntities().count().block(WAIT));

            TableServiceException missing = assertThrows(TableServiceException.class,
                () -> client.getEntity("p", "r00").block(WAIT));
            assertEquals(TableErrorCode.RESOURCE_NOT_FOUND, missing.getValue().getErrorCode());
            client.deleteEntity("p", "r10").block(WAIT);
            assertEquals(9L, client.listEntities().count().block(WAIT));
        } finally {
            svc.deleteTable(name).block(WAIT);
        }
        HttpResponseException gone = assertThrows(HttpResponseException.class,
            () -> client.listEntities().collectList().block(WAIT));
        assertEquals(404, gone.getResponse().getStatusCode());
        assertEquals("TableNotFound", gone.getResponse().getHeaderValue("x-ms-error-code"));
    }

    @Test
    void errorsArriveAsTableServiceExceptions() {
        String name = Aztable.uniqueTableName("asyncerr");
        svc.createTable(name).block(WAIT);
        try {
            TableServiceException dup = assertThrows(TableServiceException.class, () -> svc.createTable(name).block(WAIT));
            assertEquals(409, dup.getResponse().getStatusCode());
            assertEquals(TableErrorCode.TABLE_ALREADY_EXISTS, dup.getValue().getErrorCode());
            assertEquals(409, svc.createTableIfNotExistsWithResponse(name).block(WAIT).getStatusCode());

            TableAsyncClient client = Aztable.asyncTable(name);
            client.createEntity(new TableEntity("p", "r")).block(WAIT);
            TableServiceException exists = assertThrows(TableServiceException.class,
                () -> client.createEntity(new TableEntity("p", "r")).block(WAIT));
            assertEquals(TableErrorCode.ENTITY_ALREADY_EXISTS, exists.getValue().getErrorCode());

            RuntimeException tx = assertThrows(RuntimeException.class, () -> client.submitTransaction(List.of(
                new TableTransactionAction(TableTransactionActionType.CREATE, new TableEntity("p", "new")),
                new TableTransactionAction(TableTransactionActionType.CREATE, new TableEntity("p", "r"))))
                .block(WAIT));
            Throwable t = tx;
            while (t != null && !(t instanceof TableTransactionFailedException)) {
                t = t.getCause();
            }
            assertTrue(t instanceof TableTransactionFailedException, () -> "got " + tx);
            assertEquals(1, ((TableTransactionFailedException) t).getFailedTransactionActionIndex());
            assertEquals(TableErrorCode.ENTITY_ALREADY_EXISTS,
                ((TableTransactionFailedException) t).getValue().getErrorCode());
            assertEquals(1L, client.listEntities().count().block(WAIT));
        } finally {
            svc.deleteTable(name).block(WAIT);
        }
    }
}
