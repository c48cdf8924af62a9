package dev.aztable.sdk;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.azure.core.util.Context;
import com.azure.data.tables.TableClient;
import com.azure.data.tables.models.ListEntitiesOptions;
import com.azure.data.tables.models.TableEntity;
import com.azure.data.tables.models.TableEntityUpdateMode;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.Date;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every Edm type through TableEntity and the Java types the SDK maps them to: Int32 and Int64
 * extremes, Double (whole numbers, NaN, ±Infinity), Boolean, Binary, Guid and DateTime
 * (OffsetDateTime with nanoseconds: the service keeps 100 ns).
 */
class TypesTest {
    private static final UUID GUID = UUID.fromString("0f8fad5b-d9cb-469f-a165-70867728950e");
    private static final byte[] BYTES = {0, 1, 2, (byte) 0x7f, (byte) 0x80, (byte) 0xff};
    /** 9 fractional digits; the service keeps 7. */
    private static final OffsetDateTime NANOS = OffsetDateTime.of(2024, 2, 29, 12, 34, 56, 123_456_789,
        ZoneOffset.UTC);
    private static final OffsetDateTime IN_PLUS_TWO = OffsetDateTime.of(2024, 7, 1, 2, 0, 0, 500_000_000,
        ZoneOffset.ofHours(2));
    private static final OffsetDateTime OLDEST = OffsetDateTime.of(1601, 1, 1, 0, 0, 0, 0, ZoneOffset.UTC);
    private static final OffsetDateTime NEWEST = OffsetDateTime.of(9999, 12, 31, 23, 59, 59, 999_999_900,
        ZoneOffset.UTC);
    private static final Date DATE = new Date(1_700_000_000_123L);

    private Aztable.FreshTable table;
    private TableClient client;
    private OffsetDateTime now;

    @BeforeEach
    void setUp() {
        table = Aztable.freshTable();
        client = table.client;
        now = OffsetDateTime.now(ZoneOffset.UTC);
    }

    @AfterEach
    void tearDown() {
        table.close();
    }

    /** An Instant rounded to the service's 100 ns ticks, half to even. */
    static Instant toTicks(Instant t) {
        BigDecimal ticks = BigDecimal.valueOf(t.getNano()).divide(BigDecimal.valueOf(100), 0, RoundingMode.HALF_EVEN);
        return Instant.ofEpochSecond(t.getEpochSecond()).plusNanos(ticks.longValueExact() * 100);
    }

    private TableEntity allTypes(String pk, String rk) {
        return new TableEntity(pk, rk)
            .addProperty("Str", "héllo ✓ 😀")
            .addProperty("StrEmpty", "")
            .addProperty("StrLooksTyped", "2024-01-01T00:00:00Z")
            .addProperty("I32", 42)
            .addProperty("I32Min", Integer.MIN_VALUE)
            .addProperty("I32Max", Integer.MAX_VALUE)
            .addProperty("I64", 7L)
            .addProperty("I64Min", Long.MIN_VALUE)
            .addProperty("I64Max", Long.MAX_VALUE)
            .addProperty("Dbl", 1.5)
            .addProperty("DblWhole", 2.0)
            .addProperty("DblNegZero", -0.0)
            .addProperty("DblBig", 1.7976931348623157e308)
            .addProperty("DblTiny", 4.9e-324)
            .addProperty("DblWholeBig", 1e20)
            // The SDK annotates no Double: NaN and the infinities reach the service as typed
            // strings only with the annotation written out (without it they are strings).
            .addProperty("DblNaN", Double.NaN).addProperty("DblNaN@odata.type", "Edm.Double")
            .addProperty("DblInf", Double.POSITIVE_INFINITY).addProperty("DblInf@odata.type", "Edm.Double")
            .addProperty("DblNegInf", Double.NEGATIVE_INFINITY).addProperty("DblNegInf@odata.type", "Edm.Double")
            .addProperty("BoolT", true)
            .addProperty("BoolF", false)
            .addProperty("Bin", BYTES)
            .addProperty("BinEmpty", new byte[0])
            .addProperty("Guid", GUID)
            .addProperty("DtNow", now)
            .addProperty("DtNanos", NANOS)
            .addProperty("DtOffset", IN_PLUS_TWO)
            .addProperty("DtOldest", OLDEST)
            .addProperty("DtNewest", NEWEST)
            .addProperty("DtDate", DATE);
    }

