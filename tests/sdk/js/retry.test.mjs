// The SDK's default retry policy against a throttled server (--partitionRate) and one that
// injects faults (--faultRate): every write gets through, and the server's access log
// shows the 503s it was retried past. Starts its own servers: needs AZTABLE_BINARY
// (scripts/sdk-tests.sh sets it).
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { TableClient } from "@azure/data-tables";
import { CLIENT_OPTIONS, collect, connectionStringFor, startServer, uniqueTableName } from "./helpers.mjs";

const binary = process.env.AZTABLE_BINARY;
const skip = binary ? false : "AZTABLE_BINARY not set: the retry tests start their own servers";

/** 503s the server answered, from its access log. */
const busyAnswers = (log) => (log.match(/\bstatus=503\b/g) ?? []).length;

/** Runs `fn(client, server)` against a fresh table on a dedicated server started with `args`. */
async function withServer(args, fn) {
  const server = await startServer(binary, args);
  try {
    const client = TableClient.fromConnectionString(
      connectionStringFor(server.endpoint),
      uniqueTableName("retry"),
      CLIENT_OPTIONS,
    );
    await client.createTable();
    await fn(client, server);
  } finally {
    await server.stop();
  }
}

describe("default retries", { skip, timeout: 60_000 }, () => {
  test("get every write past the partition rate", async () => {
    await withServer(["--partitionRate", "50"], async (client, server) => {
      const started = Date.now();
      for (let i = 0; i < 200; i++) {
        await client.createEntity({ partitionKey: "p", rowKey: String(i).padStart(4, "0"), n: i });
      }
      const elapsed = (Date.now() - started) / 1000;
      const rows = await collect(client.listEntities());
      assert.deepEqual(
        rows.map((r) => r.rowKey).sort(),
        Array.from({ length: 200 }, (_, i) => String(i).padStart(4, "0")),
      );
      // 200 writes at 50/s past a 100-entity bucket: refused, retried, paced near the rate
      assert.ok(busyAnswers(server.log()) > 0, "no 503 was answered: the test proved nothing");
      assert.ok(elapsed >= 1.5, `200 writes in ${elapsed}s cannot respect 50/s`);
    });
  });

  test("get every write past injected faults", async () => {
    await withServer(["--faultRate", "0.3", "--faultSeed", "7"], async (client, server) => {
      for (let i = 0; i < 4; i++) {
        await client.upsertEntity({ partitionKey: "p", rowKey: String(i), n: i });
      }
      for (let i = 4; i < 6; i++) {
        await client.createEntity({ partitionKey: "p", rowKey: String(i), n: i });
      }
      const rows = await collect(client.listEntities());
      assert.deepEqual(rows.map((r) => r.n).sort(), [0, 1, 2, 3, 4, 5]);
      assert.equal((await client.getEntity("p", "3")).n, 3);
      assert.ok(busyAnswers(server.log()) >= 3, "about 30% of some 10 requests should have failed");
    });
  });
});
