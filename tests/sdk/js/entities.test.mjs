// Entity CRUD through @azure/data-tables (spec 1.3, 1.6, 1.10).
import { after, beforeEach, describe, test } from "node:test";
import assert from "node:assert/strict";
import { odata } from "@azure/data-tables";
import {
  byKeys,
  collect,
  collectPages,
  expectRestError,
  freshTable,
  responseRecorder,
} from "./helpers.mjs";

const SPECIAL_KEYS = [
  ["it's", "o'clock"],
  ["''", "'"],
  ["with space", " leading and trailing "],
  ["unicodé", "日本語-😀-Ω"],
  ["100%", "%41%2F"],
  ["a+b", "1+1=2"],
  ["", "empty-partition-key"],
  ["empty-row-key", ""],
  ["", ""],
  ["&=,;:@$!*()~", "[]{}<>|^`\""],
];

/** User properties of an entity (no keys, etag, timestamp or odata.* annotations). */
function props(entity) {
  const { partitionKey, rowKey, etag, timestamp, ...rest } = entity;
  return Object.fromEntries(Object.entries(rest).filter(([k]) => !k.startsWith("odata.")));
}

describe("entities", { timeout: 120_000 }, () => {
  let t;
  let client;
  beforeEach(async () => {
    if (t) await t.cleanup();
    t = await freshTable("jse");
    client = t.client;
  });
  after(async () => {
    if (t) await t.cleanup();
  });

  test("createEntity returns an etag matching getEntity", async () => {
    const rec = responseRecorder();
    const res = await client.createEntity({ partitionKey: "p", rowKey: "r", v: 1 }, { onResponse: rec.onResponse });
    // the one answer: 204 with Preference-Applied when Prefer asks for no content, else 201
    assert.equal(rec.last().status, rec.last().prefer === "return-no-content" ? 204 : 201);
    assert.ok(res.etag, "createEntity returned no etag");
    const got = await client.getEntity("p", "r");
    assert.equal(got.etag, res.etag);
    assert.equal(got.v, 1);
    assert.equal(got.partitionKey, "p");
    assert.equal(got.rowKey, "r");
  });

  test("duplicate createEntity answers 409 EntityAlreadyExists", async () => {
    await client.createEntity({ partitionKey: "p", rowKey: "r", v: 1 });
    await expectRestError(client.createEntity({ partitionKey: "p", rowKey: "r", v: 2 }), 409, "EntityAlreadyExists");
    assert.equal((await client.getEntity("p", "r")).v, 1);
  });

  for (const [i, [pk, rk]] of SPECIAL_KEYS.entries()) {
    test(`point operations with special keys #${i} ${JSON.stringify([pk, rk])}`, async () => {
      await client.createEntity({ partitionKey: pk, rowKey: rk, v: "x" });
      let got = await client.getEntity(pk, rk);
      assert.equal(got.partitionKey, pk);
      assert.equal(got.rowKey, rk);
      assert.equal(got.v, "x");

      await client.updateEntity({ partitionKey: pk, rowKey: rk, v: "y" }, "Replace");
      assert.equal((await client.getEntity(pk, rk)).v, "y");
      await client.updateEntity({ partitionKey: pk, rowKey: rk, w: 1 }, "Merge");
      got = await client.getEntity(pk, rk);
      assert.deepEqual([got.v, got.w], ["y", 1]);

      const listed = await collect(client.listEntities());
      assert.deepEqual(listed.map((e) => [e.partitionKey, e.rowKey]), [[pk, rk]]);
      const found = await collect(
        client.listEntities({ queryOptions: { filter: odata`PartitionKey eq ${pk} and RowKey eq ${rk}` } }),
      );
      assert.deepEqual(found.map((e) => [e.partitionKey, e.rowKey]), [[pk, rk]]);

      await client.deleteEntity(pk, rk);
      await expectRestError(client.getEntity(pk, rk), 404, "ResourceNotFound");
    });
  }

  test("special keys are all distinct entities", async () => {
    await Promise.all(
      SPECIAL_KEYS.map(([pk, rk]) => client.createEntity({ partitionKey: pk, rowKey: rk, tag: `${pk}|${rk}` })),
    );
    for (const [pk, rk] of SPECIAL_KEYS) {
      assert.equal((await client.getEntity(pk, rk)).tag, `${pk}|${rk}`);
    }
    const listed = await collect(client.listEntities());
    assert.equal(listed.length, SPECIAL_KEYS.length);
    const keys = listed.map((e) => [e.partitionKey, e.rowKey]);
    assert.deepEqual(keys, [...keys].sort(byKeys));
  });

  test("getEntity on a missing entity answers 404 ResourceNotFound", async () => {
    await client.createEntity({ partitionKey: "p", rowKey: "r" });
    for (const [pk, rk] of [["p", "missing"], ["missing", "r"], ["P", "r"]]) {
      await expectRestError(client.getEntity(pk, rk), 404, "ResourceNotFound");
    }
  });

  test("updateEntity Replace drops unspecified properties", async () => {
    await client.createEntity({ partitionKey: "p", rowKey: "r", a: 1, b: "gone" });
    await client.updateEntity({ partitionKey: "p", rowKey: "r", a: 2, c: true }, "Replace");
    assert.deepEqual(props(await client.getEntity("p", "r")), { a: 2, c: true });
  });

  test("updateEntity Merge keeps unspecified properties", async () => {
    await client.createEntity({ partitionKey: "p", rowKey: "r", a: 1, b: "kept" });
    await client.updateEntity({ partitionKey: "p", rowKey: "r", a: 2, c: true }, "Merge");
    assert.deepEqual(props(await client.getEntity("p", "r")), { a: 2, b: "kept", c: true });
  });

  for (const mode of ["Replace", "Merge"]) {
    test(`updateEntity ${mode} on a missing entity answers 404 ResourceNotFound`, async () => {
      await expectRestError(
        client.updateEntity({ partitionKey: "p", rowKey: "nope", a: 1 }, mode),
        404,
        "ResourceNotFound",
      );
      assert.deepEqual(await collect(client.listEntities()), []);
    });

    test(`updateEntity ${mode} with etag: current succeeds, stale answers 412`, async () => {
      const etag1 = (await client.createEntity({ partitionKey: "p", rowKey: "r", a: 1 })).etag;
      const etag2 = (await client.updateEntity({ partitionKey: "p", rowKey: "r", a: 2 }, mode, { etag: etag1 })).etag;
      assert.ok(etag2);
      assert.notEqual(etag2, etag1);
      assert.equal((await client.getEntity("p", "r")).etag, etag2);

      await expectRestError(
        client.updateEntity({ partitionKey: "p", rowKey: "r", a: 3 }, mode, { etag: etag1 }),
        412,
        "UpdateConditionNotSatisfied",
      );
      const got = await client.getEntity("p", "r");
      assert.equal(got.a, 2);
      assert.equal(got.etag, etag2);

      await client.updateEntity({ partitionKey: "p", rowKey: "r", a: 4 }, mode, { etag: "*" });
      assert.equal((await client.getEntity("p", "r")).a, 4);
    });

    test(`upsertEntity ${mode} on new and existing entities`, async () => {
      await client.upsertEntity({ partitionKey: "p", rowKey: "r", a: 1, b: "x" }, mode);
      assert.deepEqual(props(await client.getEntity("p", "r")), { a: 1, b: "x" });
      const res = await client.upsertEntity({ partitionKey: "p", rowKey: "r", a: 2, c: 3.5 }, mode);
      assert.ok(res.etag);
      const got = await client.getEntity("p", "r");
      assert.deepEqual(props(got), mode === "Merge" ? { a: 2, b: "x", c: 3.5 } : { a: 2, c: 3.5 });
      assert.equal(got.etag, res.etag);
    });
  }

  test("etag and timestamp change on every write", async () => {
    await client.createEntity({ partitionKey: "p", rowKey: "r", n: 0 });
    const etags = [];
    const stamps = [];
    for (let i = 1; i <= 5; i++) {
      const got = await client.getEntity("p", "r");
      etags.push(got.etag);
      stamps.push(got.timestamp);
      if (i % 2) await client.updateEntity({ partitionKey: "p", rowKey: "r", n: i }, "Merge");
      else await client.upsertEntity({ partitionKey: "p", rowKey: "r", n: i }, "Replace");
    }
    assert.equal(new Set(etags).size, etags.length, `etags: ${etags}`);
    for (const s of stamps) {
      assert.equal(typeof s, "string");
      assert.match(s, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);
    }
    const ms = stamps.map((s) => Date.parse(s));
    for (let i = 1; i < ms.length; i++) assert.ok(ms[i] >= ms[i - 1], `timestamps not increasing: ${stamps}`);
    assert.equal(new Set(stamps).size, stamps.length, `timestamps repeat: ${stamps}`);
    assert.ok(Math.abs(Date.now() - ms[ms.length - 1]) < 300_000, "Timestamp should be the server's current time");
  });

  test("entities carry etag and timestamp metadata in point and list results", async () => {
    await client.createEntity({ partitionKey: "p", rowKey: "r" });
    const got = await client.getEntity("p", "r");
    assert.ok(got.etag.startsWith('W/"'), got.etag);
    assert.ok(got.timestamp);
    const [listed] = await collect(client.listEntities());
    assert.equal(listed.etag, got.etag);
    assert.equal(listed.timestamp, got.timestamp);
  });

  test("deleteEntity unconditional", async () => {
    await client.createEntity({ partitionKey: "p", rowKey: "r" });
    await client.createEntity({ partitionKey: "p", rowKey: "r2" });
    const rec = responseRecorder();
    await client.deleteEntity("p", "r", { onResponse: rec.onResponse });
    assert.equal(rec.last().status, 204);
    await expectRestError(client.getEntity("p", "r"), 404, "ResourceNotFound");
    assert.deepEqual((await collect(client.listEntities())).map((e) => e.rowKey), ["r2"]);
  });

  test("deleteEntity with etag: stale answers 412, current succeeds", async () => {
    const stale = (await client.createEntity({ partitionKey: "p", rowKey: "r", a: 1 })).etag;
    await client.updateEntity({ partitionKey: "p", rowKey: "r", a: 2 });
    const current = (await client.getEntity("p", "r")).etag;
    assert.notEqual(current, stale);
    await expectRestError(client.deleteEntity("p", "r", { etag: stale }), 412, "UpdateConditionNotSatisfied");
    assert.equal((await client.getEntity("p", "r")).a, 2);
    await client.deleteEntity("p", "r", { etag: current });
    await expectRestError(client.getEntity("p", "r"), 404, "ResourceNotFound");
  });

  test("deleteEntity on a missing entity answers 404 ResourceNotFound", async () => {
    await expectRestError(client.deleteEntity("p", "missing"), 404, "ResourceNotFound");
  });

  test("null properties are not stored", async () => {
    await client.createEntity({ partitionKey: "p", rowKey: "r", a: 1, n: null });
    const got = await client.getEntity("p", "r");
    assert.ok(!("n" in got));
    assert.equal(got.a, 1);
  });

  test("select on a point query returns only the named properties", async () => {
    await client.createEntity({ partitionKey: "p", rowKey: "r", a: 1, b: "two", c: 3.5, d: true });
    const got = await client.getEntity("p", "r", { queryOptions: { select: ["a", "c"] } });
    assert.deepEqual(props(got), { a: 1, c: 3.5 });
    assert.equal(got.partitionKey, undefined);
    assert.equal(got.b, undefined);
    assert.ok(got.etag);
  });

  test("select on a query returns only the named properties", async () => {
    for (let i = 0; i < 5; i++) {
      await client.createEntity({ partitionKey: "p", rowKey: `r${i}`, a: i, b: `b${i}`, c: i * 1.5 });
    }
    const rows = await collect(client.listEntities({ queryOptions: { select: ["b", "RowKey"] } }));
    assert.deepEqual(
      rows.map((r) => props(r)),
      Array.from({ length: 5 }, (_, i) => ({ b: `b${i}` })),
    );
    assert.deepEqual(rows.map((r) => r.rowKey), ["r0", "r1", "r2", "r3", "r4"]);
    assert.ok(rows.every((r) => r.partitionKey === undefined));
    const some = await collect(client.listEntities({ queryOptions: { filter: "a ge 3", select: ["a"] } }));
    assert.deepEqual(some.map((r) => props(r)), [{ a: 3 }, { a: 4 }]);
  });

  test("filters", async () => {
    for (let i = 0; i < 10; i++) {
      await client.createEntity({ partitionKey: `p${i % 2}`, rowKey: `r${String(i).padStart(2, "0")}`, n: i });
    }
    const q = async (filter) =>
      (await collect(client.listEntities({ queryOptions: { filter } }))).map((e) => e.n);
    assert.deepEqual(await q("PartitionKey eq 'p1' and n gt 4"), [5, 7, 9]);
    assert.deepEqual(await q(odata`n lt ${2} or RowKey eq ${"r09"}`), [0, 1, 9]);
  });

  test("results are in (PartitionKey, RowKey) ordinal order", async () => {
    const keys = ["B", "a", "A", "b", "_", "0", "Z", "~", "a0", "aa", "Aa"];
    const pks = ["pb", "pB", "pa"];
    await Promise.all(pks.flatMap((pk) => keys.map((rk) => client.createEntity({ partitionKey: pk, rowKey: rk }))));
    const got = (await collect(client.listEntities())).map((e) => [e.partitionKey, e.rowKey]);
    const expected = pks.flatMap((pk) => keys.map((rk) => [pk, rk])).sort(byKeys);
    assert.deepEqual(got, expected);
  });

  test("maxPageSize ($top) caps each page", async () => {
    await Promise.all(
      Array.from({ length: 23 }, (_, i) =>
        client.createEntity({ partitionKey: "p", rowKey: String(i).padStart(3, "0") }),
      ),
    );
    const pages = await collectPages(client.listEntities(), { maxPageSize: 7 });
    assert.ok(pages.length >= 4);
    assert.ok(pages.every((p) => p.length <= 7));
    assert.equal(pages[0].length, 7);
    assert.deepEqual(
      pages.flat().map((e) => e.rowKey),
      Array.from({ length: 23 }, (_, i) => String(i).padStart(3, "0")),
    );
  });
});
