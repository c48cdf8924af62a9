package dev.aztable.sdk;

import static dev.aztable.sdk.Aztable.expectError;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.azure.core.http.rest.Response;
import com.azure.core.util.Context;
import com.azure.data.tables.TableClient;
import com.azure.data.tables.models.ListEntitiesOptions;
import com.azure.data.tables.models.TableEntity;
import com.azure.data.tables.models.TableEntityUpdateMode;
import com.azure.data.tables.models.TableErrorCode;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Insert, Get, Update and Merge (with an ETag and with `*`), the two upserts, Delete (with an
 * ETag), null properties and $select on a point query.
 */
class EntitiesTest extends FreshTableTest {
    private static TableEntity entity(String pk, String rk, Object... kv) {
        TableEntity e = new TableEntity(pk, rk);
        for (int i = 0; i < kv.length; i += 2) {
            e.addProperty((String) kv[i], kv[i + 1]);
        }
        return e;
    }

    /**
     * The entity's own properties, without keys and metadata. The SDK reads with full metadata
     * and keeps the annotations ("Timestamp@odata.type") among the properties.
     */
    private static Set<String> userProperties(TableEntity e) {
        return e.getProperties().keySet().stream()
            .filter(k -> !k.equals("PartitionKey") && !k.equals("RowKey") && !k.equals("Timestamp")
                && !k.startsWith("odata.") && !k.endsWith("@odata.type"))
            .collect(Collectors.toSet());
    }

    /**
     * What the SDK makes of an ETag header: its TableScrubEtagPolicy strips one quote at either
     * end, so the weak W/"..." comes out without its closing quote (the body's odata.etag keeps it).
     */
    static String headerEtag(String etag) {
        return etag.endsWith("\"") ? etag.substring(0, etag.length() - 1) : etag;
    }

    @Test
    void createEntityReturnsTheEtagGetEntitySees() {
        Response<Void> r = client.createEntityWithResponse(entity("p", "r", "v", "x"), null, Context.NONE);
        assertEquals(204, r.getStatusCode(), "the SDK asks for no content");
        String etag = r.getHeaders().getValue("ETag");
        assertNotNull(etag);
        TableEntity got = client.getEntity("p", "r");
        assertTrue(got.getETag().matches("W/\"datetime'\\d{4}-\\d\\d-\\d\\dT\\d\\d%3A\\d\\d%3A\\d\\d\\.\\d{7}Z'\""),
            got.getETag());
        assertEquals(headerEtag(got.getETag()), etag);
        assertNotNull(got.getTimestamp());
        assertEquals("x", got.getProperty("v"));
        assertEquals("p", got.getPartitionKey());
        assertEquals("r", got.getRowKey());
    }

    @Test
    void duplicateCreateEntityIs409EntityAlreadyExists() {
        client.createEntity(entity("p", "r", "v", 1));
        expectError(409, TableErrorCode.ENTITY_ALREADY_EXISTS, () -> client.createEntity(entity("p", "r", "v", 2)));
        assertEquals(1, client.getEntity("p", "r").getProperty("v"), "the first write stands");
    }

    @Test
    void getEntityOnAMissingEntityIs404ResourceNotFound() {
        expectError(404, TableErrorCode.RESOURCE_NOT_FOUND, () -> client.getEntity("p", "missing"));
    }

    @Test
    void specialKeysRoundTripThroughPointOperations() {
        String[] keys = {"a'b", "a''b", "sp ace", "100%", "a+b&c=d", "é✓😀", "semi;colon", "(paren)", "~!@$^*",
            "line\u00a0nbsp", ""};
        Set<String> seen = new HashSet<>();
        for (String k : keys) {
            client.createEntity(entity(k, k, "k", k));
            TableEntity got = client.getEntity(k, k);
            assertEquals(k, got.getProperty("k"), k);
            assertEquals(k, got.getPartitionKey());
            client.updateEntity(entity(k, k, "k", k, "u", 1), TableEntityUpdateMode.MERGE);
            assertEquals(1, client.getEntity(k, k).getProperty("u"), k);
            seen.add(k);
        }
        List<TableEntity> all = client.listEntities().stream().collect(Collectors.toList());
        assertEquals(seen, all.stream().map(TableEntity::getRowKey).collect(Collectors.toSet()));
        for (String k : keys) {
            client.deleteEntity(k, k);
        }
        assertEquals(0, client.listEntities().stream().count());
    }

