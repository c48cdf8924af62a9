// Every Edm type round-trips exactly through @azure/data-tables (spec 1.5, 1.9).
import { after, beforeEach, describe, test } from "node:test";
import assert from "node:assert/strict";
import { odata } from "@azure/data-tables";
import { collect, freshTable } from "./helpers.mjs";

const GUID = "c9da6455-213d-42c9-9a79-3e9149a57833";
const BYTES = Uint8Array.from({ length: 256 }, (_, i) => i);
const DATE = new Date("2024-02-29T13:14:15.123Z");
const PRECISE = "2024-02-29T13:14:15.1234567Z";
const UNICODE = "héllo wörld — 日本語 — 😀 — \u00a0\u2028";

const ENTITY = {
  partitionKey: "types",
  rowKey: "all",
  Str: "hello world",
  EmptyStr: "",
  Unicode: UNICODE,
  NumericLookingStr: "12345",
  Int32: 42,
  Int32Zero: 0,
  Int32Max: 2147483647,
  Int32Min: -2147483648,
  Int64: { value: "9007199254740993", type: "Int64" },
  Int64Small: { value: "7", type: "Int64" },
  Int64Max: { value: "9223372036854775807", type: "Int64" },
  Int64Min: { value: "-9223372036854775808", type: "Int64" },
  Int64BigInt: 123456789012345678n,
  Double: 3.141592653589793,
  DoubleNeg: -0.1,
  DoubleHuge: 1e308,
  DoubleTiny: 5e-324,
  DoubleTypedIntegral: { value: 2, type: "Double" },
  NaN: { value: "NaN", type: "Double" },
  Inf: { value: "Infinity", type: "Double" },
  NegInf: { value: "-Infinity", type: "Double" },
  BoolTrue: true,
  BoolFalse: false,
  Date: DATE,
  DatePrecise: { value: PRECISE, type: "DateTime" },
  DateMin: { value: "1601-01-01T00:00:00Z", type: "DateTime" },
  DateMax: { value: "9999-12-31T23:59:59.9999999Z", type: "DateTime" },
  Guid: { value: GUID, type: "Guid" },
  Binary: BYTES,
  BinaryEmpty: new Uint8Array(0),
  TypedString: { value: "typed", type: "String" },
  TypedInt32: { value: -5, type: "Int32" },
};

const USER_PROPS = Object.keys(ENTITY).filter((k) => k !== "partitionKey" && k !== "rowKey").sort();

function userKeys(e) {
  return Object.keys(e)
    .filter((k) => !["partitionKey", "rowKey", "etag", "timestamp"].includes(k) && !k.startsWith("odata."))
    .sort();
}

function checkConverted(got) {
  assert.deepEqual(userKeys(got), USER_PROPS);
  assert.equal(got.Str, "hello world");
  assert.equal(got.EmptyStr, "");
  assert.equal(got.Unicode, UNICODE);
  assert.equal(got.NumericLookingStr, "12345");
  assert.equal(got.Int32, 42);
  assert.equal(got.Int32Zero, 0);
  assert.equal(got.Int32Max, 2147483647);
  assert.equal(got.Int32Min, -2147483648);
  // Int64 comes back as a bigint.
  assert.equal(got.Int64, 9007199254740993n);
  assert.equal(got.Int64Small, 7n);
  assert.equal(got.Int64Max, 9223372036854775807n);
  assert.equal(got.Int64Min, -9223372036854775808n);
  assert.equal(got.Int64BigInt, 123456789012345678n);
  assert.equal(got.Double, 3.141592653589793);
  assert.equal(got.DoubleNeg, -0.1);
  assert.equal(got.DoubleHuge, 1e308);
  assert.equal(got.DoubleTiny, 5e-324);
  assert.equal(Number(got.DoubleTypedIntegral), 2);
  assert.ok(Number.isNaN(Number(got.NaN)), `NaN came back as ${got.NaN}`);
  assert.equal(Number(got.Inf), Infinity);
  assert.equal(Number(got.NegInf), -Infinity);
  assert.equal(got.BoolTrue, true);
  assert.equal(got.BoolFalse, false);
  assert.ok(got.Date instanceof Date);
  assert.equal(got.Date.getTime(), DATE.getTime());
  assert.ok(got.DatePrecise instanceof Date);
  assert.equal(got.DatePrecise.toISOString(), "2024-02-29T13:14:15.123Z");
  assert.deepEqual(got.Guid, { value: GUID, type: "Guid" });
  assert.ok(got.Binary instanceof Uint8Array);
  assert.deepEqual([...got.Binary], [...BYTES]);
  assert.ok(got.BinaryEmpty instanceof Uint8Array);
  assert.equal(got.BinaryEmpty.length, 0);
  assert.equal(got.TypedString, "typed");
  assert.equal(got.TypedInt32, -5);
}

