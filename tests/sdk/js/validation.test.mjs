// Entity validation errors surface with the service's codes (spec 1.9, 1.10).
// Azurite deviates from the real service here (no property-name validation, no 252-property
// limit, no Int32 range check); these tests assert the REAL service's behaviour.
import { after, beforeEach, describe, test } from "node:test";
import assert from "node:assert/strict";
import { collect, expectRestError, freshTable } from "./helpers.mjs";

const MAX_STRING_CHARS = 32 * 1024;
const MAX_BINARY_BYTES = 64 * 1024;
const MAX_CUSTOM_PROPERTIES = 252;

function manyProps(n, prefix = "p") {
  return Object.fromEntries(Array.from({ length: n }, (_, i) => [`${prefix}${i}`, i]));
}

describe("validation", { timeout: 60_000 }, () => {
  let t;
  let client;
  beforeEach(async () => {
    if (t) await t.cleanup();
    t = await freshTable("jsv");
    client = t.client;
  });
  after(async () => {
    if (t) await t.cleanup();
  });

  const assertEmpty = async () => assert.deepEqual(await collect(client.listEntities()), []);

  test("string property of 32K chars is accepted", async () => {
    const s = "s".repeat(MAX_STRING_CHARS);
    await client.createEntity({ partitionKey: "p", rowKey: "r", s });
    assert.equal((await client.getEntity("p", "r")).s, s);
  });

  test("string property over 32K chars answers 400 PropertyValueTooLarge", async () => {
    await expectRestError(
      client.createEntity({ partitionKey: "p", rowKey: "r", s: "s".repeat(MAX_STRING_CHARS + 1) }),
      400,
      "PropertyValueTooLarge",
    );
    await assertEmpty();
  });

  test("binary property over 64 KiB answers 400 PropertyValueTooLarge", async () => {
    const ok = new Uint8Array(MAX_BINARY_BYTES).fill(7);
    await client.createEntity({ partitionKey: "p", rowKey: "ok", b: ok });
    assert.equal((await client.getEntity("p", "ok")).b.length, MAX_BINARY_BYTES);
    await expectRestError(
      client.createEntity({ partitionKey: "p", rowKey: "r", b: new Uint8Array(MAX_BINARY_BYTES + 1) }),
      400,
      "PropertyValueTooLarge",
    );
  });

  test("252 custom properties are accepted", async () => {
    await client.createEntity({ partitionKey: "p", rowKey: "r", ...manyProps(MAX_CUSTOM_PROPERTIES) });
    const got = await client.getEntity("p", "r");
    assert.equal(got.p251, 251);
    assert.equal(Object.keys(got).filter((k) => /^p\d+$/.test(k)).length, MAX_CUSTOM_PROPERTIES);
  });

  test("253 custom properties answer 400 TooManyProperties", async () => {
    await expectRestError(
      client.createEntity({ partitionKey: "p", rowKey: "r", ...manyProps(MAX_CUSTOM_PROPERTIES + 1) }),
      400,
      "TooManyProperties",
    );
    await assertEmpty();
  });

  for (const name of ["bad-name", "has space", "semi;colon"]) {
    test(`invalid property name ${JSON.stringify(name)} answers 400 PropertyNameInvalid`, async () => {
      await expectRestError(
        client.createEntity({ partitionKey: "p", rowKey: "r", [name]: "v" }),
        400,
        "PropertyNameInvalid",
      );
      await assertEmpty();
    });
  }

  test("property name over 255 chars answers 400 PropertyNameTooLong", async () => {
    await client.createEntity({ partitionKey: "p", rowKey: "ok", ["n".repeat(255)]: 1 });
    await expectRestError(
      client.createEntity({ partitionKey: "p", rowKey: "r", ["n".repeat(256)]: 1 }),
      400,
      "PropertyNameTooLong",
    );
  });

  for (const [label, pk, rk] of [
    ["slash in PartitionKey", "a/b", "r"],
    ["slash in RowKey", "p", "a/b"],
    ["backslash", "a\\b", "r"],
    ["hash", "p", "a#b"],
    ["question mark", "p", "a?b"],
    ["tab", "p", "tab\there"],
    ["newline", "p", "new\nline"],
  ]) {
    test(`key with ${label} answers 400`, async () => {
      await expectRestError(client.createEntity({ partitionKey: pk, rowKey: rk, v: 1 }), 400, "InvalidInput");
      await assertEmpty();
    });
  }

  for (const value of [2147483648, -2147483649]) {
    test(`explicit Int32 out of range (${value}) answers 400`, async () => {
      await expectRestError(
        client.createEntity({ partitionKey: "p", rowKey: "r", n: { value, type: "Int32" } }),
        400,
        "InvalidInput",
      );
      await assertEmpty();
    });
  }

  test("explicit Int64 out of range answers 400", async () => {
    await expectRestError(
      client.createEntity({ partitionKey: "p", rowKey: "r", n: { value: "9223372036854775808", type: "Int64" } }),
      400,
      "InvalidInput",
    );
    await assertEmpty();
  });

  test("entity under 1 MiB is accepted", async () => {
    const props = Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`s${i}`, "y".repeat(30000)]));
    await client.createEntity({ partitionKey: "p", rowKey: "r", ...props });
    assert.equal((await client.getEntity("p", "r")).s9.length, 30000);
  });

  test("entity over 1 MiB answers 400 EntityTooLarge (insert)", async () => {
    const props = Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`s${i}`, "x".repeat(30000)]));
    await expectRestError(client.createEntity({ partitionKey: "p", rowKey: "r", ...props }), 400, "EntityTooLarge");
    await assertEmpty();
  });

  test("entity over 1 MiB answers 400 EntityTooLarge (upsert)", async () => {
    await client.createEntity({ partitionKey: "p", rowKey: "r", small: 1 });
    const props = Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`s${i}`, "x".repeat(30000)]));
    await expectRestError(client.upsertEntity({ partitionKey: "p", rowKey: "r", ...props }), 400, "EntityTooLarge");
    const got = await client.getEntity("p", "r");
    assert.equal(got.small, 1);
    assert.equal(got.s0, undefined);
  });

  test("error bodies carry odata.error with code and message", async () => {
    await client.createEntity({ partitionKey: "p", rowKey: "r" });
    const err = await expectRestError(client.createEntity({ partitionKey: "p", rowKey: "r" }), 409, "EntityAlreadyExists");
    const body = JSON.parse(err.response.bodyAsText);
    assert.equal(body["odata.error"].code, "EntityAlreadyExists");
    assert.equal(body["odata.error"].message.lang, "en-US");
    assert.ok(body["odata.error"].message.value.length > 0);
  });
});
