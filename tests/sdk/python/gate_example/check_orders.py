"""A user's test of orders.py, run under the gate of conftest.py."""

from orders import add_order, orders_of


def test_orders_of_a_customer(orders_table):
    for customer, order_id in [("alice", "o1"), ("alice", "o2"), ("bob", "o3")]:
        add_order(orders_table, customer, order_id, 10.0)
    assert orders_of(orders_table, "alice") == ["o1", "o2"]
