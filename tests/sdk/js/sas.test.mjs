// Shared access signatures made by @azure/data-tables (spec 1.7): generateTableSas and
// generateAccountSas used through AzureSASCredential. Allowed operations succeed; each
// refusal has the documented status and code; table SAS key ranges limit queries, point
// operations and transactions.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import {
  AzureNamedKeyCredential,
  AzureSASCredential,
  TableClient,
  TableServiceClient,
  generateAccountSas,
  generateTableSas,
} from "@azure/data-tables";
import {
  CLIENT_OPTIONS,
  byKeys,
  collect,
  collectPages,
  expectRestError,
  freshTable,
  serviceClient,
  settings,
  uniqueTableName,
} from "./helpers.mjs";

const { endpoint, accountName, accountKey } = settings();
const cred = new AzureNamedKeyCredential(accountName, accountKey);

const minutes = (m) => new Date(Date.now() + m * 60_000);

function tablePermissions(s) {
  return { query: s.includes("r"), add: s.includes("a"), update: s.includes("u"), delete: s.includes("d") };
}

function accountPermissions(s) {
  const p = {};
  for (const [c, name] of Object.entries({ r: "query", w: "write", d: "delete", l: "list", a: "add", u: "update" })) {
    if (s.includes(c)) p[name] = true;
  }
  return p;
}

function tableSas(name, perms, options = {}) {
  return generateTableSas(name, cred, {
    permissions: tablePermissions(perms),
    startsOn: minutes(-5),
    expiresOn: minutes(60),
    ...options,
  });
}

function accountSas(resourceTypes, perms, options = {}) {
  return generateAccountSas(cred, {
    resourceTypes,
    permissions: accountPermissions(perms),
    startsOn: minutes(-5),
    expiresOn: minutes(60),
    ...options,
  });
}

const sasTable = (name, token) => new TableClient(endpoint, name, new AzureSASCredential(token), CLIENT_OPTIONS);
const sasService = (token) => new TableServiceClient(endpoint, new AzureSASCredential(token), CLIENT_OPTIONS);

const keysOf = (entities) => entities.map((e) => [e.partitionKey, e.rowKey]).sort(byKeys);

/** The token with some fields replaced (signature unchanged unless `sig` is given). */
function withFields(token, fields) {
  const q = new URLSearchParams(token);
  for (const [k, v] of Object.entries(fields)) q.set(k, v);
  return q.toString();
}

const MISMATCH = "AuthorizationPermissionMismatch";
/** A write outside a SAS's key range (docs/compatibility.md: 403 `AuthorizationFailure`), and its message. */
const OUTSIDE = "AuthorizationFailure";
const OUTSIDE_MESSAGE =
  "This request is not authorized to perform this operation: the entity is outside the SAS key range.";

