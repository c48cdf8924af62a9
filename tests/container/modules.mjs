// Testcontainers for Node's Azurite module with the aztable image in place of Azurite's:
// entrypoint `azurite`, every host and port given, --inMemoryPersistence; it waits for
// the three "successfully listening" log lines. Run by scripts/container-test.sh
// (MODULES=1); the image is the first argument.
import { AzuriteContainer } from "@testcontainers/azurite";
import { TableClient } from "@azure/data-tables";

const t = Date.now();
const azurite = await new AzuriteContainer(process.argv[2]).withInMemoryPersistence().start();
console.log(`   node module: started and waited (three log lines) in ${((Date.now() - t) / 1000).toFixed(1)} s`);
try {
  const client = TableClient.fromConnectionString(azurite.getConnectionString(), "people", {
    allowInsecureConnection: true,
  });
  await client.createTable();
  await client.upsertEntity({ partitionKey: "p", rowKey: "1", name: "Ada" });
  const e = await client.getEntity("p", "1");
  if (e.name !== "Ada") throw new Error(`read back ${JSON.stringify(e)}`);
  console.log("   node module: @azure/data-tables through its connection string: ok");
} finally {
  await azurite.stop();
}
