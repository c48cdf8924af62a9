"""Entity query paging over > 1000 entities (NextPartitionKey / NextRowKey continuation)."""

import random
from concurrent.futures import ThreadPoolExecutor

import pytest
import requests
from azure.core.pipeline.transport import RequestsTransport
from azure.data.tables import TableClient

from sdk_util import unique_table_name

N_ENTITIES = 1100
PARTITIONS = ["pa", "pb", "pc"]
CONCURRENCY = 50


def _key(i):
    return PARTITIONS[i % len(PARTITIONS)], f"row{i:05d}"


@pytest.fixture(scope="module")
def big_table(service, connection_string):
    name = unique_table_name("big")
    service.create_table(name)
    session = requests.Session()
    adapter = requests.adapters.HTTPAdapter(pool_connections=CONCURRENCY, pool_maxsize=CONCURRENCY)
    session.mount("http://", adapter)
    session.mount("https://", adapter)
    client = TableClient.from_connection_string(
        connection_string, name, transport=RequestsTransport(session=session, session_owner=False)
    )
    order = list(range(N_ENTITIES))
    random.Random(1234).shuffle(order)  # insertion order differs from key order

    def insert(i):
        pk, rk = _key(i)
        client.create_entity({"PartitionKey": pk, "RowKey": rk, "n": i, "pad": "x" * 32})

    try:
        with ThreadPoolExecutor(max_workers=CONCURRENCY) as pool:
            list(pool.map(insert, order))
        yield client
    finally:
        service.delete_table(name)
        client.close()
        session.close()


def _expected_keys(partition=None):
    keys = [_key(i) for i in range(N_ENTITIES)]
    if partition is not None:
        keys = [k for k in keys if k[0] == partition]
    return sorted(keys)


def _collect(pager_factory):
    pager = pager_factory().by_page()
    pages, tokens = [], []
    for page in pager:
        pages.append([(e["PartitionKey"], e["RowKey"]) for e in page])
        tokens.append(pager.continuation_token)
    return pages, tokens


def test_list_all_entities_pages_at_1000(big_table):
    pages, tokens = _collect(lambda: big_table.list_entities())
    assert len(pages) >= 2, "1100 entities cannot fit in one page (max 1000)"
    assert all(len(p) <= 1000 for p in pages)
    assert tokens[0] is not None, "first page must carry NextPartitionKey/NextRowKey"
    flat = [k for p in pages for k in p]
    assert len(flat) == N_ENTITIES
    assert flat == _expected_keys(), "results must be in (PartitionKey, RowKey) order with no duplicates"


def test_list_entities_results_per_page(big_table):
    pages, _ = _collect(lambda: big_table.list_entities(results_per_page=250))
    assert all(len(p) <= 250 for p in pages)
    assert len(pages) >= 5
    assert len(pages[0]) == 250
    assert [k for p in pages for k in p] == _expected_keys()


def test_query_entities_single_partition_paged(big_table):
    pages, _ = _collect(lambda: big_table.query_entities("PartitionKey eq 'pb'", results_per_page=100))
    flat = [k for p in pages for k in p]
    assert flat == _expected_keys("pb")
    assert len(pages) >= 4
    assert all(len(p) <= 100 for p in pages)


def test_query_entities_filter_across_pages(big_table):
    # A filter that matches a sparse subset spread over the whole key range.
    rows = list(big_table.query_entities("n ge 1000 or n lt 5", results_per_page=20))
    got = sorted(e["n"] for e in rows)
    assert got == list(range(5)) + list(range(1000, N_ENTITIES))
    keys = [(e["PartitionKey"], e["RowKey"]) for e in rows]
    assert keys == sorted(keys)


def test_resume_from_continuation_token(big_table):
    pager = big_table.list_entities(results_per_page=400).by_page()
    first = [(e["PartitionKey"], e["RowKey"]) for e in next(pager)]
    token = pager.continuation_token
    assert token is not None
    rest_pager = big_table.list_entities(results_per_page=400).by_page(continuation_token=token)
    rest = [(e["PartitionKey"], e["RowKey"]) for p in rest_pager for e in p]
    assert first + rest == _expected_keys()


def test_select_over_pages(big_table):
    rows = list(big_table.list_entities(select=["n"], results_per_page=500))
    assert len(rows) == N_ENTITIES
    assert all(set(r.keys()) == {"n"} for r in rows)
    # Order is still by key: n values follow the sorted key order.
    by_key = {_key(i): i for i in range(N_ENTITIES)}
    assert [r["n"] for r in rows] == [by_key[k] for k in _expected_keys()]


def test_paging_follows_utf16_order_where_code_point_order_differs(table):
    # U+10000 is D800 DC00 in UTF-16: it sorts before U+E000 and U+FFFF there, after
    # them by code point. The service orders keys by UTF-16 code units.
    row_keys = ["\uffff", "\ue000", "\U00010000", "z", "a"]
    for rk in row_keys:
        table.create_entity({"PartitionKey": "p", "RowKey": rk})
    utf16 = sorted(row_keys, key=lambda s: s.encode("utf-16-be"))
    assert utf16 != sorted(row_keys), "the keys must tell the two orders apart"
    pages = list(table.list_entities(results_per_page=1).by_page())
    assert [e["RowKey"] for page in pages for e in page] == utf16
    assert len(pages) >= len(row_keys)