describe("table SAS", { timeout: 60_000 }, () => {
  let t;
  let other;
  before(async () => {
    t = await freshTable("jssas");
    other = await freshTable("jssaso");
  });
  after(async () => {
    await t?.cleanup();
    await other?.cleanup();
  });

  async function reset() {
    for (const e of await collect(t.client.listEntities())) await t.client.deleteEntity(e.partitionKey, e.rowKey);
    await t.client.createEntity({ partitionKey: "p", rowKey: "r", v: 1 });
  }

  test("raud allows every entity operation", async () => {
    await reset();
    const c = sasTable(t.name, tableSas(t.name, "raud"));
    assert.equal((await c.getEntity("p", "r")).v, 1);
    await c.createEntity({ partitionKey: "p", rowKey: "n", v: 2 });
    await c.updateEntity({ partitionKey: "p", rowKey: "n", v: 3 }, "Replace");
    await c.upsertEntity({ partitionKey: "p", rowKey: "m", v: 4 }, "Merge");
    await c.upsertEntity({ partitionKey: "p", rowKey: "m", w: 5 }, "Replace");
    assert.deepEqual(keysOf(await collect(c.listEntities())), [["p", "m"], ["p", "n"], ["p", "r"]]);
    await c.deleteEntity("p", "r");
    assert.deepEqual(keysOf(await collect(t.client.listEntities())), [["p", "m"], ["p", "n"]]);
    assert.equal((await t.client.getEntity("p", "n")).v, 3);
    const m = await t.client.getEntity("p", "m");
    assert.equal(m.w, 5);
    assert.equal(m.v, undefined);
  });

  test("a missing permission is 403 AuthorizationPermissionMismatch", async () => {
    await reset();
    const reader = sasTable(t.name, tableSas(t.name, "r"));
    await expectRestError(reader.createEntity({ partitionKey: "p", rowKey: "n" }), 403, MISMATCH);
    await expectRestError(reader.updateEntity({ partitionKey: "p", rowKey: "r", v: 9 }), 403, MISMATCH);
    await expectRestError(reader.deleteEntity("p", "r"), 403, MISMATCH);
    const adder = sasTable(t.name, tableSas(t.name, "a"));
    await expectRestError(adder.getEntity("p", "r"), 403, MISMATCH);
    await expectRestError(collect(adder.listEntities()), 403, MISMATCH);
    assert.deepEqual(keysOf(await collect(t.client.listEntities())), [["p", "r"]]);
    assert.equal((await t.client.getEntity("p", "r")).v, 1);
  });

  test("upserts need both a and u; update needs u", async () => {
    await reset();
    for (const perms of ["u", "a", "rd"]) {
      const c = sasTable(t.name, tableSas(t.name, perms));
      for (const mode of ["Merge", "Replace"]) {
        for (const rowKey of ["r", "new"]) {
          await expectRestError(c.upsertEntity({ partitionKey: "p", rowKey, v: 7 }, mode), 403, MISMATCH);
        }
      }
    }
    assert.deepEqual(keysOf(await collect(t.client.listEntities())), [["p", "r"]]);
    assert.equal((await t.client.getEntity("p", "r")).v, 1);
    await sasTable(t.name, tableSas(t.name, "u")).updateEntity({ partitionKey: "p", rowKey: "r", v: 2 }, "Merge");
    assert.equal((await t.client.getEntity("p", "r")).v, 2);
    const both = sasTable(t.name, tableSas(t.name, "au"));
    await both.upsertEntity({ partitionKey: "p", rowKey: "r", v: 3 }, "Replace");
    await both.upsertEntity({ partitionKey: "p", rowKey: "new", v: 4 }, "Merge");
    assert.equal((await t.client.getEntity("p", "r")).v, 3);
    assert.equal((await t.client.getEntity("p", "new")).v, 4);
  });

  test("expired, not yet valid and tampered tokens are 403 AuthenticationFailed", async () => {
    await reset();
    const expired = tableSas(t.name, "r", { startsOn: minutes(-120), expiresOn: minutes(-60) });
    await expectRestError(sasTable(t.name, expired).getEntity("p", "r"), 403, "AuthenticationFailed");
    const early = tableSas(t.name, "r", { startsOn: minutes(60), expiresOn: minutes(120) });
    await expectRestError(sasTable(t.name, early).getEntity("p", "r"), 403, "AuthenticationFailed");

    const token = tableSas(t.name, "r");
    const sig = new URLSearchParams(token).get("sig");
    const badSig = withFields(token, { sig: (sig[0] === "A" ? "B" : "A") + sig.slice(1) });
    await expectRestError(sasTable(t.name, badSig).getEntity("p", "r"), 403, "AuthenticationFailed");
    const widened = withFields(token, { sp: "raud" });
    await expectRestError(sasTable(t.name, widened).deleteEntity("p", "r"), 403, "AuthenticationFailed");
    const otherKey = new AzureNamedKeyCredential(accountName, Buffer.from("another key entirely").toString("base64"));
    const forged = generateTableSas(t.name, otherKey, { permissions: { query: true }, expiresOn: minutes(60) });
    await expectRestError(sasTable(t.name, forged).getEntity("p", "r"), 403, "AuthenticationFailed");
    assert.equal((await t.client.getEntity("p", "r")).v, 1);
  });

  test("another table, and table-level operations, are 403 AuthorizationFailure", async () => {
    await reset();
    await other.client.upsertEntity({ partitionKey: "p", rowKey: "r", v: 1 });
    const token = tableSas(t.name, "raud");
    const wrong = sasTable(other.name, token);
    await expectRestError(wrong.getEntity("p", "r"), 403, "AuthorizationFailure");
    await expectRestError(collect(wrong.listEntities()), 403, "AuthorizationFailure");
    await expectRestError(wrong.createEntity({ partitionKey: "p", rowKey: "x" }), 403, "AuthorizationFailure");
    await expectRestError(wrong.deleteEntity("p", "r"), 403, "AuthorizationFailure");
    const svc = sasService(token);
    const name = uniqueTableName();
    await expectRestError(svc.createTable(name), 403, "AuthorizationFailure");
    await expectRestError(collect(svc.listTables()), 403, "AuthorizationFailure");
    await expectRestError(svc.deleteTable(t.name), 403, "AuthorizationFailure");
    await expectRestError(sasTable(t.name, token).getAccessPolicy(), 403, "AuthorizationFailure");
    const names = (await collect(serviceClient().listTables())).map((x) => x.name);
    assert.ok(names.includes(t.name) && names.includes(other.name) && !names.includes(name), names.join());
  });

  test("sip outside the range is 403 AuthorizationSourceIPMismatch", async () => {
    await reset();
    for (const ipRange of [{ start: "10.0.0.1", end: "10.0.0.255" }, { start: "127.0.0.2", end: "127.0.0.9" }]) {
      const c = sasTable(t.name, tableSas(t.name, "r", { ipRange }));
      await expectRestError(c.getEntity("p", "r"), 403, "AuthorizationSourceIPMismatch");
    }
    for (const ipRange of [{ start: "127.0.0.1" }, { start: "127.0.0.0", end: "127.0.0.255" }]) {
      assert.equal((await sasTable(t.name, tableSas(t.name, "r", { ipRange })).getEntity("p", "r")).v, 1);
    }
  });

  test("spr=https over http is 403 AuthorizationProtocolMismatch", async () => {
    await reset();
    const https = sasTable(t.name, tableSas(t.name, "r", { protocol: "https" }));
    await expectRestError(https.getEntity("p", "r"), 403, "AuthorizationProtocolMismatch");
    const both = sasTable(t.name, tableSas(t.name, "r", { protocol: "https,http" }));
    assert.equal((await both.getEntity("p", "r")).v, 1);
  });
});

