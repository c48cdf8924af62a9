package dev.aztable.sdk;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.azure.core.http.rest.PagedIterable;
import com.azure.core.http.rest.PagedResponse;
import com.azure.core.util.Context;
import com.azure.data.tables.TableClient;
import com.azure.data.tables.models.ListEntitiesOptions;
import com.azure.data.tables.models.TableEntity;
import com.azure.data.tables.models.TableErrorCode;
import com.azure.data.tables.models.TableTransactionAction;
import com.azure.data.tables.models.TableTransactionActionType;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * Query Entities through ListEntitiesOptions ($filter, $select, $top) and paging by
 * iterableByPage with the SDK's "NextPartitionKey;NextRowKey" continuation tokens, over a
 * table of 1,230 entities in 3 partitions (more than one 1,000-entity page).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class QueryTest {
    private static final String[] PARTITIONS = {"pa", "pb", "pc"};
    private static final int ROWS_PER_PARTITION = 410;

    private Aztable.FreshTable table;
    private TableClient client;
    private final List<String> allKeys = new ArrayList<>();

    @BeforeAll
    void load() {
        table = Aztable.freshTable();
        client = table.client;
        for (String pk : PARTITIONS) {
            List<TableTransactionAction> batch = new ArrayList<>();
            for (int i = 0; i < ROWS_PER_PARTITION; i++) {
                String rk = String.format("r%04d", i);
                TableEntity e = new TableEntity(pk, rk).addProperty("n", i).addProperty("big", (long) i * 1_000_000_000L)
                    .addProperty("even", i % 2 == 0).addProperty("tag", "t" + (i % 10));
                batch.add(new TableTransactionAction(TableTransactionActionType.CREATE, e));
                allKeys.add(pk + "/" + rk);
                if (batch.size() == 100) {
                    client.submitTransaction(batch);
                    batch = new ArrayList<>();
                }
            }
            if (!batch.isEmpty()) {
                client.submitTransaction(batch);
            }
        }
    }

    @AfterAll
    void drop() {
        table.close();
    }

    private List<PagedResponse<TableEntity>> pages(ListEntitiesOptions options) {
        List<PagedResponse<TableEntity>> pages = new ArrayList<>();
        client.listEntities(options, null, Context.NONE).iterableByPage().forEach(pages::add);
        return pages;
    }

    private static List<String> keys(List<PagedResponse<TableEntity>> pages) {
        return pages.stream().flatMap(p -> p.getValue().stream()).map(e -> e.getPartitionKey() + "/" + e.getRowKey())
            .collect(Collectors.toList());
    }

    private List<String> keys(ListEntitiesOptions options) {
        return client.listEntities(options, null, Context.NONE).stream()
            .map(e -> e.getPartitionKey() + "/" + e.getRowKey()).collect(Collectors.toList());
    }

    @Test
    void everyEntityInKeyOrderInPagesOfAtMost1000() {
        List<PagedResponse<TableEntity>> pages = pages(new ListEntitiesOptions());
        assertTrue(pages.size() >= 2, "1,230 entities take more than one page");
        for (PagedResponse<TableEntity> p : pages) {
            assertTrue(p.getValue().size() <= 1000, "page of " + p.getValue().size());
        }
        for (int i = 0; i < pages.size() - 1; i++) {
            String token = pages.get(i).getContinuationToken();
            assertNotNull(token, "page " + i + " has a continuation");
            assertTrue(token.contains(";"), "the SDK's token is NextPartitionKey;NextRowKey: " + token);
        }
        assertNull(pages.get(pages.size() - 1).getContinuationToken());
        assertEquals(allKeys, keys(pages), "every entity once, in (PartitionKey, RowKey) order");
    }

    @Test
    void topCapsEachPageAcrossPartitions() {
        List<PagedResponse<TableEntity>> pages = pages(new ListEntitiesOptions().setTop(100)
            .setFilter("n ge 380"));
        List<String> expected = allKeys.stream().filter(k -> Integer.parseInt(k.substring(4)) >= 380)
            .collect(Collectors.toList());
        assertEquals(90, expected.size());
        for (PagedResponse<TableEntity> p : pages) {
            assertTrue(p.getValue().size() <= 100);
        }
        assertEquals(expected, keys(pages));

        List<PagedResponse<TableEntity>> small = pages(new ListEntitiesOptions().setTop(7)
            .setFilter("RowKey ge 'r0405'"));
        List<String> got = keys(small);
        assertEquals(15, got.size(), "5 rows in each of 3 partitions");
        assertTrue(small.size() >= 3, "pages of at most 7: " + small.size());
        small.forEach(p -> assertTrue(p.getValue().size() <= 7));
        assertEquals(List.of("pa/r0405", "pa/r0406"), got.subList(0, 2));
        assertEquals("pc/r0409", got.get(14));
    }

    @Test
    void resumingFromAContinuationTokenYieldsExactlyTheRemainder() {
        ListEntitiesOptions options = new ListEntitiesOptions().setTop(40).setFilter("tag eq 't3'");
        PagedIterable<TableEntity> iterable = client.listEntities(options, null, Context.NONE);
        List<String> all = new ArrayList<>();
        List<String> tokens = new ArrayList<>();
        List<Integer> seenAfter = new ArrayList<>();
        for (PagedResponse<TableEntity> p : iterable.iterableByPage()) {
            p.getValue().forEach(e -> all.add(e.getPartitionKey() + "/" + e.getRowKey()));
            tokens.add(p.getContinuationToken());
            seenAfter.add(all.size());
        }
        assertEquals(123, all.size());
        assertTrue(tokens.size() >= 4, "pages of at most 40: " + tokens.size());
        // from each page's token, the rest of the result
        int seen = 0;
        for (int i = 0; i < tokens.size() - 1; i++) {
            List<String> rest = new ArrayList<>();
            client.listEntities(options, null, Context.NONE).iterableByPage(tokens.get(i))
                .forEach(p -> p.getValue().forEach(e -> rest.add(e.getPartitionKey() + "/" + e.getRowKey())));
            assertEquals(all.subList(seenAfter.get(i), all.size()), rest, "after page " + i);
            seen++;
        }
        // the tokens are the service's opaque key markers, passed back unchanged
        assertTrue(tokens.get(0).matches("1!\\d+!\\S+;1!\\d+!\\S+"), tokens.get(0));
        assertEquals(tokens.size() - 1, seen);
    }

    @Test
    void singlePartitionFilterPagesInRowKeyOrder() {
        List<String> got = keys(pages(new ListEntitiesOptions().setFilter("PartitionKey eq 'pb'").setTop(128)));
        List<String> expected = allKeys.stream().filter(k -> k.startsWith("pb/")).collect(Collectors.toList());
        assertEquals(expected, got);
    }

    @Test
    void filtersOnEveryKindOfProperty() {
        assertEquals(List.of("pa/r0007", "pb/r0007", "pc/r0007"), keys(new ListEntitiesOptions().setFilter("n eq 7")));
        assertEquals(List.of("pb/r0002"),
            keys(new ListEntitiesOptions().setFilter("PartitionKey eq 'pb' and big eq 2000000000L")));
        assertEquals(3 * 205, keys(new ListEntitiesOptions().setFilter("even eq true")).size());
        assertEquals(3 * 205, keys(new ListEntitiesOptions().setFilter("not (even eq true)")).size());
        assertEquals(List.of("pa/r0000", "pa/r0409", "pc/r0000", "pc/r0409"), keys(new ListEntitiesOptions()
            .setFilter("(PartitionKey eq 'pa' or PartitionKey eq 'pc') and (RowKey eq 'r0000' or n gt 408 and tag eq 't9')")));
        assertEquals(List.of(), keys(new ListEntitiesOptions().setFilter("nosuch eq 1")));
        assertEquals(List.of(), keys(new ListEntitiesOptions().setFilter("n eq 7L")), "Int32 is not Int64");
        assertEquals(List.of("pc/r0409"), keys(new ListEntitiesOptions()
            .setFilter("PartitionKey gt 'pb' and RowKey ge 'r0409'")));
    }

    @Test
    void selectOverPagesReturnsOnlyTheNamedProperties() {
        List<PagedResponse<TableEntity>> pages = pages(new ListEntitiesOptions().setSelect(List.of("n", "tag"))
            .setFilter("PartitionKey ne 'pa'"));
        List<TableEntity> rows = pages.stream().flatMap(p -> p.getValue().stream()).collect(Collectors.toList());
        assertEquals(2 * ROWS_PER_PARTITION, rows.size());
        for (TableEntity e : rows) {
            assertFalse(e.getProperties().containsKey("big"));
            assertFalse(e.getProperties().containsKey("even"));
            assertNotNull(e.getProperty("n"));
            assertNotNull(e.getProperty("tag"));
        }
        List<Integer> ns = rows.stream().map(e -> (Integer) e.getProperty("n")).collect(Collectors.toList());
        assertEquals(ns.subList(0, ROWS_PER_PARTITION).stream().sorted(Comparator.naturalOrder())
            .collect(Collectors.toList()), ns.subList(0, ROWS_PER_PARTITION));
    }

    @Test
    void badQueriesAre400() {
        Aztable.expectHttpError(400, TableErrorCode.INVALID_INPUT.toString(),
            () -> keys(new ListEntitiesOptions().setFilter("n eq")));
        Aztable.expectHttpError(400, TableErrorCode.INVALID_INPUT.toString(),
            () -> keys(new ListEntitiesOptions().setTop(1001)));
        Aztable.expectHttpError(400, TableErrorCode.INVALID_INPUT.toString(),
            () -> keys(new ListEntitiesOptions().setFilter("n EQ 1")));
    }
}
