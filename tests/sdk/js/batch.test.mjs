// Entity group transactions through TableClient.submitTransaction (spec 1.4, 5).
// @azure/data-tables 13.x has no TableTransactionError: a failed transaction rejects with a
// RestError whose statusCode/code are the failing part's and whose message starts "<index>:".
import { after, beforeEach, describe, test } from "node:test";
import assert from "node:assert/strict";
import { TableTransaction } from "@azure/data-tables";
import { collect, freshTable, serviceClient, tableClient, uniqueTableName } from "./helpers.mjs";

/** User properties of an entity (no keys, etag, timestamp or odata.* annotations). */
function props(entity) {
  const { partitionKey, rowKey, etag, timestamp, ...rest } = entity;
  return Object.fromEntries(Object.entries(rest).filter(([k]) => !k.startsWith("odata.")));
}

/** All entities as { "PK/RK": props }. */
async function rows(client) {
  const out = {};
  for (const e of await collect(client.listEntities())) out[`${e.partitionKey}/${e.rowKey}`] = props(e);
  return out;
}

/** Awaits a promise expected to reject with the failing part of a transaction. */
async function expectTransactionError(promise, index, status, code) {
  let caught;
  try {
    await promise;
  } catch (err) {
    caught = err;
  }
  assert.ok(caught, `expected the transaction to fail with ${status} ${code}`);
  assert.equal(caught.name, "RestError", `${caught.name}: ${caught.message}`);
  assert.equal(caught.statusCode, status, caught.message);
  assert.equal(caught.code, code, caught.message);
  assert.ok(caught.message.startsWith(`${index}:`), `message must start with "${index}:": ${caught.message}`);
  return caught;
}

