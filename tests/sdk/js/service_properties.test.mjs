// Service properties and stats through @azure/data-tables (spec 1.1): getProperties defaults,
// setProperties round trip (logging, metrics, CORS), subset updates, the limit of 5 CORS
// rules, getStatistics on the -secondary endpoint, and CORS preflight/actual requests (fetch).
//
// Service properties are account-wide, and node --test runs files concurrently: this file
// starts a server of its own when AZTABLE_BINARY is set (scripts/sdk-tests.sh sets it), and
// otherwise uses the shared server without checking the never-set defaults.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { AzureNamedKeyCredential, TableServiceClient } from "@azure/data-tables";
import { CLIENT_OPTIONS, expectRestError, settings } from "./helpers.mjs";

const shared = settings();

/** Starts `binary` on a free port (in memory); resolves to { endpoint, stop }. */
function startServer(binary, account) {
  return new Promise((resolve, reject) => {
    const proc = spawn(binary, ["--tableHost", "127.0.0.1", "--tablePort", "0", "--inMemoryPersistence", "--silent"], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    let out = "";
    const timer = setTimeout(() => reject(new Error(`no port reported: ${out}`)), 30_000);
    proc.on("error", reject);
    proc.stdout.on("data", (chunk) => {
      out += chunk;
      const m = /listening on http:\/\/([0-9.]+):(\d+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        proc.stdout.removeAllListeners("data");
        proc.stdout.resume();
        resolve({
          endpoint: `http://${m[1]}:${m[2]}/${account}`,
          port: m[2],
          stop: () => new Promise((done) => (proc.exitCode !== null ? done() : (proc.once("exit", done), proc.kill()))),
        });
      }
    });
  });
}

const list = (v) =>
  (v ?? "")
    .split(",")
    .map((s) => s.trim().toLowerCase())
    .filter(Boolean);

const rule = (allowedOrigins, allowedMethods, extra = {}) => ({
  allowedOrigins,
  allowedMethods,
  allowedHeaders: "",
  exposedHeaders: "",
  maxAgeInSeconds: 0,
  ...extra,
});

describe("service properties", { timeout: 60_000 }, () => {
  let server;
  let endpoint;
  let svc;
  let fresh = false;
  const cred = new AzureNamedKeyCredential(shared.accountName, shared.accountKey);

  before(async () => {
    if (process.env.AZTABLE_BINARY) {
      server = await startServer(process.env.AZTABLE_BINARY, shared.accountName);
      endpoint = server.endpoint;
      fresh = true;
    } else {
      endpoint = shared.endpoint;
    }
    svc = new TableServiceClient(endpoint, cred, CLIENT_OPTIONS);
  });
  after(async () => {
    if (svc && !server) {
      await svc.setProperties({ cors: [] });
    }
    await server?.stop();
  });

  test("defaults", async (ctx) => {
    if (!fresh) return ctx.skip("AZTABLE_BINARY not set: the shared server's properties may be set already");
    const p = await svc.getProperties();
    assert.equal(p.logging?.version, "1.0");
    assert.equal(p.logging?.retentionPolicy?.enabled, false);
    for (const m of [p.hourMetrics, p.minuteMetrics]) {
      assert.equal(m?.version, "1.0");
      assert.equal(m?.enabled, false);
      assert.equal(m?.retentionPolicy?.enabled, false);
    }
    assert.equal((p.cors ?? []).length, 0, JSON.stringify(p.cors));
  });

  test("setProperties round trip", async () => {
    await svc.setProperties({
      logging: { version: "1.0", read: true, write: false, delete: true, retentionPolicy: { enabled: true, days: 5 } },
      hourMetrics: { version: "1.0", enabled: true, includeAPIs: true, retentionPolicy: { enabled: true, days: 7 } },
      minuteMetrics: { version: "1.0", enabled: false, retentionPolicy: { enabled: false } },
      cors: [
        rule("http://example.com,http://contoso.com", "GET,PUT", {
          allowedHeaders: "x-ms-meta-*,content-type",
          exposedHeaders: "x-ms-request-id",
          maxAgeInSeconds: 300,
        }),
        rule("*", "DELETE,MERGE", { maxAgeInSeconds: 1 }),
      ],
    });
    const p = await svc.getProperties();
    assert.deepEqual(
      [p.logging.read, p.logging.write, p.logging.delete, p.logging.retentionPolicy.enabled, p.logging.retentionPolicy.days],
      [true, false, true, true, 5],
    );
    assert.deepEqual(
      [p.hourMetrics.enabled, p.hourMetrics.includeAPIs, p.hourMetrics.retentionPolicy.days],
      [true, true, 7],
    );
    assert.equal(p.minuteMetrics.enabled, false);
    assert.equal(p.cors.length, 2);
    const [first, second] = p.cors;
    assert.deepEqual(list(first.allowedOrigins), ["http://example.com", "http://contoso.com"]);
    assert.deepEqual(list(first.allowedMethods), ["get", "put"]);
    assert.deepEqual(list(first.allowedHeaders), ["x-ms-meta-*", "content-type"]);
    assert.deepEqual(list(first.exposedHeaders), ["x-ms-request-id"]);
    assert.equal(first.maxAgeInSeconds, 300);
    assert.equal(second.allowedOrigins, "*");
    assert.deepEqual(list(second.allowedMethods), ["delete", "merge"]);
    assert.equal(second.maxAgeInSeconds, 1);
  });

  test("a subset update keeps the other roots", async () => {
    await svc.setProperties({
      logging: { version: "1.0", read: true, write: true, delete: false, retentionPolicy: { enabled: false } },
      hourMetrics: { version: "1.0", enabled: true, includeAPIs: false, retentionPolicy: { enabled: true, days: 3 } },
      cors: [rule("http://a.example", "GET")],
    });
    await svc.setProperties({ cors: [rule("http://b.example", "POST", { maxAgeInSeconds: 9 })] });
    let p = await svc.getProperties();
    assert.deepEqual([p.logging.read, p.logging.write, p.logging.delete], [true, true, false]);
    assert.deepEqual([p.hourMetrics.enabled, p.hourMetrics.includeAPIs, p.hourMetrics.retentionPolicy.days], [true, false, 3]);
    assert.deepEqual(p.cors.map((r) => [r.allowedOrigins, r.maxAgeInSeconds]), [["http://b.example", 9]]);
    await svc.setProperties({
      logging: { version: "1.0", read: false, write: false, delete: true, retentionPolicy: { enabled: false } },
    });
    p = await svc.getProperties();
    assert.deepEqual([p.logging.read, p.logging.delete], [false, true]);
    assert.equal(p.hourMetrics.retentionPolicy.days, 3);
    assert.deepEqual(p.cors.map((r) => r.allowedOrigins), ["http://b.example"]);
    await svc.setProperties({ cors: [] });
    assert.equal(((await svc.getProperties()).cors ?? []).length, 0);
  });

  test("six CORS rules are 400 InvalidXmlDocument and change nothing", async () => {
    const five = [0, 1, 2, 3, 4].map((i) => rule(`http://o${i}.example`, "GET"));
    await svc.setProperties({ cors: five });
    await expectRestError(
      svc.setProperties({ cors: [...five, rule("http://o5.example", "GET")] }),
      400,
      "InvalidXmlDocument",
    );
    assert.deepEqual(
      (await svc.getProperties()).cors.map((r) => r.allowedOrigins),
      five.map((r) => r.allowedOrigins),
    );
    await svc.setProperties({ cors: [] });
  });

  test("getStatistics on the -secondary endpoint reports live", async () => {
    // The SDK derives the secondary by renaming the first host label ("127" → "127-secondary"),
    // which an IP host cannot survive; "localhost" has a single label and is left alone.
    const url = new URL(endpoint);
    const secondary = `http://localhost:${url.port}${url.pathname}-secondary`;
    const client = new TableServiceClient(secondary, cred, CLIENT_OPTIONS);
    let seenUrl;
    const stats = await client.getStatistics({ onResponse: (r) => (seenUrl = r.request.url) });
    assert.equal(new URL(seenUrl).pathname, `/${shared.accountName}-secondary/`);
    assert.equal(stats.geoReplication?.status, "live");
    const synced = stats.geoReplication?.lastSyncTime;
    assert.ok(synced instanceof Date, "LastSyncTime is reported");
    assert.ok(Math.abs(Date.now() - synced.getTime()) < 60_000, `LastSyncTime ${synced} is now`);
  });

  test("getStatistics from the connection-string client reports live", async () => {
    // Against an emulator endpoint the SDK sends it to the primary path.
    let seenUrl;
    const stats = await svc.getStatistics({ onResponse: (r) => (seenUrl = r.request.url) });
    assert.equal(new URL(seenUrl).pathname, `/${shared.accountName}/`);
    assert.equal(stats.geoReplication?.status, "live");
    const synced = stats.geoReplication?.lastSyncTime;
    assert.ok(synced instanceof Date && Math.abs(Date.now() - synced.getTime()) < 60_000, `${synced}`);
  });

  test("CORS preflight and actual requests", async () => {
    await svc.setProperties({ cors: [] });
    const preflight = (origin, method, headers) => {
      const h = {};
      if (origin) h.Origin = origin;
      if (method) h["Access-Control-Request-Method"] = method;
      if (headers) h["Access-Control-Request-Headers"] = headers;
      return fetch(`${endpoint}/Tables`, { method: "OPTIONS", headers: h });
    };
    let r = await preflight("http://example.com", "GET");
    assert.equal(r.status, 403, await r.text());

    await svc.setProperties({
      cors: [rule("http://example.com", "GET", { allowedHeaders: "x-ms-*,content-type", exposedHeaders: "x-ms-request-id", maxAgeInSeconds: 3600 })],
    });
    r = await preflight("http://example.com", "GET", "x-ms-version,content-type");
    assert.equal(r.status, 200, await r.text());
    assert.equal(r.headers.get("access-control-allow-origin"), "http://example.com");
    assert.ok(list(r.headers.get("access-control-allow-methods")).includes("get"));
    assert.equal(r.headers.get("access-control-max-age"), "3600");
    r = await preflight("http://other.example", "GET");
    assert.equal(r.status, 403, await r.text());
    assert.equal(r.headers.get("access-control-allow-origin"), null);
    r = await preflight("http://example.com");
    assert.equal(r.status, 400, await r.text());

    // An actual, signed request with Origin (a custom header through the SDK).
    const seen = [];
    const onResponse = (raw) => seen.push(raw.headers);
    for await (const _ of svc.listTables({ requestOptions: { customHeaders: { Origin: "http://example.com" } }, onResponse })) {
      // drain
    }
    assert.equal(seen.at(-1).get("access-control-allow-origin"), "http://example.com");
    assert.ok(list(seen.at(-1).get("access-control-expose-headers")).includes("x-ms-request-id"));
    await svc.setProperties({ cors: [] });
  });
});
