package dev.aztable.sdk;

import static dev.aztable.sdk.Aztable.expectError;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import com.azure.core.util.Context;
import com.azure.data.tables.TableClient;
import com.azure.data.tables.models.TableEntity;
import com.azure.data.tables.models.TableEntityUpdateMode;
import com.azure.data.tables.models.TableErrorCode;
import com.azure.data.tables.models.TableServiceException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/** The service's limits on entities, answered with its codes as TableErrorCode values. */
class ValidationTest extends FreshTableTest {
    /** 64 KiB as UTF-16 code units. */
    private static final int MAX_STRING_CHARS = 32 * 1024;
    private static final int MAX_BINARY_BYTES = 64 * 1024;
    private static final int MAX_CUSTOM_PROPERTIES = 252;

    private long count() {
        return client.listEntities().stream().count();
    }

    @Test
    void stringAndBinaryAtTheLimitAreAcceptedOneMoreIsPropertyValueTooLarge() {
        String s = "s".repeat(MAX_STRING_CHARS);
        byte[] b = new byte[MAX_BINARY_BYTES];
        for (int i = 0; i < b.length; i++) {
            b[i] = (byte) (i % 251);
        }
        client.createEntity(new TableEntity("p", "ok").addProperty("s", s).addProperty("b", b));
        TableEntity got = client.getEntity("p", "ok");
        assertEquals(s, got.getProperty("s"));
        assertArrayEquals(b, (byte[]) got.getProperty("b"));

        expectError(400, TableErrorCode.PROPERTY_VALUE_TOO_LARGE, () -> client.createEntity(
            new TableEntity("p", "r").addProperty("s", s + "s")));
        expectError(400, TableErrorCode.PROPERTY_VALUE_TOO_LARGE, () -> client.createEntity(
            new TableEntity("p", "r").addProperty("b", new byte[MAX_BINARY_BYTES + 1])));
        expectError(400, TableErrorCode.PROPERTY_VALUE_TOO_LARGE, () -> client.upsertEntity(
            new TableEntity("p", "ok").addProperty("s", s + "s")));
        assertEquals(1, count());
        assertEquals(s, client.getEntity("p", "ok").getProperty("s"), "the refused upsert changed nothing");
    }

    @Test
    void tooManyPropertiesIs400TooManyPropertiesAlsoThroughAMerge() {
        TableEntity full = new TableEntity("p", "full");
        for (int i = 0; i < MAX_CUSTOM_PROPERTIES; i++) {
            full.addProperty("p" + i, i);
        }
        client.createEntity(full);
        TableEntity over = new TableEntity("p", "over");
        for (int i = 0; i <= MAX_CUSTOM_PROPERTIES; i++) {
            over.addProperty("p" + i, i);
        }
        expectError(400, TableErrorCode.TOO_MANY_PROPERTIES, () -> client.createEntity(over));
        expectError(400, TableErrorCode.TOO_MANY_PROPERTIES, () -> client.updateEntity(
            new TableEntity("p", "full").addProperty("extra", 1), TableEntityUpdateMode.MERGE));
        assertEquals(1, count());
    }

    @ParameterizedTest
    @ValueSource(strings = {"bad-name", "has space", "semi;colon", "1digitfirst"})
    void invalidPropertyNamesAre400PropertyNameInvalid(String name) {
        expectError(400, TableErrorCode.PROPERTY_NAME_INVALID,
            () -> client.createEntity(new TableEntity("p", "r").addProperty(name, "v")));
        assertEquals(0, count());
    }

    @Test
    void aPropertyNameOver255CharactersIs400PropertyNameTooLong() {
        client.createEntity(new TableEntity("p", "ok").addProperty("n".repeat(255), 1));
        assertEquals(1, client.getEntity("p", "ok").getProperty("n".repeat(255)));
        expectError(400, TableErrorCode.PROPERTY_NAME_TOO_LONG,
            () -> client.createEntity(new TableEntity("p", "r").addProperty("n".repeat(256), 1)));
        assertEquals(1, count());
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {"a/b|r", "p|a/b", "a\\b|r", "p|a#b", "p|a?b", "p|tab\there"})
    void forbiddenKeyCharactersAre400(String pk, String rk) {
        TableServiceException e = assertThrows(TableServiceException.class,
            () -> client.createEntity(new TableEntity(pk, rk).addProperty("v", 1)));
        assertEquals(400, e.getResponse().getStatusCode(), e.getMessage());
        assertEquals(0, count());
    }

    @Test
    void aKeyOver1KiBIs400() {
        client.createEntity(new TableEntity("k".repeat(1024), "r"));
        TableServiceException e = assertThrows(TableServiceException.class,
            () -> client.createEntity(new TableEntity("k".repeat(1025), "r")));
        assertEquals(400, e.getResponse().getStatusCode(), e.getMessage());
        assertEquals(1, count());
    }

    @Test
    void anEntityOver1MiBIs400EntityTooLarge() {
        TableEntity big = new TableEntity("p", "r");
        for (int i = 0; i < 40; i++) {
            big.addProperty("s" + i, "x".repeat(30_000));
        }
        expectError(400, TableErrorCode.ENTITY_TOO_LARGE, () -> client.createEntity(big));
        client.createEntity(new TableEntity("p", "r").addProperty("small", 1));
        expectError(400, TableErrorCode.ENTITY_TOO_LARGE, () -> client.upsertEntityWithResponse(big,
            TableEntityUpdateMode.REPLACE, null, Context.NONE));
        assertEquals(1, client.getEntity("p", "r").getProperty("small"));
    }

    @Test
    void anInt32OutOfRangeWithItsAnnotationIs400InvalidInput() {
        expectError(400, TableErrorCode.INVALID_INPUT, () -> client.createEntity(new TableEntity("p", "r")
            .addProperty("i", 2147483648L).addProperty("i@odata.type", "Edm.Int32")));
        assertEquals(0, count());
    }
}
