// Entity query paging over > 1000 entities (NextPartitionKey / NextRowKey continuation).
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { byKeys, collect, collectPages, freshTable, inChunks } from "./helpers.mjs";

const N = 1100;
const PARTITIONS = ["pa", "pb", "pc"];
const key = (i) => [PARTITIONS[i % PARTITIONS.length], `row${String(i).padStart(5, "0")}`];
const expectedKeys = (pk) =>
  Array.from({ length: N }, (_, i) => key(i))
    .filter(([p]) => pk === undefined || p === pk)
    .sort(byKeys);
const keysOf = (rows) => rows.map((e) => [e.partitionKey, e.rowKey]);

describe("paging over > 1000 entities", { timeout: 180_000 }, () => {
  let t;
  before(async () => {
    t = await freshTable("jsbig");
    // Insert in a shuffled order, 50 requests at a time.
    const order = Array.from({ length: N }, (_, i) => i);
    let seed = 1234;
    for (let i = order.length - 1; i > 0; i--) {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      const j = seed % (i + 1);
      [order[i], order[j]] = [order[j], order[i]];
    }
    await inChunks(order, 50, (i) => {
      const [pk, rk] = key(i);
      return t.client.createEntity({ partitionKey: pk, rowKey: rk, n: i, pad: "x".repeat(32) });
    });
  });
  after(async () => {
    if (t) await t.cleanup();
  });

  test("listEntities returns all entities in pages of at most 1000, in key order", async () => {
    const pages = await collectPages(t.client.listEntities());
    assert.ok(pages.length >= 2, `1100 entities cannot fit in one page, got ${pages.length}`);
    assert.ok(pages.every((p) => p.length <= 1000));
    assert.ok(pages[0].continuationToken, "first page must carry a continuation token");
    assert.deepEqual(keysOf(pages.flat()), expectedKeys());
    // The plain async iterator follows continuations too.
    assert.equal((await collect(t.client.listEntities())).length, N);
  });

  test("maxPageSize caps pages across the whole table", async () => {
    const pages = await collectPages(t.client.listEntities(), { maxPageSize: 250 });
    assert.ok(pages.length >= 5);
    assert.ok(pages.every((p) => p.length <= 250));
    assert.equal(pages[0].length, 250);
    assert.deepEqual(keysOf(pages.flat()), expectedKeys());
  });

  test("single-partition filter pages in RowKey order", async () => {
    const pages = await collectPages(
      t.client.listEntities({ queryOptions: { filter: "PartitionKey eq 'pb'" } }),
      { maxPageSize: 100 },
    );
    assert.ok(pages.length >= 4);
    assert.ok(pages.every((p) => p.length <= 100));
    assert.deepEqual(keysOf(pages.flat()), expectedKeys("pb"));
  });

  test("sparse filter across pages", async () => {
    const rows = await collect(
      t.client.listEntities({ queryOptions: { filter: "n ge 1000 or n lt 5" } }).byPage({ maxPageSize: 20 }),
    );
    const flat = rows.flat();
    assert.deepEqual(
      flat.map((e) => e.n).sort((a, b) => a - b),
      [...Array.from({ length: 5 }, (_, i) => i), ...Array.from({ length: 100 }, (_, i) => 1000 + i)],
    );
    assert.deepEqual(keysOf(flat), [...keysOf(flat)].sort(byKeys));
  });

  test("resuming from a continuation token yields exactly the remainder", async () => {
    const first = (await t.client.listEntities().byPage({ maxPageSize: 400 }).next()).value;
    assert.equal(first.length, 400);
    assert.ok(first.continuationToken);
    const rest = await collectPages(t.client.listEntities(), {
      maxPageSize: 400,
      continuationToken: first.continuationToken,
    });
    assert.deepEqual(keysOf([...first, ...rest.flat()]), expectedKeys());
  });

  test("select over pages", async () => {
    const rows = await collect(t.client.listEntities({ queryOptions: { select: ["n"] } }));
    assert.equal(rows.length, N);
    for (const r of rows) {
      const user = Object.keys(r).filter((k) => !["etag", "timestamp"].includes(k) && !k.startsWith("odata."));
      assert.deepEqual(user, ["n"]);
    }
    const byKey = new Map(Array.from({ length: N }, (_, i) => [key(i).join("\u0000"), i]));
    assert.deepEqual(
      rows.map((r) => r.n),
      expectedKeys().map((k) => byKey.get(k.join("\u0000"))),
    );
  });
});