    private void assertAllTypes(TableEntity e) {
        Map<String, Object> p = e.getProperties();
        assertEquals("héllo ✓ 😀", p.get("Str"));
        assertEquals("", p.get("StrEmpty"));
        assertEquals("2024-01-01T00:00:00Z", p.get("StrLooksTyped"));

        assertEquals(Integer.valueOf(42), assertInstanceOf(Integer.class, p.get("I32")));
        assertEquals(Integer.MIN_VALUE, (int) assertInstanceOf(Integer.class, p.get("I32Min")));
        assertEquals(Integer.MAX_VALUE, (int) assertInstanceOf(Integer.class, p.get("I32Max")));
        assertEquals(7L, (long) assertInstanceOf(Long.class, p.get("I64")));
        assertEquals(Long.MIN_VALUE, (long) assertInstanceOf(Long.class, p.get("I64Min")));
        assertEquals(Long.MAX_VALUE, (long) assertInstanceOf(Long.class, p.get("I64Max")));

        assertEquals(1.5, (double) assertInstanceOf(Double.class, p.get("Dbl")));
        assertEquals(2.0, (double) assertInstanceOf(Double.class, p.get("DblWhole")), "a whole Double stays one");
        assertEquals(Double.doubleToLongBits(-0.0),
            Double.doubleToLongBits(assertInstanceOf(Double.class, p.get("DblNegZero"))), "-0.0 keeps its sign");
        assertEquals(1.7976931348623157e308, (double) assertInstanceOf(Double.class, p.get("DblBig")));
        assertEquals(4.9e-324, (double) assertInstanceOf(Double.class, p.get("DblTiny")));
        assertEquals(1e20, (double) assertInstanceOf(Double.class, p.get("DblWholeBig")));
        assertTrue(Double.isNaN(assertInstanceOf(Double.class, p.get("DblNaN"))));
        assertEquals(Double.POSITIVE_INFINITY, (double) assertInstanceOf(Double.class, p.get("DblInf")));
        assertEquals(Double.NEGATIVE_INFINITY, (double) assertInstanceOf(Double.class, p.get("DblNegInf")));

        assertEquals(Boolean.TRUE, assertInstanceOf(Boolean.class, p.get("BoolT")));
        assertEquals(Boolean.FALSE, assertInstanceOf(Boolean.class, p.get("BoolF")));
        assertArrayEquals(BYTES, assertInstanceOf(byte[].class, p.get("Bin")));
        assertArrayEquals(new byte[0], assertInstanceOf(byte[].class, p.get("BinEmpty")));
        assertEquals(GUID, assertInstanceOf(UUID.class, p.get("Guid")));

        OffsetDateTime dtNow = assertInstanceOf(OffsetDateTime.class, p.get("DtNow"));
        assertEquals(toTicks(now.toInstant()), dtNow.toInstant(), "now() " + now + " kept to 100 ns");
        assertEquals(ZoneOffset.UTC, dtNow.getOffset());
        OffsetDateTime dtNanos = assertInstanceOf(OffsetDateTime.class, p.get("DtNanos"));
        assertEquals(Instant.parse("2024-02-29T12:34:56.1234568Z"), dtNanos.toInstant(),
            ".123456789 is rounded to 100 ns");
        assertEquals(IN_PLUS_TWO.toInstant(), assertInstanceOf(OffsetDateTime.class, p.get("DtOffset")).toInstant());
        assertEquals(ZoneOffset.UTC, ((OffsetDateTime) p.get("DtOffset")).getOffset(), "served in UTC");
        assertEquals(OLDEST.toInstant(), assertInstanceOf(OffsetDateTime.class, p.get("DtOldest")).toInstant());
        assertEquals(NEWEST.toInstant(), assertInstanceOf(OffsetDateTime.class, p.get("DtNewest")).toInstant());
        assertEquals(DATE.toInstant(), assertInstanceOf(OffsetDateTime.class, p.get("DtDate")).toInstant(),
            "a java.util.Date goes as Edm.DateTime and comes back an OffsetDateTime");
    }

    @Test
    void allTypesRoundTripThroughAPointQuery() {
        client.createEntity(allTypes("p", "r"));
        assertAllTypes(client.getEntity("p", "r"));
    }

    @Test
    void allTypesRoundTripThroughAQueryFeed() {
        client.createEntity(allTypes("p", "r"));
        List<TableEntity> rows = client.listEntities().stream().collect(Collectors.toList());
        assertEquals(1, rows.size());
        assertAllTypes(rows.get(0));
    }

