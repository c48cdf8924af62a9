// What real clients send that a strict reading of the REST reference would refuse: an
// empty filter, a lower-case weak ETag prefix, an entity body over 4 MiB.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { collect, expectRestError, freshTable, serviceClient } from "./helpers.mjs";

describe("wire conformance", () => {
  let t;
  before(async () => {
    t = await freshTable("wire");
  });
  after(async () => {
    await t.cleanup();
  });

  test("an empty filter lists every entity and table", async () => {
    await t.client.createEntity({ partitionKey: "f", rowKey: "a", v: 1 });
    await t.client.createEntity({ partitionKey: "f", rowKey: "b", v: 2 });
    const entities = await collect(t.client.listEntities({ queryOptions: { filter: "" } }));
    assert.deepEqual(entities.filter((e) => e.partitionKey === "f").map((e) => e.rowKey), ["a", "b"]);
    const tables = await collect(serviceClient().listTables({ queryOptions: { filter: "" } }));
    assert.ok(tables.some((x) => x.name === t.name));
  });

  test("a lower-case weak ETag prefix matches, and a stale one is 412", async () => {
    const { etag } = await t.client.createEntity({ partitionKey: "e", rowKey: "r", v: 0 });
    const lower = etag.replace("W/", "w/");
    await t.client.updateEntity({ partitionKey: "e", rowKey: "r", v: 1 }, "Replace", { etag: lower });
    await expectRestError(
      t.client.updateEntity({ partitionKey: "e", rowKey: "r", v: 2 }, "Merge", { etag: lower }),
      412,
      "UpdateConditionNotSatisfied",
    );
    assert.equal((await t.client.getEntity("e", "r")).v, 1);
  });

  // 140 strings of 30,000 characters: just over 4 MiB of JSON (4.0-4.06 MiB)
  test("an entity body over 4 MiB is 413, one under it over 1 MiB is 400", async () => {
    const entity = (rowKey, n) => {
      const e = { partitionKey: "s", rowKey };
      for (let i = 0; i < n; i++) e[`s${i}`] = "y".repeat(30000);
      return e;
    };
    await expectRestError(t.client.createEntity(entity("huge", 140)), 413, "RequestBodyTooLarge");
    await expectRestError(t.client.createEntity(entity("large", 60)), 400, "EntityTooLarge");
    const left = await collect(t.client.listEntities({ queryOptions: { filter: "PartitionKey eq 's'" } }));
    assert.equal(left.length, 0);
  });
});

describe("typed nulls", () => {
  test("an invalid Date is sent as a typed null and not stored", async () => {
    const t = await freshTable("tnull");
    try {
      const sent = [];
      await t.client.createEntity(
        { partitionKey: "p", rowKey: "r", v: 1, when: new Date(Number.NaN) },
        { onResponse: (r) => sent.push(r.request.body) },
      );
      const e = await t.client.getEntity("p", "r");
      assert.equal(e.v, 1);
      assert.ok(!("when" in e), `an invalid Date was stored: ${JSON.stringify(e)}`);
      assert.match(String(sent[0]), /"when":null/, "the SDK sends the invalid Date as null");
    } finally {
      await t.cleanup();
    }
  });
});

describe("key order", () => {
  test("paging follows UTF-16 order where code-point order differs", async () => {
    const t = await freshTable("utf16");
    try {
      // U+10000 is D800 DC00 in UTF-16: before U+E000 and U+FFFF there, after them by code point.
      const rowKeys = ["\uffff", "\ue000", "\u{10000}", "z", "a"];
      for (const rowKey of rowKeys) await t.client.createEntity({ partitionKey: "p", rowKey });
      // JS strings compare by UTF-16 code units
      const utf16 = [...rowKeys].sort();
      const byCodePoint = [...rowKeys].sort((a, b) => a.codePointAt(0) - b.codePointAt(0));
      assert.notDeepEqual(utf16, byCodePoint, "the keys must tell the two orders apart");
      const seen = [];
      let pages = 0;
      for await (const page of t.client.listEntities().byPage({ maxPageSize: 1 })) {
        pages += 1;
        seen.push(...page.map((e) => e.rowKey));
      }
      assert.deepEqual(seen, utf16);
      assert.ok(pages >= rowKeys.length);
    } finally {
      await t.cleanup();
    }
  });
});
