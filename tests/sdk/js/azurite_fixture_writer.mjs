// Writes the entities of tests/fixtures/azurite-real through @azure/data-tables into the
// Table endpoint given as the first argument (a real Azurite, started by
// scripts/azurite-fixture.sh): table AzuriteEdm with every Edm type and a long string,
// and the empty table emptyazurite. tests/it/transfer_oracles.rs holds the same values
// as literals. Not a test file: `node --test` does not pick it up.
import { AzureNamedKeyCredential, TableClient, TableServiceClient } from "@azure/data-tables";

const endpoint = process.argv[2];
if (!endpoint) {
  console.error("usage: node azurite_fixture_writer.mjs <table endpoint, e.g. http://127.0.0.1:10877/devstoreaccount1>");
  process.exit(2);
}
const cred = new AzureNamedKeyCredential(
  "devstoreaccount1",
  "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==",
);
const options = { allowInsecureConnection: true };
const service = new TableServiceClient(endpoint, cred, options);
await service.createTable("AzuriteEdm");
await service.createTable("emptyazurite");
const table = new TableClient(endpoint, "AzuriteEdm", cred, options);
await table.createEntity({
  partitionKey: "edm",
  rowKey: "1",
  S: '<b>"x"</b> \u00e9\u{1F600}',
  Empty: "",
  I32: -2147483648,
  I64: { value: "9223372036854775807", type: "Int64" },
  I64Neg: { value: "-9223372036854775808", type: "Int64" },
  D: 0.5,
  DWhole: { value: "5", type: "Double" },
  DNaN: { value: "NaN", type: "Double" },
  DInf: { value: "Infinity", type: "Double" },
  B: true,
  Dt: new Date(Date.UTC(2020, 1, 29, 12, 0, 0)),
  G: { value: "c9da6455-213d-42c9-9a79-3e9149a57833", type: "Guid" },
  Bin: new Uint8Array([0, 1, 2, 255]),
});
await table.createEntity({ partitionKey: "edm", rowKey: "2", Long: "z".repeat(30000), F: false });
const stored = [];
for await (const e of table.listEntities()) stored.push(e.rowKey);
console.log(`wrote ${stored.length} entities: ${stored.join(", ")}`);
