// Table operations through @azure/data-tables (spec 1.2, 1.9, 1.10).
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { odata } from "@azure/data-tables";
import {
  collect,
  collectPages,
  expectRestError,
  responseRecorder,
  serviceClient,
  tableClient,
  uniqueTableName,
} from "./helpers.mjs";

const svc = serviceClient();

async function tableNames(options) {
  return (await collect(svc.listTables(options))).map((t) => t.name);
}

async function exists(name) {
  return (await tableNames({ queryOptions: { filter: odata`TableName eq ${name}` } })).includes(name);
}

describe("tables", { timeout: 60_000 }, () => {
  test("createTable preserves the name's case", async () => {
    const name = "MiXeDCase" + uniqueTableName("").slice(0, 12);
    const rec = responseRecorder();
    await svc.createTable(name, { onResponse: rec.onResponse });
    try {
      assert.equal(rec.last().status, rec.last().prefer === "return-no-content" ? 204 : 201, `Prefer ${rec.last().prefer}`);
      const listed = (await tableNames()).filter((n) => n.toLowerCase() === name.toLowerCase());
      assert.deepEqual(listed, [name]);
      assert.deepEqual(await tableNames({ queryOptions: { filter: odata`TableName eq ${name}` } }), [name]);
    } finally {
      await svc.deleteTable(name);
    }
  });

  test("creating a duplicate table answers 409 TableAlreadyExists (also differing only in case)", async () => {
    const name = "Dup" + uniqueTableName("").slice(0, 12);
    await svc.createTable(name);
    try {
      for (const other of [name, name.toUpperCase(), name.toLowerCase()]) {
        // The SDK swallows TableAlreadyExists on createTable; assert the raw answer.
        const rec = responseRecorder();
        await svc.createTable(other, { onResponse: rec.onResponse });
        assert.ok(rec.statuses.includes(409), `statuses ${rec.statuses}`);
        assert.ok(
          rec.responses.some((r) => r.status === 409 && r.code === "TableAlreadyExists"),
          JSON.stringify(rec.responses.map((r) => [r.status, r.code])),
        );
        // Same via TableClient.createTable.
        const rec2 = responseRecorder();
        await tableClient(other).createTable({ onResponse: rec2.onResponse });
        assert.ok(rec2.responses.some((r) => r.status === 409 && r.code === "TableAlreadyExists"));
      }
      const matching = (await tableNames()).filter((n) => n.toLowerCase() === name.toLowerCase());
      assert.deepEqual(matching, [name]);
    } finally {
      await svc.deleteTable(name);
    }
  });

  test("listTables pages with NextTableName continuation", async () => {
    const prefix = "pg" + uniqueTableName("").slice(0, 10);
    const names = Array.from({ length: 7 }, (_, i) => `${prefix}${String(i).padStart(2, "0")}`).sort();
    await Promise.all(names.map((n) => svc.createTable(n)));
    try {
      const filter = `TableName ge '${prefix}' and TableName lt '${prefix}z'`;
      const pages = await collectPages(svc.listTables({ queryOptions: { filter } }), { maxPageSize: 3 });
      assert.ok(pages.length >= 3, `expected >= 3 pages, got ${pages.length}`);
      assert.ok(pages.every((p) => p.length <= 3));
      assert.ok(pages[0].continuationToken, "first page must carry a continuation token");
      const flat = pages.flat().map((t) => t.name);
      assert.equal(new Set(flat).size, flat.length, "a table was returned twice");
      assert.deepEqual([...flat].sort(), names);

      // Resume from the first page's token.
      const first = (await svc.listTables({ queryOptions: { filter } }).byPage({ maxPageSize: 3 }).next()).value;
      const rest = await collectPages(svc.listTables({ queryOptions: { filter } }), {
        maxPageSize: 3,
        continuationToken: first.continuationToken,
      });
      const all = [...first, ...rest.flat()].map((t) => t.name);
      assert.deepEqual([...all].sort(), names);
      assert.equal(new Set(all).size, all.length);

      // Unfiltered listing also pages and contains all of them.
      const unfiltered = await collectPages(svc.listTables(), { maxPageSize: 2 });
      assert.ok(unfiltered.length >= 4);
      assert.ok(unfiltered.every((p) => p.length <= 2));
      const seen = unfiltered.flat().map((t) => t.name);
      assert.equal(new Set(seen).size, seen.length);
      for (const n of names) assert.ok(seen.includes(n), `${n} missing from listTables`);
    } finally {
      await Promise.all(names.map((n) => svc.deleteTable(n)));
    }
  });

  test("deleteTable removes the table and its entities", async () => {
    const name = uniqueTableName();
    await svc.createTable(name);
    const client = tableClient(name);
    await client.createEntity({ partitionKey: "p", rowKey: "r", v: 1 });
    const rec = responseRecorder();
    await svc.deleteTable(name, { onResponse: rec.onResponse });
    assert.equal(rec.last().status, 204);
    assert.equal(await exists(name), false);
    await expectRestError(client.getEntity("p", "r"), 404, "TableNotFound");

    await client.createTable();
    try {
      assert.deepEqual(await collect(client.listEntities()), []);
      await expectRestError(client.getEntity("p", "r"), 404, "ResourceNotFound");
    } finally {
      await client.deleteTable();
    }
    assert.equal(await exists(name), false);
  });

  test("deleting a missing table answers 404 ResourceNotFound", async () => {
    // The SDK swallows a 404 on deleteTable; assert the raw answer.
    const rec = responseRecorder();
    await svc.deleteTable(uniqueTableName(), { onResponse: rec.onResponse });
    assert.equal(rec.last().status, 404);
    assert.equal(rec.last().code, "ResourceNotFound");
  });

  for (const [label, bad] of [
    ["too short", "ab"],
    ["too long", "a".repeat(64)],
    ["starts with a digit", "1abc"],
    ["has '-'", "ab-cd"],
    ["has '_'", "ab_cd"],
  ]) {
    test(`invalid table name (${label}) answers 400`, async () => {
      await expectRestError(svc.createTable(bad), 400, "InvalidResourceName");
      const lower = (await tableNames()).map((n) => n.toLowerCase());
      assert.ok(!lower.includes(bad.toLowerCase()));
    });
  }

  test("createTable on an existing table keeps its data", async () => {
    const name = uniqueTableName();
    const client = tableClient(name);
    await client.createTable();
    try {
      await client.createEntity({ partitionKey: "p", rowKey: "r" });
      await client.createTable(); // if-not-exists semantics in the JS SDK
      const rows = await collect(client.listEntities());
      assert.deepEqual(rows.map((e) => e.rowKey), ["r"]);
    } finally {
      await client.deleteTable();
    }
  });

  test("entity operations on a missing table answer 404 TableNotFound", async () => {
    const client = tableClient(uniqueTableName());
    await expectRestError(client.createEntity({ partitionKey: "p", rowKey: "r" }), 404, "TableNotFound");
    await expectRestError(collect(client.listEntities()), 404, "TableNotFound");
  });
});