describe("batch", { timeout: 60_000 }, () => {
  let t;
  let client;
  beforeEach(async () => {
    if (t) await t.cleanup();
    t = await freshTable("jsb");
    client = t.client;
  });
  after(async () => {
    if (t) await t.cleanup();
  });

  test("create, update (merge/replace), upsert (merge/replace) and delete in one transaction", async () => {
    const rep = await client.createEntity({ partitionKey: "p", rowKey: "rep", old: 1, keep: "x" });
    await client.createEntity({ partitionKey: "p", rowKey: "mrg", old: 1, keep: "x" });
    await client.createEntity({ partitionKey: "p", rowKey: "ups-m", old: 1, keep: "x" });
    await client.createEntity({ partitionKey: "p", rowKey: "ups-r", old: 1, keep: "x" });
    await client.createEntity({ partitionKey: "p", rowKey: "del" });

    const res = await client.submitTransaction(
      [
        ["create", { partitionKey: "p", rowKey: "new", n: 1 }],
        ["update", { partitionKey: "p", rowKey: "rep", n: 2 }, "Replace", { etag: rep.etag }],
        ["update", { partitionKey: "p", rowKey: "mrg", n: 3 }, "Merge"],
        ["upsert", { partitionKey: "p", rowKey: "ups-m", n: 4 }, "Merge"],
        ["upsert", { partitionKey: "p", rowKey: "ups-r", n: 5 }, "Replace"],
        ["upsert", { partitionKey: "p", rowKey: "ups-new", n: 6 }, "Merge"],
        ["delete", { partitionKey: "p", rowKey: "del" }],
    ]);
    assert.equal(res.status, 202);
    // The JS SDK sends Prefer: return-no-content on creates: every part is a 204.
    assert.deepEqual(
      res.subResponses.map((r) => r.status),
      [204, 204, 204, 204, 204, 204, 204],
    );
    const keys = ["new", "rep", "mrg", "ups-m", "ups-r", "ups-new"];
    for (const [i, rk] of keys.entries()) {
      const sub = res.subResponses[i];
      assert.ok(sub.etag, `part ${i} has no etag: ${JSON.stringify(sub)}`);
      assert.equal((await client.getEntity("p", rk)).etag, sub.etag, rk);
    }
    assert.notEqual(res.subResponses[1].etag, rep.etag);
    // getResponseForEntity reads the RowKey from the create part's Location header.
    assert.equal(res.getResponseForEntity("new")?.etag, res.subResponses[0].etag);

    assert.deepEqual(await rows(client), {
      "p/new": { n: 1 },
      "p/rep": { n: 2 },
      "p/mrg": { old: 1, keep: "x", n: 3 },
      "p/ups-m": { old: 1, keep: "x", n: 4 },
      "p/ups-r": { n: 5 },
      "p/ups-new": { n: 6 },
    });
  });

  test("TableTransaction helper builds the same kind of transaction", async () => {
    const tx = new TableTransaction();
    tx.createEntity({ partitionKey: "h", rowKey: "1", v: "a" });
    tx.upsertEntity({ partitionKey: "h", rowKey: "2", v: "b" }, "Replace");
    const res = await client.submitTransaction(tx.actions);
    assert.deepEqual(res.subResponses.map((r) => r.status), [204, 204]);
    assert.deepEqual(await rows(client), { "h/1": { v: "a" }, "h/2": { v: "b" } });
  });

  for (const [kind, status, code] of [
    ["conflict", 409, "EntityAlreadyExists"],
    ["stale", 412, "UpdateConditionNotSatisfied"],
    ["missing", 404, "ResourceNotFound"],
  ]) {
    test(`a failing 3rd operation (${kind}) rolls back the whole transaction`, async () => {
      const upd = await client.createEntity({ partitionKey: "p", rowKey: "upd", v: "orig" });
      const old = await client.createEntity({ partitionKey: "p", rowKey: "exists", v: "orig" });
      // Make `old.etag` stale.
      await client.updateEntity({ partitionKey: "p", rowKey: "exists", v: "orig" }, "Replace");
      const third = {
        conflict: ["create", { partitionKey: "p", rowKey: "exists", v: "dup" }],
        stale: ["update", { partitionKey: "p", rowKey: "exists", v: "x" }, "Replace", { etag: old.etag }],
        missing: ["delete", { partitionKey: "p", rowKey: "missing" }],
      }[kind];
      await expectTransactionError(
        client.submitTransaction([
          ["create", { partitionKey: "p", rowKey: "fresh", v: "new" }],
          ["update", { partitionKey: "p", rowKey: "upd", v: "changed" }, "Merge"],
          third,
          ["create", { partitionKey: "p", rowKey: "never", v: "new" }],
        ]),
        2,
        status,
        code,
      );
      assert.deepEqual(await rows(client), { "p/upd": { v: "orig" }, "p/exists": { v: "orig" } });
      assert.equal((await client.getEntity("p", "upd")).etag, upd.etag);
    });
  }

  test("different partition keys are refused by the SDK before sending", async () => {
    // The server's 400 CommandsInBatchActOnDifferentPartitions is checked over raw HTTP
    // in tests/batch.rs.
    await assert.rejects(
      client.submitTransaction([
        ["create", { partitionKey: "a", rowKey: "1" }],
        ["create", { partitionKey: "b", rowKey: "1" }],
      ]),
      /same partitionKey/,
    );
    assert.deepEqual(await rows(client), {});
  });

  test("the same row twice is 400 InvalidDuplicateRow", async () => {
    await client.createEntity({ partitionKey: "p", rowKey: "r", v: 1 });
    await expectTransactionError(
      client.submitTransaction([
        ["create", { partitionKey: "p", rowKey: "other" }],
        ["upsert", { partitionKey: "p", rowKey: "r", v: 2 }, "Merge"],
        ["delete", { partitionKey: "p", rowKey: "r" }],
      ]),
      2,
      400,
      "InvalidDuplicateRow",
    );
    assert.deepEqual(await rows(client), { "p/r": { v: 1 } });
  });

  test("100 operations succeed; 101 are 400 InvalidInput", async () => {
    const make = (pk, n) =>
      Array.from({ length: n }, (_, i) => ["create", { partitionKey: pk, rowKey: String(i).padStart(3, "0"), i }]);
    const res = await client.submitTransaction(make("ok", 100));
    assert.equal(res.subResponses.length, 100);
    assert.ok(res.subResponses.every((r) => r.status === 204 && r.etag));
    assert.equal(Object.keys(await rows(client)).length, 100);

    await expectTransactionError(client.submitTransaction(make("no", 101)), 0, 400, "InvalidInput");
    const after = await rows(client);
    assert.equal(Object.keys(after).length, 100);
    assert.deepEqual(after["ok/042"], { i: 42 });
  });

  test("a transaction over 4 MiB is 413 RequestBodyTooLarge, every time", async () => {
    const big = "x".repeat(30_000);
    const actions = Array.from({ length: 100 }, (_, i) => ["create", { partitionKey: "p", rowKey: String(i), a: big, b: big }]);
    // Repeated on purpose: the client must get the 413 each time (not a reset connection).
    for (let attempt = 0; attempt < 3; attempt++) {
      let caught;
      try {
        await client.submitTransaction(actions);
      } catch (err) {
        caught = err;
      }
      assert.ok(caught, "the oversized transaction succeeded");
      assert.equal(caught.statusCode, 413, `attempt ${attempt}: ${caught.name} ${caught.code}: ${caught.message}`);
      assert.equal(caught.code, "RequestBodyTooLarge");
    }
    assert.deepEqual(await rows(client), {});
  });

  test("a transaction on a missing table is 404 TableNotFound", async () => {
    const name = uniqueTableName("jsbmissing");
    const missing = tableClient(name);
    await expectTransactionError(
      missing.submitTransaction([["create", { partitionKey: "p", rowKey: "r" }]]),
      0,
      404,
      "TableNotFound",
    );
    const names = (await collect(serviceClient().listTables())).map((x) => x.name);
    assert.ok(!names.includes(name));
  });
});
