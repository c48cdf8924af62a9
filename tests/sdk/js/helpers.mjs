// Shared helpers for the aztable @azure/data-tables conformance suite.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { TableClient, TableServiceClient } from "@azure/data-tables";

export const WELL_KNOWN_ACCOUNT = "devstoreaccount1";
export const WELL_KNOWN_KEY =
  "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";
export const CLIENT_OPTIONS = Object.freeze({ allowInsecureConnection: true });

export function connectionString() {
  const cs = process.env.AZTABLE_CONNECTION_STRING;
  if (!cs) {
    throw new Error(
      "AZTABLE_CONNECTION_STRING is not set; run via scripts/sdk-tests.sh or export it",
    );
  }
  return cs;
}

export function parseConnectionString(cs) {
  const parts = {};
  for (const seg of cs.split(";")) {
    const s = seg.trim();
    if (!s) continue;
    const i = s.indexOf("=");
    parts[s.slice(0, i).trim()] = s.slice(i + 1).trim();
  }
  return parts;
}

export function settings() {
  const parts = parseConnectionString(connectionString());
  const endpoint = (process.env.AZTABLE_ENDPOINT || parts.TableEndpoint || "").replace(/\/+$/, "");
  assert.ok(endpoint, "no endpoint: set AZTABLE_ENDPOINT or TableEndpoint= in the connection string");
  return { accountName: parts.AccountName, accountKey: parts.AccountKey, endpoint };
}

export function connectionStringFor(endpoint, account = WELL_KNOWN_ACCOUNT, key = WELL_KNOWN_KEY) {
  return `DefaultEndpointsProtocol=http;AccountName=${account};AccountKey=${key};TableEndpoint=${endpoint};`;
}

export function serviceClient() {
  return TableServiceClient.fromConnectionString(connectionString(), CLIENT_OPTIONS);
}

export function tableClient(name) {
  return TableClient.fromConnectionString(connectionString(), name, CLIENT_OPTIONS);
}

export function uniqueTableName(prefix = "js") {
  return `${prefix}${randomUUID().replace(/-/g, "").slice(0, 20)}`;
}

/** Creates a uniquely named table; returns { name, client, cleanup }. */
export async function freshTable(prefix = "js") {
  const name = uniqueTableName(prefix);
  const svc = serviceClient();
  await svc.createTable(name);
  const client = tableClient(name);
  return { name, client, cleanup: () => svc.deleteTable(name) };
}

/** The service error code of a RestError (the SDK does not lift odata.error.code into err.code). */
export function errorCode(err) {
  if (err?.code && typeof err.code === "string" && !/^E[A-Z]+$/.test(err.code)) return err.code;
  return odataCodeOfResponse(err?.response);
}

export function odataCodeOfResponse(response) {
  if (!response) return undefined;
  const pb = response.parsedBody;
  if (pb?.odataError?.code) return pb.odataError.code;
  if (pb?.["odata.error"]?.code) return pb["odata.error"].code;
  if (response.bodyAsText) {
    try {
      const body = JSON.parse(response.bodyAsText);
      if (body?.["odata.error"]?.code) return body["odata.error"].code;
    } catch {
      // not JSON
    }
  }
  return response.headers?.get?.("x-ms-error-code") ?? undefined;
}

/**
 * The service's documented messages (the first line of `odata.error.message.value`) for the
 * codes whose message does not depend on the case.
 */
export const DOCUMENTED_MESSAGES = {
  AuthenticationFailed:
    "Server failed to authenticate the request. Make sure the value of Authorization header is formed correctly including the signature.",
  AuthorizationFailure: "This request is not authorized to perform this operation.",
  AuthorizationPermissionMismatch: "This request is not authorized to perform this operation using this permission.",
  AuthorizationResourceTypeMismatch:
    "This request is not authorized to perform this operation using this resource type.",
  AuthorizationServiceMismatch: "This request is not authorized to perform this operation using this service.",
  AuthorizationProtocolMismatch: "This request is not authorized to perform this operation using this protocol.",
  EntityAlreadyExists: "The specified entity already exists.",
  NoAuthenticationInformation:
    "Server failed to authenticate the request. Please refer to the information in the www-authenticate header.",
  ResourceNotFound: "The specified resource does not exist.",
  TableAlreadyExists: "The table specified already exists.",
  TableNotFound: "The table specified does not exist.",
  UpdateConditionNotSatisfied: "The update condition specified in the request was not satisfied.",
};

