// Paging over 1,200 entities in 12 partitions through the JS SDK: whole-table listing, a
// partition-range query and `or` unions of key ranges (which the server scans as separate
// ranges), following the continuation until done. The heavier 5,000-entity fixture is the
// Python suite's (test_paging_large.py); this one keeps the JS SDK's continuation
// handling covered at a fraction of the load time.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { byKeys, collectPages, freshTable, inChunks } from "./helpers.mjs";

const PARTITIONS = 12;
const ROWS = 100; // per partition: one full transaction each
const pk = (p) => `p${String(p).padStart(2, "0")}`;
const rk = (r) => `r${String(r).padStart(3, "0")}`;
const ALL_KEYS = [];
for (let p = 0; p < PARTITIONS; p++) for (let r = 0; r < ROWS; r++) ALL_KEYS.push([pk(p), rk(r)]);
ALL_KEYS.sort(byKeys);

const keysOf = (page) => page.map((e) => [e.partitionKey, e.rowKey]);

function check(pages, expected, pageSize) {
  const flat = pages.flatMap(keysOf);
  assert.equal(new Set(flat.map(([p, r]) => `${p}/${r}`)).size, flat.length, "an entity came back twice");
  assert.deepEqual(flat, expected, "results must be in (PartitionKey, RowKey) order, all of them");
  assert.ok(pages.every((p) => p.length <= pageSize));
  assert.ok(
    pages.slice(0, -1).every((p) => p.length === pageSize),
    `every page but the last is full: ${pages.map((p) => p.length)}`,
  );
}

describe("paging over 1,200 entities in 12 partitions", { timeout: 120_000 }, () => {
  let t;
  before(async () => {
    t = await freshTable("jslarge");
    const partitions = Array.from({ length: PARTITIONS }, (_, p) => PARTITIONS - 1 - p);
    await inChunks(partitions, 10, (p) => {
      // Rows in reverse order: insertion order is not key order.
      const ops = [];
      for (let r = ROWS - 1; r >= 0; r--) {
        ops.push(["create", { partitionKey: pk(p), rowKey: rk(r), n: p * ROWS + r }]);
      }
      return t.client.submitTransaction(ops);
    });
  });
  after(async () => {
    if (t) await t.cleanup();
  });

  test("listEntities in pages of 1000", async () => {
    const pages = await collectPages(t.client.listEntities(), { maxPageSize: 1000 });
    assert.equal(pages.length, 2);
    check(pages, ALL_KEYS, 1000);
  });

  test("a partition range in pages of 300", async () => {
    const filter = "PartitionKey ge 'p03' and PartitionKey lt 'p08'";
    const pages = await collectPages(t.client.listEntities({ queryOptions: { filter } }), { maxPageSize: 300 });
    const expected = ALL_KEYS.filter(([p]) => p >= "p03" && p < "p08");
    assert.equal(expected.length, 500);
    assert.deepEqual(
      pages.map((p) => p.length),
      [300, 200],
    );
    check(pages, expected, 300);
  });

  test("an or of partitions pages across the union", async () => {
    const filter = "PartitionKey eq 'p11' or PartitionKey eq 'p03' or PartitionKey eq 'p07'";
    const pages = await collectPages(t.client.listEntities({ queryOptions: { filter } }), { maxPageSize: 120 });
    const expected = ALL_KEYS.filter(([p]) => ["p03", "p07", "p11"].includes(p));
    assert.equal(expected.length, 300);
    check(pages, expected, 120);
  });

  test("an or of row ranges, pages ending at range ends", async () => {
    const filter =
      "(PartitionKey eq 'p05' and RowKey ge 'r090') or (PartitionKey eq 'p06' and RowKey lt 'r010')" +
      " or (PartitionKey eq 'p10' and RowKey eq 'r050')";
    const expected = [
      ...Array.from({ length: 10 }, (_, i) => ["p05", rk(90 + i)]),
      ...Array.from({ length: 10 }, (_, i) => ["p06", rk(i)]),
      ["p10", "r050"],
    ];
    for (const pageSize of [1, 7, 10, 1000]) {
      const pages = await collectPages(t.client.listEntities({ queryOptions: { filter } }), {
        maxPageSize: pageSize,
      });
      check(pages, expected, pageSize);
    }
  });
});