describe("account SAS", { timeout: 60_000 }, () => {
  let t;
  before(async () => {
    t = await freshTable("jsacct");
    await t.client.createEntity({ partitionKey: "p", rowKey: "r", v: 1 });
  });
  after(async () => {
    await t?.cleanup();
  });

  test("resource types and permissions", async () => {
    const RT = "AuthorizationResourceTypeMismatch";
    const lister = sasService(accountSas("s", "l"));
    assert.ok((await collect(lister.listTables())).some((x) => x.name === t.name));
    await expectRestError(collect(sasService(accountSas("co", "rwdlau")).listTables()), 403, RT);
    await expectRestError(collect(sasService(accountSas("s", "r")).listTables()), 403, MISMATCH);

    const name = uniqueTableName();
    await expectRestError(sasService(accountSas("so", "rwdlau")).createTable(name), 403, RT);
    await expectRestError(sasService(accountSas("c", "rl")).createTable(name), 403, MISMATCH);
    // @azure/data-tables cannot sign `c`; create accepts `w` as well.
    const creator = sasService(accountSas("c", "w"));
    await creator.createTable(name);
    try {
      assert.ok((await collect(lister.listTables())).some((x) => x.name === name));
      await expectRestError(creator.deleteTable(name), 403, MISMATCH);
      await sasService(accountSas("c", "d")).deleteTable(name);
      assert.ok(!(await collect(lister.listTables())).some((x) => x.name === name));
    } finally {
      await serviceClient().deleteTable(name);
    }

    const reader = sasTable(t.name, accountSas("o", "r"));
    assert.equal((await reader.getEntity("p", "r")).v, 1);
    await expectRestError(reader.createEntity({ partitionKey: "p", rowKey: "n" }), 403, MISMATCH);
    await expectRestError(sasTable(t.name, accountSas("sc", "rwdlau")).getEntity("p", "r"), 403, RT);
    for (const perms of ["a", "u"]) {
      const c = sasTable(t.name, accountSas("o", perms));
      await expectRestError(c.upsertEntity({ partitionKey: "p", rowKey: "up", v: 2 }), 403, MISMATCH);
    }
    const writer = sasTable(t.name, accountSas("o", "rdau"));
    await writer.upsertEntity({ partitionKey: "p", rowKey: "up", v: 2 });
    await writer.deleteEntity("p", "up");
    assert.deepEqual(keysOf(await collect(t.client.listEntities())), [["p", "r"]]);
  });

  test("ss without t is 403 AuthorizationServiceMismatch", async () => {
    const token = accountSas("sco", "rwdlau", { services: { blob: true, queue: true, file: true } });
    assert.equal(new URLSearchParams(token).get("ss"), "bqf");
    await expectRestError(sasTable(t.name, token).getEntity("p", "r"), 403, "AuthorizationServiceMismatch");
    await expectRestError(collect(sasService(token).listTables()), 403, "AuthorizationServiceMismatch");
  });

  test("validity window, IP range and protocol", async () => {
    const expired = accountSas("o", "r", { startsOn: minutes(-120), expiresOn: minutes(-60) });
    await expectRestError(sasTable(t.name, expired).getEntity("p", "r"), 403, "AuthenticationFailed");
    const early = accountSas("o", "r", { startsOn: minutes(60), expiresOn: minutes(120) });
    await expectRestError(sasTable(t.name, early).getEntity("p", "r"), 403, "AuthenticationFailed");
    const widened = withFields(accountSas("o", "r"), { sp: "rwdlau" });
    await expectRestError(sasTable(t.name, widened).deleteEntity("p", "r"), 403, "AuthenticationFailed");
    const ip = accountSas("o", "r", { ipRange: { start: "192.168.0.1", end: "192.168.0.20" } });
    await expectRestError(sasTable(t.name, ip).getEntity("p", "r"), 403, "AuthorizationSourceIPMismatch");
    const https = accountSas("o", "r", { protocol: "https" });
    await expectRestError(sasTable(t.name, https).getEntity("p", "r"), 403, "AuthorizationProtocolMismatch");
    assert.equal((await t.client.getEntity("p", "r")).v, 1);
  });
});

