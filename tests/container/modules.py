"""Testcontainers for Python's Azurite module with the aztable image in place of
Azurite's: the module starts the image's defaults with AZURITE_ACCOUNTS and waits until
port 10000 accepts; then azure-data-tables works through the module's connection string.
Run by scripts/container-test.sh (MODULES=1); the image is argv[1]."""
import sys
import time

from azure.data.tables import TableServiceClient

try:
    from testcontainers.community.azurite import AzuriteContainer
except ImportError:  # releases before the community namespace
    from testcontainers.azurite import AzuriteContainer

t = time.monotonic()
with AzuriteContainer(sys.argv[1]) as azurite:
    print(f"   python module: started and waited (port 10000) in {time.monotonic() - t:.1f} s")
    svc = TableServiceClient.from_connection_string(azurite.get_connection_string())
    table = svc.create_table_if_not_exists("people")
    table.upsert_entity({"PartitionKey": "p", "RowKey": "1", "Name": "Ada"})
    assert table.get_entity("p", "1")["Name"] == "Ada"
    print("   python module: azure-data-tables through its connection string: ok")
