// A user's node:test suite of orders.mjs, with the gate recipe of docs/ci-gate.md: a
// clean slate before each test, and after each one the partition advisor's findings;
// a full table scan (or another --insightFailOn kind) fails the test that caused it and
// is then cleared. Run: node --test gate_example/orders.check.mjs
import { afterEach, beforeEach, test } from "node:test";
import assert from "node:assert/strict";
import { TableClient } from "@azure/data-tables";
import { addOrder, ordersOf } from "./orders.mjs";

const endpoint = process.env.AZTABLE_ENDPOINT.replace(/\/+$/, "");
const server = endpoint.slice(0, endpoint.lastIndexOf("/")); // http://127.0.0.1:10002

beforeEach(async () => {
  const reset = await fetch(`${server}/_aztable/data`, { method: "DELETE" });
  assert.equal(reset.status, 200);
});

afterEach(async () => {
  const res = await fetch(`${server}/_aztable/insight/findings`);
  const body = await res.json();
  if (res.status === 409) {
    await fetch(`${server}/_aztable/insight/findings`, { method: "DELETE" });
    const named = body.findings.map((f) => `${f.kind} ${f.table} ${JSON.stringify(f.subject)}`);
    assert.fail(`partition advisor: ${named.join("; ")}`);
  }
  assert.equal(res.status, 200);
});

test("orders of a customer", async () => {
  const table = TableClient.fromConnectionString(process.env.AZTABLE_CONNECTION_STRING, "orders", {
    allowInsecureConnection: true,
  });
  await table.createTable();
  for (const [customer, id] of [["alice", "o1"], ["alice", "o2"], ["bob", "o3"]]) {
    await addOrder(table, customer, id, 10);
  }
  assert.deepEqual(await ordersOf(table, "alice"), ["o1", "o2"]);
});