    @Test
    void updateReplaceDropsOtherPropertiesAndMergeKeepsThem() {
        client.createEntity(entity("p", "r", "a", "1", "b", "2"));
        client.updateEntity(entity("p", "r", "a", "10", "c", "3"), TableEntityUpdateMode.MERGE);
        TableEntity merged = client.getEntity("p", "r");
        assertEquals(Set.of("a", "b", "c"), userProperties(merged));
        assertEquals("10", merged.getProperty("a"));
        assertEquals("2", merged.getProperty("b"));

        client.updateEntity(entity("p", "r", "z", "26"), TableEntityUpdateMode.REPLACE);
        TableEntity replaced = client.getEntity("p", "r");
        assertEquals(Set.of("z"), userProperties(replaced));
        // updateEntity(entity) defaults to MERGE
        client.updateEntity(entity("p", "r", "y", "25"));
        assertEquals(Set.of("y", "z"), userProperties(client.getEntity("p", "r")));
    }

    @ParameterizedTest
    @EnumSource(TableEntityUpdateMode.class)
    void updateOnAMissingEntityIs404ResourceNotFound(TableEntityUpdateMode mode) {
        expectError(404, TableErrorCode.RESOURCE_NOT_FOUND,
            () -> client.updateEntity(entity("p", "missing", "v", 1), mode));
        expectError(404, TableErrorCode.RESOURCE_NOT_FOUND, () -> client.getEntity("p", "missing"));
    }

    @ParameterizedTest
    @EnumSource(TableEntityUpdateMode.class)
    void updateWithEtagCurrentSucceedsStaleIs412AndStarOverwrites(TableEntityUpdateMode mode) {
        client.createEntity(entity("p", "r", "v", 0));
        TableEntity v1 = client.getEntity("p", "r");
        v1.addProperty("v", 1);
        Response<Void> ok = client.updateEntityWithResponse(v1, mode, true, null, Context.NONE);
        assertEquals(204, ok.getStatusCode());
        String newEtag = ok.getHeaders().getValue("ETag");
        assertNotEquals(headerEtag(v1.getETag()), newEtag, "every write changes the ETag");

        // v1 still carries the first ETag: stale now
        v1.addProperty("v", 2);
        expectError(412, TableErrorCode.UPDATE_CONDITION_NOT_SATISFIED,
            () -> client.updateEntityWithResponse(v1, mode, true, null, Context.NONE));
        assertEquals(1, client.getEntity("p", "r").getProperty("v"), "the stale write changed nothing");

        // ifUnchanged=false sends If-Match: *
        Response<Void> star = client.updateEntityWithResponse(v1, mode, false, null, Context.NONE);
        assertEquals(204, star.getStatusCode());
        TableEntity now = client.getEntity("p", "r");
        assertEquals(2, now.getProperty("v"));
        assertEquals(star.getHeaders().getValue("ETag"), headerEtag(now.getETag()));
    }

    @ParameterizedTest
    @EnumSource(TableEntityUpdateMode.class)
    void upsertInsertsThenUpdates(TableEntityUpdateMode mode) {
        Response<Void> created = client.upsertEntityWithResponse(entity("p", "r", "a", "1", "b", "2"), mode, null,
            Context.NONE);
        assertEquals(204, created.getStatusCode());
        assertEquals(Set.of("a", "b"), userProperties(client.getEntity("p", "r")));
        client.upsertEntityWithResponse(entity("p", "r", "a", "10", "c", "3"), mode, null, Context.NONE);
        TableEntity got = client.getEntity("p", "r");
        if (mode == TableEntityUpdateMode.MERGE) {
            assertEquals(Set.of("a", "b", "c"), userProperties(got));
        } else {
            assertEquals(Set.of("a", "c"), userProperties(got));
        }
        assertEquals("10", got.getProperty("a"));
        // upsertEntity(entity) defaults to MERGE
        client.upsertEntity(entity("p", "r2", "x", "y"));
        assertEquals("y", client.getEntity("p", "r2").getProperty("x"));
    }

    @Test
    void etagAndTimestampChangeOnEveryWrite() {
        client.createEntity(entity("p", "r", "v", 0));
        TableEntity prev = client.getEntity("p", "r");
        for (int i = 1; i <= 4; i++) {
            switch (i) {
                case 1 -> client.updateEntity(entity("p", "r", "v", i), TableEntityUpdateMode.MERGE);
                case 2 -> client.updateEntity(entity("p", "r", "v", i), TableEntityUpdateMode.REPLACE);
                case 3 -> client.upsertEntityWithResponse(entity("p", "r", "v", i), TableEntityUpdateMode.MERGE, null, Context.NONE);
                default -> client.upsertEntityWithResponse(entity("p", "r", "v", i), TableEntityUpdateMode.REPLACE, null, Context.NONE);
            }
            TableEntity cur = client.getEntity("p", "r");
            assertNotEquals(prev.getETag(), cur.getETag());
            assertTrue(cur.getTimestamp().isAfter(prev.getTimestamp()), cur.getTimestamp() + " after "
                + prev.getTimestamp());
            assertEquals(i, cur.getProperty("v"));
            prev = cur;
        }
    }

