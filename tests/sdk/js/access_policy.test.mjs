// Stored access policies through @azure/data-tables (spec 1.2 Get/Set Table ACL, 1.7 stored
// access policy): setAccessPolicy/getAccessPolicy round trip, the limit of 5, SAS tokens
// naming a policy (identifier), revocation by deleting the policy, fields given twice.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { AzureNamedKeyCredential, AzureSASCredential, TableClient, generateTableSas } from "@azure/data-tables";
import { CLIENT_OPTIONS, collect, expectRestError, freshTable, settings } from "./helpers.mjs";

const { endpoint, accountName, accountKey } = settings();
const cred = new AzureNamedKeyCredential(accountName, accountKey);

/** Whole seconds (the SDK sends SAS and policy times without milliseconds). */
const minutes = (m) => new Date(Math.floor((Date.now() + m * 60_000) / 1000) * 1000);

function sasClient(name, options) {
  return new TableClient(endpoint, name, new AzureSASCredential(generateTableSas(name, cred, options)), CLIENT_OPTIONS);
}

const byId = (acl) => Object.fromEntries(acl.map((si) => [si.id, si.accessPolicy ?? {}]));

describe("stored access policies", { timeout: 60_000 }, () => {
  let t;
  before(async () => {
    t = await freshTable("jsacl");
    await t.client.createEntity({ partitionKey: "p", rowKey: "r", v: 1 });
  });
  after(async () => {
    await t?.cleanup();
  });

  test("setAccessPolicy / getAccessPolicy round trip", async () => {
    assert.deepEqual(await t.client.getAccessPolicy(), []);
    const start = new Date("2030-01-02T03:04:05Z");
    const expiry = new Date("2031-06-07T08:09:10Z");
    await t.client.setAccessPolicy([
      { id: "read-only", accessPolicy: { start, expiry, permission: "r" } },
      { id: "writer", accessPolicy: { expiry, permission: "raud" } },
      { id: "perm-only", accessPolicy: { permission: "a" } },
    ]);
    const got = await t.client.getAccessPolicy();
    assert.deepEqual(got.map((si) => si.id), ["read-only", "writer", "perm-only"]);
    const m = byId(got);
    assert.equal(m["read-only"].start?.getTime(), start.getTime());
    assert.equal(m["read-only"].expiry?.getTime(), expiry.getTime());
    assert.equal(m["read-only"].permission, "r");
    assert.ok(!m.writer.start, `writer has no start: ${m.writer.start}`);
    assert.equal(m.writer.expiry?.getTime(), expiry.getTime());
    assert.equal(m.writer.permission, "raud");
    assert.ok(!m["perm-only"].start && !m["perm-only"].expiry);
    assert.equal(m["perm-only"].permission, "a");

    // A set replaces the whole ACL; an empty set clears it.
    await t.client.setAccessPolicy([{ id: "only", accessPolicy: { expiry, permission: "d" } }]);
    assert.deepEqual((await t.client.getAccessPolicy()).map((si) => si.id), ["only"]);
    await t.client.setAccessPolicy([]);
    assert.deepEqual(await t.client.getAccessPolicy(), []);
  });

  test("six policies are 400 and change nothing", async () => {
    const expiry = minutes(60);
    const five = [0, 1, 2, 3, 4].map((i) => ({ id: `id${i}`, accessPolicy: { expiry, permission: "r" } }));
    await t.client.setAccessPolicy(five);
    await expectRestError(
      t.client.setAccessPolicy([...five, { id: "id5", accessPolicy: { expiry, permission: "r" } }]),
      400,
      "InvalidXmlDocument",
    );
    assert.deepEqual((await t.client.getAccessPolicy()).map((si) => si.id), ["id0", "id1", "id2", "id3", "id4"]);
    await t.client.setAccessPolicy([]);
  });

  test("a SAS naming a policy takes its fields from the policy", async () => {
    await t.client.setAccessPolicy([
      { id: "reader", accessPolicy: { expiry: minutes(60), permission: "r" } },
      { id: "adder", accessPolicy: { permission: "ra" } },
    ]);
    const reader = sasClient(t.name, { identifier: "reader" });
    const token = generateTableSas(t.name, cred, { identifier: "reader" });
    const q = new URLSearchParams(token);
    assert.equal(q.get("si"), "reader");
    assert.equal(q.get("sp"), null, "the token itself carries no permission");
    assert.equal((await reader.getEntity("p", "r")).v, 1);
    assert.equal((await collect(reader.listEntities())).length, 1);
    await expectRestError(reader.createEntity({ partitionKey: "p", rowKey: "n" }), 403, "AuthorizationPermissionMismatch");
    // The policy gives the permission, the token the expiry.
    const adder = sasClient(t.name, { identifier: "adder", expiresOn: minutes(30) });
    await adder.createEntity({ partitionKey: "p", rowKey: "n", v: 2 });
    assert.equal((await t.client.getEntity("p", "n")).v, 2);
    await t.client.deleteEntity("p", "n");
    // No expiry anywhere: not valid.
    await expectRestError(sasClient(t.name, { identifier: "adder" }).getEntity("p", "r"), 403, "AuthenticationFailed");
  });

  test("deleting the policy revokes the SAS; re-creating it restores it", async () => {
    const policy = [{ id: "reader", accessPolicy: { expiry: minutes(60), permission: "r" } }];
    await t.client.setAccessPolicy(policy);
    const c = sasClient(t.name, { identifier: "reader" });
    assert.equal((await c.getEntity("p", "r")).v, 1);
    await t.client.setAccessPolicy([]);
    // docs/compatibility.md: a missing stored policy is 403 AuthorizationFailure
    await expectRestError(c.getEntity("p", "r"), 403, "AuthorizationFailure");
    await expectRestError(collect(c.listEntities()), 403, "AuthorizationFailure");
    await t.client.setAccessPolicy(policy);
    assert.equal((await c.getEntity("p", "r")).v, 1);
    await t.client.setAccessPolicy([{ id: "reader", accessPolicy: { expiry: minutes(-1), permission: "r" } }]);
    await expectRestError(c.getEntity("p", "r"), 403, "AuthenticationFailed");
    await expectRestError(sasClient(t.name, { identifier: "ghost" }).getEntity("p", "r"), 403, "AuthorizationFailure");
  });

  test("a field both in the token and in the policy is 400", async () => {
    await t.client.setAccessPolicy([
      { id: "full", accessPolicy: { start: minutes(-10), expiry: minutes(60), permission: "r" } },
    ]);
    for (const extra of [{ expiresOn: minutes(30) }, { permissions: { query: true } }, { startsOn: minutes(-5) }]) {
      await expectRestError(
        sasClient(t.name, { identifier: "full", ...extra }).getEntity("p", "r"),
        400,
        "InvalidQueryParameterValue",
      );
    }
    assert.equal((await sasClient(t.name, { identifier: "full" }).getEntity("p", "r")).v, 1);
    await t.client.setAccessPolicy([]);
  });
});
