// Answers the real service gives that the SDKs recorded: filtered paging ends without a
// last empty request (tables and entities), a Create Table conflict says which preference
// applied, and a request with an x-ms-version newer than the server knows is served.
// (The ACL of an identifier without a policy is not visible here: this SDK reads any
// identifier as { id, accessPolicy: {...} }.)
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { collectPages, freshTable, serviceClient, uniqueTableName } from "./helpers.mjs";

/** Adds a policy that keeps every response the client receives, errors' too; returns them. */
function recordResponses(client) {
  const responses = [];
  client.pipeline.addPolicy({
    name: "recordResponses",
    async sendRequest(request, next) {
      try {
        const response = await next(request);
        responses.push(response);
        return response;
      } catch (e) {
        // an error status, thrown as a RestError by the deserialization below this policy
        if (e.response) responses.push(e.response);
        throw e;
      }
    },
  });
  return responses;
}

describe("paging ends with the filter's range", () => {
  test("a filtered table listing makes no last empty request", async () => {
    // the Go SDK's TestQueryTable_storage, over tables of a prefix of this test's own
    const prefix = `pg${randomUUID().replace(/-/g, "").slice(0, 10)}`;
    const svc = serviceClient();
    const names = [0, 1, 2, 3].map((i) => `${prefix}a${i}`).concat(`${prefix}b4`);
    try {
      for (const name of names) await svc.createTable(name);
      const responses = recordResponses(svc);
      const filter = `TableName ge '${prefix}a' and TableName lt '${prefix}b'`;
      const pages = await collectPages(svc.listTables({ queryOptions: { filter } }), { maxPageSize: 2 });
      assert.deepEqual(
        pages.map((p) => p.map((t) => t.name)),
        [names.slice(0, 2), names.slice(2, 4)],
      );
      assert.equal(responses.length, 2, "the second page is the last: no request for an empty third");
      assert.equal(responses[1].headers.get("x-ms-continuation-nexttablename"), undefined);
    } finally {
      for (const name of names) await serviceClient().deleteTable(name);
    }
  });

  test("an entity query makes no last empty request", async () => {
    // the Python SDK's test_query_entities_each_page
    const t = await freshTable("jspg");
    try {
      for (const rowKey of ["10", "101", "1012", "10123", "101234", "1012345"]) {
        await t.client.createEntity({ partitionKey: "pk", rowKey });
      }
      for (const partitionKey of ["pk6", "pk67", "pk678", "pk6789"]) {
        await t.client.createEntity({ partitionKey, rowKey: "r" });
      }
      const responses = recordResponses(t.client);
      const pages = await collectPages(
        t.client.listEntities({ queryOptions: { filter: "PartitionKey eq 'pk'" } }),
        { maxPageSize: 2 },
      );
      assert.deepEqual(
        pages.map((p) => p.map((e) => e.rowKey)),
        [
          ["10", "101"],
          ["1012", "10123"],
          ["101234", "1012345"],
        ],
      );
      assert.equal(responses.length, 3);
      assert.equal(pages[2].continuationToken, undefined);
    } finally {
      await t.cleanup();
    }
  });
});

describe("Create Table conflict", () => {
  test("the 409 says which preference applied", async () => {
    // the Java SDK's recording createTableDuplicateNameImpl
    const name = uniqueTableName("jsdup");
    const svc = serviceClient();
    const responses = recordResponses(svc);
    try {
      const prefer = { requestOptions: { customHeaders: { Prefer: "return-no-content" } } };
      await svc.createTable(name, prefer);
      assert.equal(responses.at(-1).status, 204);
      // the SDK swallows TableAlreadyExists; the response is still there
      await svc.createTable(name, prefer);
      const conflict = responses.at(-1);
      assert.equal(conflict.status, 409);
      assert.equal(conflict.headers.get("x-ms-error-code"), "TableAlreadyExists");
      assert.equal(conflict.headers.get("preference-applied"), "return-no-content");
    } finally {
      await svc.deleteTable(name);
    }
  });
});

describe("x-ms-version", () => {
  test("a version newer than the server knows is served as the newest it knows", async () => {
    const t = await freshTable("jsver");
    try {
      const responses = recordResponses(t.client);
      t.client.pipeline.addPolicy({
        name: "newerVersion",
        async sendRequest(request, next) {
          request.headers.set("x-ms-version", "2027-01-01");
          return next(request);
        },
      });
      await t.client.createEntity({ partitionKey: "p", rowKey: "r", v: 1 });
      assert.equal((await t.client.getEntity("p", "r")).v, 1);
      assert.equal(responses.at(-1).status, 200);
      assert.equal(responses.at(-1).headers.get("x-ms-version"), "2026-06-06");
      assert.equal(responses.at(-1).request.headers.get("x-ms-version"), "2027-01-01");
    } finally {
      await t.cleanup();
    }
  });
});
