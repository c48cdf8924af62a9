// Values the real service accepts, as the SDKs' recordings of it show: an Edm.Boolean
// given as "False", key type annotations in update and upsert bodies (ignored there,
// refused on insert), DateTimes with nine fractional digits (stored at 100 ns), and a
// filter of 200 comparisons (Orleans' grain directory sends such filters).
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { collect, expectRestError, freshTable } from "./helpers.mjs";

describe("wire values", () => {
  let t;
  before(async () => {
    t = await freshTable("values");
  });
  after(async () => {
    await t.cleanup();
  });

  test("Edm.Boolean strings are read in any case", async () => {
    await t.client.createEntity({
      partitionKey: "b",
      rowKey: "r",
      f: { value: "False", type: "Boolean" },
      tr: { value: "True", type: "Boolean" },
      up: { value: "TRUE", type: "Boolean" },
      n: { value: "12345", type: "Int32" },
    });
    const e = await t.client.getEntity("b", "r");
    assert.equal(e.f, false);
    assert.equal(e.tr, true);
    assert.equal(e.up, true);
    assert.equal(e.n, 12345);
    await expectRestError(
      t.client.createEntity({ partitionKey: "b", rowKey: "bad", v: { value: "yes", type: "Boolean" } }),
      400,
      "InvalidInput",
    );
  });

  // The SDK types keys as strings; an annotation is sent as one more (string) property,
  // which puts it in the body exactly as the Python SDK's encoder does.
  test("key annotations: refused on insert, ignored on update, upsert and in a transaction", async () => {
    const pk = "2022-04-01T09:30:45.000000Z";
    const rk = "4738dc7e-bb2e-4b38-9a3e-a3b6eb0f5f7c";
    const typed = (n, rowKey = rk) => ({
      partitionKey: pk,
      "PartitionKey@odata.type": "Edm.DateTime",
      rowKey,
      "RowKey@odata.type": "Edm.Guid",
      n,
    });
    await expectRestError(t.client.createEntity(typed(0)), 400, "InvalidInput");
    let n = 0;
    for (const mode of ["Merge", "Replace"]) {
      await t.client.upsertEntity(typed(++n), mode);
      await t.client.updateEntity(typed(++n), mode);
      await t.client.updateEntity(typed(++n), mode, { etag: "*" });
    }
    const e = await t.client.getEntity(pk, rk);
    assert.equal(e.partitionKey, pk);
    assert.equal(e.rowKey, rk);
    assert.equal(e.n, n);

    await t.client.submitTransaction([
      ["upsert", typed(1, "t1"), "Replace"],
      ["upsert", typed(2, "t2"), "Merge"],
      ["update", typed(3), "Merge"],
    ]);
    assert.equal((await t.client.getEntity(pk, "t1")).n, 1);
    assert.equal((await t.client.getEntity(pk, "t2")).n, 2);
    assert.equal((await t.client.getEntity(pk, rk)).n, 3);
  });

  test("a DateTime with nine fractional digits is stored at 100 ns, rounded", async () => {
    await t.client.createEntity({
      partitionKey: "d",
      rowKey: "r",
      java: { value: "2023-04-11T21:16:49.114906917Z", type: "DateTime" },
      carry: { value: "2020-12-31T23:59:59.99999999Z", type: "DateTime" },
      tie: { value: "2020-01-01T00:00:00.12345685Z", type: "DateTime" },
    });
    const raw = await t.client.getEntity("d", "r", { disableTypeConversion: true });
    assert.deepEqual(raw.java, { value: "2023-04-11T21:16:49.1149069Z", type: "DateTime" });
    assert.deepEqual(raw.carry, { value: "2021-01-01T00:00:00Z", type: "DateTime" });
    assert.deepEqual(raw.tie, { value: "2020-01-01T00:00:00.1234568Z", type: "DateTime" });
    const hits = await collect(
      t.client.listEntities({ queryOptions: { filter: "java eq datetime'2023-04-11T21:16:49.114906917Z'" } }),
    );
    assert.deepEqual(
      hits.map((x) => x.rowKey),
      ["r"],
    );
  });

  test("a filter of 200 RowKey comparisons returns exactly the matching entities", async () => {
    const rows = Array.from({ length: 150 }, (_, i) => `g${String(i).padStart(3, "0")}`);
    for (let i = 0; i < rows.length; i += 100) {
      await t.client.submitTransaction(
        rows.slice(i, i + 100).map((rowKey) => ["create", { partitionKey: "orleans", rowKey }]),
      );
    }
    const wanted = Array.from({ length: 200 }, (_, i) => `g${String(2 * i + 1).padStart(3, "0")}`);
    const filter = `PartitionKey eq 'orleans' and (${wanted.map((rk) => `RowKey eq '${rk}'`).join(" or ")})`;
    const got = await collect(t.client.listEntities({ queryOptions: { filter } }));
    assert.deepEqual(
      got.map((e) => e.rowKey),
      wanted.filter((rk) => rk < "g150"),
    );
    const tooMany = Array(501).fill("RowKey eq 'g000'").join(" or ");
    await expectRestError(collect(t.client.listEntities({ queryOptions: { filter: tooMany } })), 400, "InvalidInput");
  });
});