    @Test
    void listedEntitiesCarryEtagAndTimestamp() {
        client.createEntity(entity("p", "r", "v", 1));
        TableEntity point = client.getEntity("p", "r");
        TableEntity listed = client.listEntities().stream().findFirst().orElseThrow();
        assertEquals(point.getETag(), listed.getETag());
        assertEquals(point.getTimestamp(), listed.getTimestamp());
    }

    @Test
    void deleteEntityUnconditional() {
        client.createEntity(entity("p", "r"));
        client.deleteEntity("p", "r");
        expectError(404, TableErrorCode.RESOURCE_NOT_FOUND, () -> client.getEntity("p", "r"));
    }

    @Test
    void deleteEntityWithEtagStaleIs412CurrentSucceeds() {
        client.createEntity(entity("p", "r", "v", 0));
        TableEntity stale = client.getEntity("p", "r");
        client.updateEntity(entity("p", "r", "v", 1));
        expectError(412, TableErrorCode.UPDATE_CONDITION_NOT_SATISFIED,
            () -> client.deleteEntityWithResponse(stale, true, null, Context.NONE));
        assertEquals(1, client.getEntity("p", "r").getProperty("v"), "still there");
        TableEntity current = client.getEntity("p", "r");
        assertEquals(204, client.deleteEntityWithResponse(current, true, null, Context.NONE).getStatusCode());
        expectError(404, TableErrorCode.RESOURCE_NOT_FOUND, () -> client.getEntity("p", "r"));
        // a stale entity object with ifUnchanged=false deletes whatever is there (If-Match: *)
        client.createEntity(entity("p", "r", "v", 2));
        assertEquals(204, client.deleteEntityWithResponse(stale, false, null, Context.NONE).getStatusCode());
    }

    @Test
    void deleteOnAMissingEntityIs404ResourceNotFound() {
        // The SDK swallows this 404 and hands the response back.
        Response<Void> r = client.deleteEntityWithResponse(entity("p", "missing"), false, null, Context.NONE);
        assertEquals(404, r.getStatusCode());
        assertEquals("ResourceNotFound", r.getHeaders().getValue("x-ms-error-code"));
    }

    @Test
    void nullPropertiesAreNotStored() {
        client.createEntity(entity("p", "r", "a", "1", "n", null));
        assertEquals(Set.of("a"), userProperties(client.getEntity("p", "r")));
        client.upsertEntityWithResponse(entity("p", "r", "n", null, "b", "2"), TableEntityUpdateMode.MERGE, null, Context.NONE);
        assertEquals(Set.of("a", "b"), userProperties(client.getEntity("p", "r")));
    }

    @Test
    void selectOnAPointQueryReturnsOnlyTheNamedProperties() {
        client.createEntity(entity("p", "r", "a", "1", "b", "2", "c", "3"));
        TableEntity got = client.getEntityWithResponse("p", "r", List.of("a", "c", "nope"), null, Context.NONE)
            .getValue();
        assertEquals("1", got.getProperty("a"));
        assertEquals("3", got.getProperty("c"));
        assertFalse(got.getProperties().containsKey("b"));
        assertNull(got.getPartitionKey(), "keys are not selected");
        assertNotNull(got.getETag(), "the ETag always comes back");
    }

    @Test
    void selectOnAQueryReturnsOnlyTheNamedProperties() {
        client.createEntity(entity("p", "r1", "a", "1", "b", "2"));
        client.createEntity(entity("p", "r2", "b", "3"));
        List<TableEntity> rows = new ArrayList<>();
        client.listEntities(new ListEntitiesOptions().setSelect(List.of("RowKey", "a")), null, Context.NONE)
            .forEach(rows::add);
        assertEquals(2, rows.size());
        assertEquals("1", rows.get(0).getProperty("a"));
        assertFalse(rows.get(0).getProperties().containsKey("b"));
        assertEquals("r2", rows.get(1).getRowKey());
        // a selected property the entity lacks comes back as null (or not at all)
        assertNull(rows.get(1).getProperty("a"));
        assertFalse(rows.get(1).getProperties().containsKey("b"));
    }
}