    @ParameterizedTest
    @EnumSource(TableEntityUpdateMode.class)
    void allTypesRoundTripAfterUpdate(TableEntityUpdateMode mode) {
        client.createEntity(new TableEntity("p", "r").addProperty("Str", "old").addProperty("Gone", 1));
        client.updateEntity(allTypes("p", "r"), mode);
        TableEntity got = client.getEntity("p", "r");
        assertAllTypes(got);
        assertEquals(mode == TableEntityUpdateMode.MERGE, got.getProperties().containsKey("Gone"));
    }

    @ParameterizedTest
    @EnumSource(TableEntityUpdateMode.class)
    void allTypesRoundTripAfterUpsert(TableEntityUpdateMode mode) {
        client.upsertEntityWithResponse(allTypes("p", "new"), mode, null, Context.NONE);
        assertAllTypes(client.getEntity("p", "new"));
        client.createEntity(new TableEntity("p", "old").addProperty("Gone", 1));
        client.upsertEntityWithResponse(allTypes("p", "old"), mode, null, Context.NONE);
        TableEntity got = client.getEntity("p", "old");
        assertAllTypes(got);
        assertEquals(mode == TableEntityUpdateMode.MERGE, got.getProperties().containsKey("Gone"));
    }

    @Test
    void doubleSpecialValuesWithoutTheAnnotationAreStrings() {
        // What the SDK sends for a bare Double.NaN: the JSON string "NaN" with no type, which
        // any service stores as Edm.String. Whole Doubles need no annotation ("2.0").
        client.createEntity(new TableEntity("p", "r").addProperty("NaN", Double.NaN)
            .addProperty("Inf", Double.POSITIVE_INFINITY).addProperty("Whole", 3.0));
        TableEntity got = client.getEntity("p", "r");
        assertEquals("NaN", got.getProperty("NaN"));
        assertEquals("Infinity", got.getProperty("Inf"));
        assertEquals(3.0, (double) assertInstanceOf(Double.class, got.getProperty("Whole")));
        assertEquals(1, count("NaN eq 'NaN'"));
        assertEquals(1, count("Whole eq 3.0"));
    }

    private long count(String filter) {
        return client.listEntities(new ListEntitiesOptions().setFilter(filter), null, Context.NONE).stream().count();
    }

    static List<String[]> typedFilters() {
        return List.of(
            new String[] {"Str eq 'héllo ✓ 😀'", "Str eq 'héllo ✓ 😁'"},
            new String[] {"I32 eq 42", "I32 eq 43"},
            new String[] {"I32Min eq -2147483648", "I32Min eq -2147483647"},
            new String[] {"I64Max eq 9223372036854775807L", "I64Max eq 9223372036854775806L"},
            new String[] {"I64Min eq -9223372036854775808L", "I64Min eq -9223372036854775807L"},
            new String[] {"I64 eq 7L", "I64 eq 7"},
            new String[] {"Dbl eq 1.5", "Dbl eq 1.5000001"},
            new String[] {"DblWhole eq 2.0", "DblWhole eq 2"},
            new String[] {"DblBig gt 1.0E308", "DblBig lt 1.0E308"},
            new String[] {"BoolT eq true", "BoolT eq false"},
            new String[] {"Guid eq guid'0f8fad5b-d9cb-469f-a165-70867728950e'",
                "Guid eq '0f8fad5b-d9cb-469f-a165-70867728950e'"},
            new String[] {"Bin eq X'0001027f80ff'", "Bin eq X'0001027f80fe'"},
            new String[] {"Bin eq binary'0001027f80ff'", "Bin eq binary'0001027f80'"},
            new String[] {"DtNanos eq datetime'2024-02-29T12:34:56.1234568Z'",
                "DtNanos eq datetime'2024-02-29T12:34:56.1234567Z'"},
            new String[] {"DtOffset eq datetime'2024-07-01T00:00:00.5Z'",
                "DtOffset eq datetime'2024-07-01T02:00:00.5Z'"},
            new String[] {"DtOldest le datetime'1601-01-01T00:00:00Z'", "DtOldest gt datetime'1601-01-01T00:00:00Z'"});
    }

    @ParameterizedTest
    @MethodSource("typedFilters")
    void eachTypedFilterMatchesItsValueAndNotANearOne(String match, String miss) {
        client.createEntity(allTypes("p", "r"));
        assertEquals(1, count(match), match);
        assertEquals(0, count(miss), miss);
    }
}
