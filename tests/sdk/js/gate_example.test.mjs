// The partition advisor as a CI gate, seen from a user's node:test suite
// (gate_example/): against a server started with --insightFailOn fullScan, the suite
// fails when the code under test scans the whole table and passes when its query names
// the partition. Starts its own server: needs AZTABLE_BINARY.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { dirname } from "node:path";
import { connectionStringFor, startServer } from "./helpers.mjs";

const binary = process.env.AZTABLE_BINARY;
const skip = binary ? false : "AZTABLE_BINARY not set: the gate example starts its own server";
const here = dirname(fileURLToPath(import.meta.url));

function runSuite(endpoint, query) {
  // a child `node --test` that sees the parent's test context would not run its file
  const { NODE_TEST_CONTEXT: _, ...env } = process.env;
  return spawnSync(process.execPath, ["--test", "gate_example/orders.check.mjs"], {
    cwd: here,
    encoding: "utf8",
    timeout: 300_000,
    env: {
      ...env,
      AZTABLE_ENDPOINT: endpoint,
      AZTABLE_CONNECTION_STRING: connectionStringFor(endpoint),
      ORDERS_QUERY: query,
    },
  });
}

test("the gate fails a full scan and passes a partition query", { skip }, async () => {
  const server = await startServer(binary, ["--insightFailOn", "fullScan"]);
  try {
    const scan = runSuite(server.endpoint, "scan");
    assert.notEqual(scan.status, 0, scan.stdout + scan.stderr);
    assert.match(scan.stdout, /partition advisor: fullScan orders "Customer eq 'alice'"/);
    const partition = runSuite(server.endpoint, "partition");
    assert.equal(partition.status, 0, partition.stdout + partition.stderr);
    assert.match(partition.stdout, /# pass 1/);
  } finally {
    await server.stop();
  }
});