describe("table SAS key ranges", { timeout: 60_000 }, () => {
  const RANGE = { startPartitionKey: "p1", startRowKey: "r2", endPartitionKey: "p2", endRowKey: "r1" };
  const inRange = ([pk, rk]) => (pk > "p1" || (pk === "p1" && rk >= "r2")) && (pk < "p2" || (pk === "p2" && rk <= "r1"));
  let t;
  let all;
  before(async () => {
    t = await freshTable("jsrange");
    const actions = [];
    for (let p = 0; p < 4; p++) {
      const batch = [];
      for (let r = 0; r < 4; r++) batch.push(["create", { partitionKey: `p${p}`, rowKey: `r${r}`, n: 10 * p + r }]);
      actions.push(t.client.submitTransaction(batch));
    }
    await Promise.all(actions);
    all = keysOf(await collect(t.client.listEntities()));
    assert.equal(all.length, 16);
  });
  after(async () => {
    await t?.cleanup();
  });

  test("queries return only the range", async () => {
    const expected = all.filter(inRange);
    assert.deepEqual(expected, [["p1", "r2"], ["p1", "r3"], ["p2", "r0"], ["p2", "r1"]]);
    const c = sasTable(t.name, tableSas(t.name, "r", RANGE));
    assert.deepEqual(keysOf(await collect(c.listEntities())), expected);
    const pages = await collectPages(c.listEntities(), { maxPageSize: 1 });
    assert.deepEqual(keysOf(pages.flat()), expected);
    const filtered = await collect(c.listEntities({ queryOptions: { filter: "n lt 21" } }));
    assert.deepEqual(keysOf(filtered), [["p1", "r2"], ["p1", "r3"], ["p2", "r0"]]);
    const lower = sasTable(t.name, tableSas(t.name, "r", { startPartitionKey: "p2", startRowKey: "r2" }));
    assert.deepEqual(
      keysOf(await collect(lower.listEntities())),
      all.filter(([pk, rk]) => pk > "p2" || (pk === "p2" && rk >= "r2")),
    );
  });

  test("point reads outside the range are 404, writes there 403 and write nothing", async () => {
    const c = sasTable(t.name, tableSas(t.name, "raud", RANGE));
    assert.equal((await c.getEntity("p1", "r2")).n, 12);
    for (const [pk, rk] of [["p1", "r1"], ["p2", "r2"], ["p0", "r3"], ["p3", "r0"]]) {
      // a point read outside the range is answered as if the entity did not exist
      await expectRestError(c.getEntity(pk, rk), 404, "ResourceNotFound");
      await expectRestError(c.updateEntity({ partitionKey: pk, rowKey: rk, n: -1 }, "Merge"), 403, OUTSIDE, OUTSIDE_MESSAGE);
      await expectRestError(c.upsertEntity({ partitionKey: pk, rowKey: rk, n: -1 }, "Replace"), 403, OUTSIDE, OUTSIDE_MESSAGE);
      await expectRestError(c.deleteEntity(pk, rk), 403, OUTSIDE, OUTSIDE_MESSAGE);
    }
    await expectRestError(c.createEntity({ partitionKey: "p1", rowKey: "r1x", n: -1 }), 403, OUTSIDE, OUTSIDE_MESSAGE);
    await expectRestError(c.createEntity({ partitionKey: "p3", rowKey: "a", n: -1 }), 403, OUTSIDE, OUTSIDE_MESSAGE);
    const now = await collect(t.client.listEntities());
    assert.deepEqual(keysOf(now), all);
    assert.ok(now.every((e) => e.n !== -1), "a refused write changed an entity");
  });

  test("a transaction with one out-of-range operation is refused as a whole", async () => {
    const c = sasTable(t.name, tableSas(t.name, "raud", RANGE));
    for (const actions of [
      [["create", { partitionKey: "p1", rowKey: "r8" }], ["create", { partitionKey: "p1", rowKey: "r0x" }]],
      [["upsert", { partitionKey: "p1", rowKey: "r1" }], ["create", { partitionKey: "p1", rowKey: "r8" }]],
      [["create", { partitionKey: "p1", rowKey: "r8" }], ["delete", { partitionKey: "p1", rowKey: "r0" }]],
    ]) {
      await expectRestError(c.submitTransaction(actions), 403, OUTSIDE, OUTSIDE_MESSAGE);
      assert.deepEqual(keysOf(await collect(t.client.listEntities())), all, JSON.stringify(actions));
    }
    const ok = await c.submitTransaction([
      ["create", { partitionKey: "p1", rowKey: "r8" }],
      ["upsert", { partitionKey: "p1", rowKey: "r9" }],
    ]);
    assert.equal(ok.status, 202);
    const keys = keysOf(await collect(t.client.listEntities()));
    assert.ok(JSON.stringify(keys).includes('["p1","r8"]') && JSON.stringify(keys).includes('["p1","r9"]'));
    await t.client.deleteEntity("p1", "r8");
    await t.client.deleteEntity("p1", "r9");
  });
});
