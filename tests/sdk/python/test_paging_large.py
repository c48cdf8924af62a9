"""Paging over 5,000 entities in 50 partitions: whole-table listing, a partition-range
query and `or` unions of key ranges (which the server scans as separate ranges),
following NextPartitionKey / NextRowKey until done."""

from concurrent.futures import ThreadPoolExecutor

import pytest
import requests
from azure.core.pipeline.transport import RequestsTransport
from azure.data.tables import TableClient

from sdk_util import unique_table_name

PARTITIONS = 50
ROWS = 100  # per partition: one full transaction each
CONCURRENCY = 10


def _pk(p):
    return f"p{p:02d}"


def _rk(r):
    return f"r{r:03d}"


ALL_KEYS = sorted((_pk(p), _rk(r)) for p in range(PARTITIONS) for r in range(ROWS))


@pytest.fixture(scope="module")
def large_table(service, connection_string):
    name = unique_table_name("large")
    service.create_table(name)
    session = requests.Session()
    adapter = requests.adapters.HTTPAdapter(pool_connections=CONCURRENCY, pool_maxsize=CONCURRENCY)
    session.mount("http://", adapter)
    session.mount("https://", adapter)
    client = TableClient.from_connection_string(
        connection_string, name, transport=RequestsTransport(session=session, session_owner=False)
    )

    def load_partition(p):
        # Rows in reverse order: insertion order is not key order.
        ops = [
            ("create", {"PartitionKey": _pk(p), "RowKey": _rk(r), "n": p * ROWS + r})
            for r in reversed(range(ROWS))
        ]
        client.submit_transaction(ops)

    try:
        with ThreadPoolExecutor(max_workers=CONCURRENCY) as pool:
            list(pool.map(load_partition, reversed(range(PARTITIONS))))
        yield client
    finally:
        service.delete_table(name)
        client.close()
        session.close()


def _pages(pager):
    pages = pager.by_page()
    out = []
    for page in pages:
        out.append([(e["PartitionKey"], e["RowKey"]) for e in page])
    return out


def _check(pages, expected, page_size):
    flat = [k for p in pages for k in p]
    assert len(flat) == len(set(flat)), "an entity came back twice"
    assert flat == expected, "results must be in (PartitionKey, RowKey) order, all of them"
    assert all(len(p) <= page_size for p in pages)
    # Every page but the last is full: the server cuts pages only at the page size here.
    assert all(len(p) == page_size for p in pages[:-1]), [len(p) for p in pages]


def test_list_all_5000_in_pages_of_1000(large_table):
    pages = _pages(large_table.list_entities(results_per_page=1000))
    assert len(pages) == 5
    _check(pages, ALL_KEYS, 1000)


def test_partition_range_query_pages_of_300(large_table):
    pages = _pages(
        large_table.query_entities("PartitionKey ge 'p10' and PartitionKey lt 'p20'", results_per_page=300)
    )
    expected = [k for k in ALL_KEYS if "p10" <= k[0] < "p20"]
    assert len(expected) == 1000
    assert [len(p) for p in pages] == [300, 300, 300, 100]
    _check(pages, expected, 300)


def test_or_of_partitions_pages_across_the_union(large_table):
    pages = _pages(
        large_table.query_entities(
            "PartitionKey eq 'p47' or PartitionKey eq 'p03' or PartitionKey eq 'p25'", results_per_page=120
        )
    )
    expected = [k for k in ALL_KEYS if k[0] in ("p03", "p25", "p47")]
    assert len(expected) == 300
    _check(pages, expected, 120)


@pytest.mark.parametrize("page_size", [1, 7, 10, 1000])
def test_or_of_row_ranges_with_pages_ending_at_range_ends(large_table, page_size):
    query = (
        "(PartitionKey eq 'p05' and RowKey ge 'r090') or (PartitionKey eq 'p06' and RowKey lt 'r010')"
        " or (PartitionKey eq 'p40' and RowKey eq 'r050')"
    )
    pages = _pages(large_table.query_entities(query, results_per_page=page_size))
    expected = (
        [("p05", _rk(r)) for r in range(90, 100)] + [("p06", _rk(r)) for r in range(10)] + [("p40", "r050")]
    )
    _check(pages, expected, page_size)


def test_union_with_a_residual_filter(large_table):
    rows = list(
        large_table.query_entities(
            "(PartitionKey eq 'p01' or PartitionKey eq 'p48') and n ge @lo",
            parameters={"lo": 4895},
            results_per_page=3,
        )
    )
    assert [e["n"] for e in rows] == list(range(4895, 4900))
