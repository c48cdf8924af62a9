package dev.aztable.sdk;

import static dev.aztable.sdk.Aztable.expectError;
import static dev.aztable.sdk.Aztable.service;
import static dev.aztable.sdk.Aztable.uniqueTableName;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;

import com.azure.core.http.rest.PagedResponse;
import com.azure.core.http.rest.Response;
import com.azure.core.util.Context;
import com.azure.data.tables.TableClient;
import com.azure.data.tables.TableServiceClient;
import com.azure.data.tables.models.ListTablesOptions;
import com.azure.data.tables.models.TableEntity;
import com.azure.data.tables.models.TableErrorCode;
import com.azure.data.tables.models.TableItem;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Create Table, Delete Table, Query Tables (filter, $top, NextTableName paging), if-not-exists. */
class TablesTest {
    private final TableServiceClient svc = service();

    private List<String> names(ListTablesOptions options) {
        return svc.listTables(options, null, Context.NONE).stream().map(TableItem::getName)
            .collect(Collectors.toList());
    }

    @Test
    void createTablePreservesTheNameAndListsIt() {
        String name = "Java" + uniqueTableName("Mixed");
        TableClient client = svc.createTable(name);
        try {
            assertEquals(name, client.getTableName());
            assertEquals(List.of(name), names(new ListTablesOptions().setFilter("TableName eq '" + name + "'")));
            client.createEntity(new TableEntity("p", "r"));
            assertEquals("r", client.getEntity("p", "r").getRowKey());
        } finally {
            svc.deleteTable(name);
        }
    }

    @Test
    void duplicateCreateTableIs409TableAlreadyExistsAlsoInAnotherCase() {
        String name = uniqueTableName("dup");
        svc.createTable(name);
        try {
            expectError(409, TableErrorCode.TABLE_ALREADY_EXISTS, () -> svc.createTable(name));
            expectError(409, TableErrorCode.TABLE_ALREADY_EXISTS,
                () -> svc.createTable(name.toUpperCase(Locale.ROOT)));
        } finally {
            svc.deleteTable(name);
        }
    }

    @Test
    void createTableIfNotExistsCreatesOnceAndKeepsTheData() {
        String name = uniqueTableName("ifne");
        Response<TableClient> first = svc.createTableIfNotExistsWithResponse(name, null, Context.NONE);
        try {
            assertEquals(204, first.getStatusCode());
            first.getValue().createEntity(new TableEntity("p", "r").addProperty("v", "kept"));
            Response<TableClient> second = svc.createTableIfNotExistsWithResponse(name, null, Context.NONE);
            assertEquals(409, second.getStatusCode(), "the service's answer to the second create");
            assertEquals(TableErrorCode.TABLE_ALREADY_EXISTS.toString(),
                second.getHeaders().getValue("x-ms-error-code"));
            assertNotNull(second.getValue(), "the SDK still hands out a client");
            assertEquals("kept", second.getValue().getEntity("p", "r").getProperty("v"));
        } finally {
            svc.deleteTable(name);
        }
    }

    @Test
    void tableClientCreateTableAndDeleteTable() {
        String name = uniqueTableName("tc");
        TableClient client = Aztable.table(name);
        TableItem item = client.createTable();
        assertEquals(name, item.getName());
        expectError(409, TableErrorCode.TABLE_ALREADY_EXISTS, client::createTable);
        client.deleteTable();
        assertEquals(List.of(), names(new ListTablesOptions().setFilter("TableName eq '" + name + "'")));
    }

    @Test
    void deleteTableRemovesTheTableAndItsEntities() {
        String name = uniqueTableName("del");
        TableClient client = svc.createTable(name);
        client.createEntity(new TableEntity("p", "r"));
        svc.deleteTable(name);
        expectError(404, TableErrorCode.TABLE_NOT_FOUND, () -> client.getEntity("p", "r"));
        // re-created under the same name, it is empty
        svc.createTable(name);
        try {
            assertEquals(0, client.listEntities().stream().count());
        } finally {
            svc.deleteTable(name);
        }
    }

    @Test
    void deletingAMissingTableAnswers404ResourceNotFound() {
        // The SDK swallows this 404 and hands the response back.
        Response<Void> r = svc.deleteTableWithResponse(uniqueTableName("missing"), null, Context.NONE);
        assertEquals(404, r.getStatusCode());
        assertEquals("ResourceNotFound", r.getHeaders().getValue("x-ms-error-code"));
    }

    @Test
    void listTablesWithFilterTopAndContinuation() {
        String prefix = uniqueTableName("lst").substring(0, 16);
        List<String> created = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            String name = prefix + "t" + i;
            svc.createTable(name);
            created.add(name);
        }
        try {
            ListTablesOptions options = new ListTablesOptions()
                .setFilter("TableName ge '" + prefix + "' and TableName lt '" + prefix + "u'").setTop(2);
            List<PagedResponse<TableItem>> pages = new ArrayList<>();
            svc.listTables(options, null, Context.NONE).iterableByPage().forEach(pages::add);
            assertEquals(List.of(2, 2, 1), pages.stream().map(p -> p.getValue().size()).collect(Collectors.toList()));
            assertNotNull(pages.get(0).getContinuationToken());
            assertNotNull(pages.get(1).getContinuationToken());
            assertNull(pages.get(2).getContinuationToken());
            List<String> all = pages.stream().flatMap(p -> p.getValue().stream()).map(TableItem::getName)
                .collect(Collectors.toList());
            assertEquals(created, all, "every table once, in name order");

            // resuming from the first page's token yields exactly the rest
            List<String> rest = new ArrayList<>();
            svc.listTables(options, null, Context.NONE).iterableByPage(pages.get(0).getContinuationToken())
                .forEach(p -> p.getValue().forEach(t -> rest.add(t.getName())));
            assertEquals(created.subList(2, 5), rest);

            // without $top, one page
            assertEquals(created, names(new ListTablesOptions()
                .setFilter("TableName ge '" + prefix + "' and TableName lt '" + prefix + "u'")));
            // a filter that matches one of them
            assertEquals(List.of(created.get(3)),
                names(new ListTablesOptions().setFilter("TableName eq '" + created.get(3) + "'")));
        } finally {
            created.forEach(svc::deleteTable);
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"1abc", "ab-cd", "tables"})
    void invalidTableNamesAre400(String name) {
        // digits first and dashes are not allowed; "tables" is reserved
        expectError(400, "InvalidResourceName", () -> svc.createTable(name));
    }

    @Test
    void tooShortOrTooLongTableNamesAre400() {
        expectError(400, (String) null, () -> svc.createTable("ab"));
        expectError(400, (String) null, () -> svc.createTable("a".repeat(64)));
    }

    @Test
    void entityOperationsOnAMissingTableAre404TableNotFound() {
        TableClient client = Aztable.table(uniqueTableName("nope"));
        expectError(404, TableErrorCode.TABLE_NOT_FOUND, () -> client.createEntity(new TableEntity("p", "r")));
        expectError(404, TableErrorCode.TABLE_NOT_FOUND, () -> client.getEntity("p", "r"));
        // the sync listEntities throws the SDK's internal TableServiceJsonErrorException here
        Aztable.expectHttpError(404, "TableNotFound", () -> client.listEntities().stream().count());
        expectError(404, TableErrorCode.TABLE_NOT_FOUND, () -> client.upsertEntity(new TableEntity("p", "r")));
        assertFalse(svc.listTables(new ListTablesOptions().setFilter("TableName eq '" + client.getTableName() + "'"),
            null, Context.NONE).stream().findAny().isPresent(), "nothing was created");
    }
}
