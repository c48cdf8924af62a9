"""The code under test of the gate example: an order store on Azure Tables, keyed by
customer (PartitionKey) and order id (RowKey).

``orders_of`` reads a customer's orders. ORDERS_QUERY selects how, to show the gate:
``scan`` filters on a property (a full table scan in production), ``partition`` names the
partition (a range read of one partition)."""

import os

from azure.data.tables import TableClient


def add_order(table: TableClient, customer: str, order_id: str, total: float) -> None:
    table.create_entity({"PartitionKey": customer, "RowKey": order_id, "Customer": customer, "Total": total})


def orders_of(table: TableClient, customer: str) -> list:
    if os.environ.get("ORDERS_QUERY", "partition") == "scan":
        query = "Customer eq @c"
    else:
        query = "PartitionKey eq @c"
    return sorted(e["RowKey"] for e in table.query_entities(query, parameters={"c": customer}))
