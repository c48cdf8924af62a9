// azure-storage 2.10.7 (Node, JSON, x-ms-version 2018-03-28): the operations its users
// rely on, against aztable. The server comes from AZTABLE_CONNECTION_STRING
// (scripts/sdk-tests.sh starts one and exports it).
import { test } from "node:test";
import assert from "node:assert/strict";
import { createRequire } from "node:module";
import { randomUUID } from "node:crypto";
import { promisify } from "node:util";

const require = createRequire(import.meta.url);
const azure = require("azure-storage");
const { TableQuery, TableBatch, TableUtilities } = azure;
const gen = TableUtilities.entityGenerator;

const cs = process.env.AZTABLE_CONNECTION_STRING;
if (!cs) throw new Error("AZTABLE_CONNECTION_STRING is not set; run via scripts/sdk-tests.sh");
// no retries: a failure shows at once
const svc = azure.createTableService(cs).withFilter(new azure.LinearRetryPolicyFilter(0, 0));
const call = (name, ...args) => promisify(svc[name].bind(svc))(...args);

async function withTable(fn) {
  const table = "legacyjs" + randomUUID().replaceAll("-", "").slice(0, 12);
  await call("createTable", table);
  try {
    await fn(table);
  } finally {
    await call("deleteTableIfExists", table);
  }
}

const GUID = "c9da6455-213d-42c9-9a79-3e9149a57833";
const WHEN = new Date(Date.UTC(2020, 1, 29, 12, 34, 56, 789));