function checkRaw(got) {
  // With type conversion disabled the SDK exposes the wire value and Edm type.
  assert.deepEqual(got.Int64, { value: "9007199254740993", type: "Int64" });
  assert.deepEqual(got.Int64Small, { value: "7", type: "Int64" });
  assert.deepEqual(got.Int64Max, { value: "9223372036854775807", type: "Int64" });
  assert.deepEqual(got.Int64Min, { value: "-9223372036854775808", type: "Int64" });
  assert.deepEqual(got.Int64BigInt, { value: "123456789012345678", type: "Int64" });
  assert.deepEqual(got.NaN, { value: "NaN", type: "Double" });
  assert.deepEqual(got.Inf, { value: "Infinity", type: "Double" });
  assert.deepEqual(got.NegInf, { value: "-Infinity", type: "Double" });
  assert.deepEqual(got.DatePrecise, { value: PRECISE, type: "DateTime" });
  assert.deepEqual(got.DateMin, { value: "1601-01-01T00:00:00Z", type: "DateTime" });
  assert.deepEqual(got.DateMax, { value: "9999-12-31T23:59:59.9999999Z", type: "DateTime" });
  assert.equal(got.Date.type, "DateTime");
  assert.equal(new Date(got.Date.value).getTime(), DATE.getTime());
  assert.deepEqual(got.Guid, { value: GUID, type: "Guid" });
  assert.deepEqual(got.Binary, { value: Buffer.from(BYTES).toString("base64"), type: "Binary" });
  assert.deepEqual(got.BinaryEmpty, { value: "", type: "Binary" });
  assert.deepEqual(got.Str, { value: "hello world", type: "String" });
  assert.deepEqual(got.NumericLookingStr, { value: "12345", type: "String" });
  assert.deepEqual(got.Int32, { value: "42", type: "Int32" });
  assert.deepEqual(got.BoolTrue, { value: "true", type: "Boolean" });
}

describe("Edm types", { timeout: 60_000 }, () => {
  let t;
  let client;
  beforeEach(async () => {
    if (t) await t.cleanup();
    t = await freshTable("jst");
    client = t.client;
  });
  after(async () => {
    if (t) await t.cleanup();
  });

  test("all types round-trip through a point query", async () => {
    await client.createEntity(ENTITY);
    checkConverted(await client.getEntity("types", "all"));
    checkRaw(await client.getEntity("types", "all", { disableTypeConversion: true }));
  });

  test("all types round-trip through a query feed", async () => {
    await client.createEntity(ENTITY);
    const rows = await collect(client.listEntities());
    assert.equal(rows.length, 1);
    checkConverted(rows[0]);
    const raw = await collect(client.listEntities({ disableTypeConversion: true }));
    checkRaw(raw[0]);
  });

  for (const mode of ["Replace", "Merge"]) {
    test(`all types round-trip after updateEntity ${mode}`, async () => {
      await client.createEntity({ partitionKey: "types", rowKey: "all", Str: "old", Extra: 1 });
      await client.updateEntity(ENTITY, mode);
      const got = await client.getEntity("types", "all");
      if (mode === "Merge") {
        assert.equal(got.Extra, 1);
        delete got.Extra;
      } else {
        assert.equal(got.Extra, undefined);
      }
      checkConverted(got);
    });

    test(`all types round-trip after upsertEntity ${mode}`, async () => {
      await client.upsertEntity(ENTITY, mode);
      checkConverted(await client.getEntity("types", "all"));
    });
  }

  test("each typed filter matches its value and not a near one", async () => {
    await client.createEntity(ENTITY);
    const count = async (filter) => (await collect(client.listEntities({ queryOptions: { filter } }))).length;
    const later = new Date(DATE.getTime() + 1);
    // [matches, must not match]: a server matching everything, or comparing loosely
    // (Int64 through a double, numbers as text, strings case-insensitively), fails one
    const pairs = [
      [odata`Int32 eq ${42}`, odata`Int32 eq ${43}`],
      ["Int64 eq 9007199254740993L", "Int64 eq 9007199254740992L"],
      ["Int64Small lt 10000000000L", "Int64Small gt 10000000000L"],
      [odata`Date eq ${DATE}`, odata`Date eq ${later}`],
      [`DatePrecise eq datetime'${PRECISE}'`, "DatePrecise eq datetime'2024-02-29T13:14:15.1234568Z'"],
      [`Guid eq guid'${GUID}'`, "Guid eq guid'00000000-0000-0000-0000-000000000000'"],
      ["BoolTrue eq true", "BoolTrue eq false"],
      [odata`Unicode eq ${UNICODE}`, odata`Unicode eq ${UNICODE.slice(0, -1)}`],
      ["Str eq 'hello world'", "Str eq 'Hello world'"],
      ["Double eq 3.141592653589793", "Double eq 3.1415926535897927"],
    ];
    for (const [match, other] of pairs) {
      assert.equal(await count(match), 1, match);
      assert.equal(await count(other), 0, other);
    }
  });
});
