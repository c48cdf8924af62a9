// How the server reads a request's URL, seen through @azure/data-tables: a table's URL
// given as the account URL gets the service's answers for it; an invalid table name gets
// the service's name errors; the -secondary endpoint refuses writes with
// InsufficientAccountPermissions; a point read outside a table SAS's key range is 404.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import {
  AzureNamedKeyCredential,
  AzureSASCredential,
  TableClient,
  TableServiceClient,
  generateTableSas,
} from "@azure/data-tables";
import {
  CLIENT_OPTIONS,
  collect,
  expectRestError,
  freshTable,
  serviceClient,
  settings,
  tableClient,
  uniqueTableName,
} from "./helpers.mjs";

const { endpoint, accountName, accountKey } = settings();
const cred = new AzureNamedKeyCredential(accountName, accountKey);

describe("a table URL given as the account URL", () => {
  test("is read with the table's name first", async () => {
    const name = uniqueTableName("jsurl");
    const wrong = new TableServiceClient(`${endpoint}/${name}`, cred, CLIENT_OPTIONS);
    await expectRestError(wrong.createTable(name), 404, "TableNotFound");
    const svc = serviceClient();
    await svc.createTable(name);
    try {
      await expectRestError(wrong.createTable(name), 400, "PropertiesNeedValue");
      await expectRestError(wrong.deleteTable(name), 400, "InvalidInput");
      await expectRestError(wrong.getProperties(), 400, "InvalidQueryParameterValue");
      await expectRestError(collect(wrong.listTables()), 501, "NotImplemented");
      const table = new TableClient(`${endpoint}/${name}`, name, cred, CLIENT_OPTIONS);
      await expectRestError(
        table.submitTransaction([["create", { partitionKey: "p", rowKey: "r" }]]),
        415,
        "MediaTypeNotSupported",
      );
      assert.deepEqual(await collect(tableClient(name).listEntities()), []);
    } finally {
      await svc.deleteTable(name);
    }
  });
});

describe("invalid table names", () => {
  for (const [name, code] of [
    ["1table", "InvalidResourceName"],
    ["my_table", "InvalidResourceName"],
    ["aa", "OutOfRangeInput"],
    ["a".repeat(64), "OutOfRangeInput"],
  ]) {
    test(`${name.slice(0, 10)}… is ${code} before any lookup`, async () => {
      const table = new TableClient(endpoint, name, cred, CLIENT_OPTIONS);
      const entity = { partitionKey: "p", rowKey: "r" };
      await expectRestError(table.createEntity(entity), 400, code);
      await expectRestError(table.upsertEntity(entity), 400, code);
      await expectRestError(table.getEntity("p", "r"), 400, code);
      await expectRestError(table.deleteEntity("p", "r"), 400, code);
      await expectRestError(table.getAccessPolicy(), 400, code);
      await expectRestError(collect(table.listEntities()), 400, code);
    });
  }
});

describe("the -secondary endpoint", () => {
  let t;
  before(async () => {
    t = await freshTable("jssec");
    await t.client.createEntity({ partitionKey: "p", rowKey: "r", v: 1 });
  });
  after(async () => {
    await t?.cleanup();
  });

  test("refuses every write with InsufficientAccountPermissions and serves reads", async () => {
    const secondary = new TableServiceClient(`${endpoint}-secondary`, cred, CLIENT_OPTIONS);
    const table = new TableClient(`${endpoint}-secondary`, t.name, cred, CLIENT_OPTIONS);
    const entity = { partitionKey: "p", rowKey: "r", v: 2 };
    for (const write of [
      () => secondary.createTable(uniqueTableName("jssecnew")),
      () => secondary.deleteTable(t.name),
      () => secondary.setProperties({ cors: [] }),
      () => table.createEntity({ partitionKey: "p", rowKey: "new" }),
      () => table.upsertEntity(entity, "Merge"),
      () => table.upsertEntity(entity, "Replace"),
      () => table.updateEntity(entity, "Replace"),
      () => table.deleteEntity("p", "r"),
      () => table.setAccessPolicy([]),
      () => table.submitTransaction([["upsert", entity]]),
    ]) {
      const err = await expectRestError(write(), 403, "InsufficientAccountPermissions");
      assert.match(err.message, /Write operations are not allowed\./);
    }
    assert.equal((await t.client.getEntity("p", "r")).v, 1);
    await expectRestError(table.getEntity("p", "missing"), 404, "ResourceNotFound");
    assert.deepEqual((await collect(table.listEntities())).map((e) => e.v), [1]);
  });
});

describe("a table SAS with a key range", () => {
  let t;
  before(async () => {
    t = await freshTable("jsrange");
    for (const rowKey of ["01", "02"]) await t.client.createEntity({ partitionKey: "somPartition", rowKey });
  });
  after(async () => {
    await t?.cleanup();
  });

  test("answers a point read outside the range as if the entity did not exist", async () => {
    const sas = generateTableSas(t.name, cred, {
      permissions: { query: true, add: true },
      startsOn: new Date(Date.now() - 5 * 60_000),
      expiresOn: new Date(Date.now() + 60 * 60_000),
      startPartitionKey: "somPartition",
      startRowKey: "01",
      endPartitionKey: "somPartition",
      endRowKey: "01",
    });
    const ranged = new TableClient(endpoint, t.name, new AzureSASCredential(sas), CLIENT_OPTIONS);
    assert.equal((await ranged.getEntity("somPartition", "01")).rowKey, "01");
    await expectRestError(ranged.getEntity("somPartition", "02"), 404, "ResourceNotFound");
    assert.equal((await t.client.getEntity("somPartition", "02")).rowKey, "02");
    assert.deepEqual((await collect(ranged.listEntities())).map((e) => e.rowKey), ["01"]);
    await expectRestError(
      ranged.createEntity({ partitionKey: "somPartition", rowKey: "03" }),
      403,
      "AuthorizationFailure",
      "This request is not authorized to perform this operation: the entity is outside the SAS key range.",
    );
  });
});
