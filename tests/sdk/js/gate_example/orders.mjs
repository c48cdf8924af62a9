// The code under test of the gate example: an order store on Azure Tables, keyed by
// customer (PartitionKey) and order id (RowKey). ORDERS_QUERY selects how `ordersOf`
// reads, to show the gate: `scan` filters on a property (a full table scan in
// production), `partition` names the partition.
import { odata } from "@azure/data-tables";

export async function addOrder(table, customer, orderId, total) {
  await table.createEntity({ partitionKey: customer, rowKey: orderId, Customer: customer, Total: total });
}

export async function ordersOf(table, customer) {
  const filter =
    process.env.ORDERS_QUERY === "scan" ? odata`Customer eq ${customer}` : odata`PartitionKey eq ${customer}`;
  const ids = [];
  for await (const e of table.listEntities({ queryOptions: { filter } })) ids.push(e.rowKey);
  return ids.sort();
}