test("every type round-trips", () =>
  withTable(async (table) => {
    await call("insertEntity", table, {
      PartitionKey: gen.String("p"),
      RowKey: gen.String("1"),
      S: gen.String("<script>\u00e9\u{1F600}"),
      I32: gen.Int32(-2147483648),
      I64: gen.Int64("9223372036854775807"),
      D: gen.Double(1.5),
      DWhole: gen.Double(5),
      B: gen.Boolean(true),
      Dt: gen.DateTime(WHEN),
      G: gen.Guid(GUID),
      Bin: gen.Binary(Buffer.from([0, 1, 255])),
    });
    const e = await call("retrieveEntity", table, "p", "1");
    assert.equal(e.S._, "<script>\u00e9\u{1F600}");
    assert.equal(e.I32._, -2147483648);
    assert.equal(e.I64.$, "Edm.Int64");
    assert.equal(e.I64._, "9223372036854775807");
    assert.equal(e.D._, 1.5);
    assert.equal(e.DWhole.$, "Edm.Double");
    assert.equal(e.DWhole._, 5);
    assert.equal(e.B._, true);
    assert.equal(e.Dt._.getTime(), WHEN.getTime());
    assert.equal(e.G.$, "Edm.Guid");
    assert.equal(e.G._, GUID);
    assert.deepEqual([...e.Bin._], [0, 1, 255]);
    assert.match(e[".metadata"].etag, /^W\/"datetime'/);
    // typed filters
    const q = new TableQuery()
      .where("I64 eq ?int64?", "9223372036854775807")
      .and("G eq ?guid?", GUID)
      .and("Dt eq ?date?", WHEN)
      // (?double? writes a whole 5 as `5`, an Int32 literal, which matches no Double 5
      // on the service: docs/filter-grammar.md)
      .and("D eq ?double?", 1.5);
    const found = await call("queryEntities", table, q, null);
    assert.deepEqual(found.entries.map((x) => x.RowKey._), ["1"]);
  }));

test("query with a filter and continuation", () =>
  withTable(async (table) => {
    const batch = new TableBatch();
    for (let i = 0; i < 30; i++) {
      batch.insertEntity({ PartitionKey: gen.String("p"), RowKey: gen.String(String(i).padStart(3, "0")), N: gen.Int32(i) });
    }
    await call("executeBatch", table, batch);
    const q = new TableQuery().where("N ge ?", 10).and("N lt ?", 25).top(4);
    const first = await call("queryEntities", table, q, null);
    assert.deepEqual(first.entries.map((e) => e.N._), [10, 11, 12, 13]);
    assert.ok(first.continuationToken, "a continuation after the first page");
    const rest = await call("queryEntities", table, new TableQuery().where("N ge ?", 10).and("N lt ?", 25), first.continuationToken);
    assert.deepEqual(rest.entries.map((e) => e.N._), [14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24]);
  }));

test("update, merge and delete with ETags", () =>
  withTable(async (table) => {
    const e = { PartitionKey: gen.String("p"), RowKey: gen.String("r"), A: gen.Int32(1), B: gen.String("x") };
    const inserted = await call("insertEntity", table, e);
    const etag = inserted[".metadata"].etag;
    const replaced = await call("replaceEntity", table, {
      PartitionKey: gen.String("p"), RowKey: gen.String("r"), A: gen.Int32(2), ".metadata": { etag },
    });
    const etag2 = replaced[".metadata"].etag;
    assert.notEqual(etag2, etag);
    await assert.rejects(
      call("replaceEntity", table, { PartitionKey: gen.String("p"), RowKey: gen.String("r"), ".metadata": { etag } }),
      (err) => err.statusCode === 412,
    );
    const merged = await call("mergeEntity", table, {
      PartitionKey: gen.String("p"), RowKey: gen.String("r"), C: gen.Boolean(true), ".metadata": { etag: etag2 },
    });
    const got = await call("retrieveEntity", table, "p", "r");
    assert.deepEqual([got.A._, got.C._, got.B], [2, true, undefined]);
    await assert.rejects(
      call("deleteEntity", table, { PartitionKey: gen.String("p"), RowKey: gen.String("r"), ".metadata": { etag: etag2 } }),
      (err) => err.statusCode === 412,
    );
    await call("deleteEntity", table, {
      PartitionKey: gen.String("p"), RowKey: gen.String("r"), ".metadata": { etag: merged[".metadata"].etag },
    });
    await assert.rejects(call("retrieveEntity", table, "p", "r"), (err) => err.statusCode === 404);
    await call("insertOrReplaceEntity", table, { PartitionKey: gen.String("p"), RowKey: gen.String("u"), A: gen.Int32(1) });
    await call("insertOrMergeEntity", table, { PartitionKey: gen.String("p"), RowKey: gen.String("u"), B: gen.Int32(2) });
    const u = await call("retrieveEntity", table, "p", "u");
    assert.deepEqual([u.A._, u.B._], [1, 2]);
  }));

test("a batch commits, and fails, as a whole", () =>
  withTable(async (table) => {
    const key = (rk) => ({ PartitionKey: gen.String("b"), RowKey: gen.String(rk) });
    let batch = new TableBatch();
    batch.insertEntity({ ...key("1"), V: gen.Int32(1) });
    batch.insertOrReplaceEntity({ ...key("2"), V: gen.Int32(2) });
    batch.insertOrMergeEntity({ ...key("3"), V: gen.Int32(3) });
    const results = await call("executeBatch", table, batch);
    assert.equal(results.length, 3);
    assert.ok(results.every((r) => !r.error && r.response.isSuccessful), JSON.stringify(results));
    batch = new TableBatch();
    batch.replaceEntity({ ...key("1"), V: gen.Int32(10) });
    batch.mergeEntity({ ...key("2"), W: gen.Int32(20) });
    batch.deleteEntity(key("3"));
    await call("executeBatch", table, batch);
    batch = new TableBatch();
    batch.insertEntity(key("4"));
    batch.insertEntity(key("1")); // exists
    let failed;
    try {
      failed = await call("executeBatch", table, batch);
    } catch (err) {
      failed = err;
    }
    const failures = Array.isArray(failed) ? failed.filter((r) => r.error) : [failed];
    assert.ok(failures.length >= 1, JSON.stringify(failed));
    const all = await call("queryEntities", table, new TableQuery(), null);
    assert.deepEqual(all.entries.map((e) => e.RowKey._), ["1", "2"]);
    assert.equal(all.entries[0].V._, 10);
    assert.equal(all.entries[1].W._, 20);
  }));

test("errors", () =>
  withTable(async (table) => {
    const e = { PartitionKey: gen.String("p"), RowKey: gen.String("r") };
    await call("insertEntity", table, e);
    await assert.rejects(call("insertEntity", table, e), (err) => err.statusCode === 409 && err.code === "EntityAlreadyExists");
    await assert.rejects(call("retrieveEntity", table, "p", "nope"), (err) => err.statusCode === 404 && err.code === "ResourceNotFound");
    await assert.rejects(call("createTable", table), (err) => err.statusCode === 409 && err.code === "TableAlreadyExists");
    const created = await call("createTableIfNotExists", table);
    assert.equal(created.created, false);
    const listed = await call("listTablesSegmented", null);
    assert.ok(listed.entries.includes(table));
    const bad = TableUtilities.entityGenerator.String("x");
    await assert.rejects(
      call("insertEntity", table, { PartitionKey: gen.String("p"), RowKey: gen.String("bad/key"), X: bad }),
      (err) => err.statusCode === 400,
    );
  }));
