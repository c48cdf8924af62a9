// Authentication through @azure/data-tables (spec 1.7).
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { AzureNamedKeyCredential, TableClient, TableServiceClient, odata } from "@azure/data-tables";
import {
  CLIENT_OPTIONS,
  collect,
  connectionStringFor,
  expectRestError,
  freshTable,
  serviceClient,
  settings,
  uniqueTableName,
} from "./helpers.mjs";

const WRONG_KEY = Buffer.from("this is definitely not the account key!!".repeat(2)).toString("base64");

describe("authentication", { timeout: 60_000 }, () => {
  const { endpoint, accountName, accountKey } = settings();
  let t;
  before(async () => {
    t = await freshTable("jsa");
    await t.client.createEntity({ partitionKey: "p", rowKey: "r", v: 1 });
  });
  after(async () => {
    if (t) await t.cleanup();
  });

  test("a wrong account key answers 403 AuthenticationFailed", async () => {
    const cs = connectionStringFor(endpoint, accountName, WRONG_KEY);
    const badSvc = TableServiceClient.fromConnectionString(cs, CLIENT_OPTIONS);
    const bad = TableClient.fromConnectionString(cs, t.name, CLIENT_OPTIONS);
    await expectRestError(collect(badSvc.listTables()), 403, "AuthenticationFailed");
    const name = uniqueTableName();
    await expectRestError(badSvc.createTable(name), 403, "AuthenticationFailed");
    await expectRestError(bad.getEntity("p", "r"), 403, "AuthenticationFailed");
    await expectRestError(collect(bad.listEntities()), 403, "AuthenticationFailed");
    await expectRestError(bad.upsertEntity({ partitionKey: "p", rowKey: "r", v: 2 }), 403, "AuthenticationFailed");
    await expectRestError(bad.deleteEntity("p", "r"), 403, "AuthenticationFailed");
    // Nothing changed.
    assert.equal((await t.client.getEntity("p", "r")).v, 1);
    const svc = serviceClient();
    assert.deepEqual(await collect(svc.listTables({ queryOptions: { filter: odata`TableName eq ${name}` } })), []);
  });

  test("a wrong account name is rejected", async () => {
    const client = new TableServiceClient(
      endpoint,
      new AzureNamedKeyCredential("someotheraccount", accountKey),
      CLIENT_OPTIONS,
    );
    await expectRestError(collect(client.listTables()), 403, "AuthenticationFailed");
  });

  test("an anonymous client is rejected", async () => {
    const anon = new TableClient(endpoint, t.name, CLIENT_OPTIONS);
    const err = await expectRestError(anon.getEntity("p", "r"), 401, "NoAuthenticationInformation");
    assert.ok(!(err.response?.bodyAsText ?? "").includes('"v"'), "anonymous error leaked entity data");
    await expectRestError(collect(anon.listEntities()), 401, "NoAuthenticationInformation");
  });

  test("TableServiceClient with AzureNamedKeyCredential works", async () => {
    const svc = new TableServiceClient(endpoint, new AzureNamedKeyCredential(accountName, accountKey), CLIENT_OPTIONS);
    const name = uniqueTableName();
    await svc.createTable(name);
    try {
      const names = (await collect(svc.listTables({ queryOptions: { filter: odata`TableName eq ${name}` } }))).map(
        (x) => x.name,
      );
      assert.deepEqual(names, [name]);
      const tc = new TableClient(endpoint, name, new AzureNamedKeyCredential(accountName, accountKey), CLIENT_OPTIONS);
      await tc.createEntity({ partitionKey: "p", rowKey: "r", v: "named" });
      assert.equal((await tc.getEntity("p", "r")).v, "named");
      await tc.updateEntity({ partitionKey: "p", rowKey: "r", v: "again" }, "Replace");
      assert.equal((await tc.getEntity("p", "r")).v, "again");
    } finally {
      await svc.deleteTable(name);
    }
  });

  test(
    "UseDevelopmentStorage=true connection string works",
    { skip: process.env.AZTABLE_DEFAULT_PORT_TEST !== "1" && "set AZTABLE_DEFAULT_PORT_TEST=1 with a server on 127.0.0.1:10002" },
    async () => {
      const svc = TableServiceClient.fromConnectionString("UseDevelopmentStorage=true");
      const name = uniqueTableName("dev");
      await svc.createTable(name);
      try {
        const tc = TableClient.fromConnectionString("UseDevelopmentStorage=true", name);
        await tc.createEntity({ partitionKey: "p", rowKey: "r", v: "dev" });
        assert.equal((await tc.getEntity("p", "r")).v, "dev");
      } finally {
        await svc.deleteTable(name);
      }
    },
  );
});