/**
 * The first line of the `odata.error.message.value` of a RestError's body ("" if none). A
 * failed change set's answer is multipart: its failing part's JSON is read, and the
 * operation's index prefix (`1:`) is dropped.
 */
export function errorMessage(err) {
  const text = err?.response?.bodyAsText ?? "";
  const at = text.indexOf('{"odata.error"');
  if (at < 0) return "";
  try {
    const end = text.lastIndexOf("}") + 1;
    const value = JSON.parse(text.slice(at, end))["odata.error"]?.message?.value ?? "";
    return value.split("\n")[0].replace(/^\d+:/, "");
  } catch {
    return "";
  }
}

/**
 * Awaits `promise` and expects one refusal: a RestError with the given HTTP status, the given
 * service error code and `message` (the first line of the body's message) or, without it,
 * the documented message of the code where there is one.
 */
export async function expectRestError(promise, status, code, message) {
  assert.equal(typeof status, "number", "one status per refusal");
  assert.equal(typeof code, "string", "a refusal's error code is pinned too");
  let caught;
  try {
    await promise;
  } catch (err) {
    caught = err;
  }
  assert.ok(caught, `expected a ${status} ${code} error, but the call succeeded`);
  assert.equal(caught.name, "RestError", `expected RestError, got ${caught.name}: ${caught.message}`);
  assert.equal(caught.statusCode, status, `status: ${caught.message}`);
  assert.equal(errorCode(caught), code, `error code: ${caught.message}`);
  const expected = message ?? DOCUMENTED_MESSAGES[code];
  if (expected !== undefined && caught.request?.method !== "HEAD") {
    assert.equal(errorMessage(caught), expected, `message of ${code}`);
  }
  return caught;
}

/** An onResponse hook recording every raw response (status, error code). */
export function responseRecorder() {
  const responses = [];
  const onResponse = (raw) => {
    responses.push({
      status: raw.status,
      code: odataCodeOfResponse(raw),
      headers: raw.headers,
      prefer: raw.request?.headers?.get("Prefer"),
    });
  };
  return {
    onResponse,
    responses,
    get statuses() {
      return responses.map((r) => r.status);
    },
    last() {
      assert.ok(responses.length > 0, "no HTTP response was recorded");
      return responses[responses.length - 1];
    },
  };
}

export async function collect(iterable) {
  const out = [];
  for await (const x of iterable) out.push(x);
  return out;
}

export async function collectPages(iterable, settings) {
  const pages = [];
  for await (const page of iterable.byPage(settings)) pages.push(page);
  return pages;
}

/** Ordinal (UTF-16 code unit) comparison, as the service sorts keys. */
export function ordinal(a, b) {
  return a < b ? -1 : a > b ? 1 : 0;
}

export function byKeys(a, b) {
  return ordinal(a[0], b[0]) || ordinal(a[1], b[1]);
}

export async function inChunks(items, size, fn) {
  for (let i = 0; i < items.length; i += size) {
    await Promise.all(items.slice(i, i + size).map(fn));
  }
}

/**
 * Starts a dedicated server (`binary` on a free port, in memory) with `extraArgs` and its
 * access log on; resolves to { endpoint, log(), stop() }, where `log()` is what it has
 * printed so far (colour codes removed).
 */
export function startServer(binary, extraArgs = [], account = WELL_KNOWN_ACCOUNT) {
  return new Promise((resolve, reject) => {
    const args = ["--tableHost", "127.0.0.1", "--tablePort", "0", "--inMemoryPersistence", ...extraArgs];
    const proc = spawn(binary, args, { stdio: ["ignore", "pipe", "inherit"] });
    let out = "";
    const timer = setTimeout(() => reject(new Error(`no port reported: ${out}`)), 30_000);
    proc.on("error", reject);
    proc.stdout.on("data", (chunk) => {
      const first = !/listening on http/.test(out);
      out += chunk;
      const m = /listening on http:\/\/([0-9.]+):(\d+)/.exec(out);
      if (first && m) {
        clearTimeout(timer);
        resolve({
          endpoint: `http://${m[1]}:${m[2]}/${account}`,
          log: () => out.replace(/\x1b\[[0-9;]*m/g, ""),
          stop: () => new Promise((done) => (proc.exitCode !== null ? done() : (proc.once("exit", done), proc.kill()))),
        });
      }
    });
  });
}
