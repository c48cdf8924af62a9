"""Queries through the legacy AtomPub client: $filter, $top, $select and continuation."""

from datetime import datetime, timezone

import pytest
from azure.storage.table import EntityProperty

from legacy_util import entity_props


def _keys(rows):
    return [(r.PartitionKey, r.RowKey) for r in rows]


def _continuation(page):
    return getattr(page, "x_ms_continuation", None)


@pytest.fixture
def people(svc, table):
    rows = [
        {"PartitionKey": "a", "RowKey": "1", "Name": "Ada", "Age": 36, "Active": True,
         "Born": datetime(1815, 12, 10, tzinfo=timezone.utc), "Score": 9.5, "Big": 2**40,
         "Id": EntityProperty("Edm.Guid", "11111111-1111-1111-1111-111111111111")},
        {"PartitionKey": "a", "RowKey": "2", "Name": "Alan", "Age": 41, "Active": False,
         "Born": datetime(1912, 6, 23, tzinfo=timezone.utc), "Score": 7.25, "Big": 2**41,
         "Id": EntityProperty("Edm.Guid", "22222222-2222-2222-2222-222222222222")},
        {"PartitionKey": "b", "RowKey": "1", "Name": "Grace", "Age": 85, "Active": True,
         "Born": datetime(1906, 12, 9, tzinfo=timezone.utc), "Score": 8.0, "Big": 2**42,
         "Id": EntityProperty("Edm.Guid", "33333333-3333-3333-3333-333333333333")},
        {"PartitionKey": "c", "RowKey": "1", "Name": "Edsger", "Age": 72, "Active": False,
         "Born": datetime(1930, 5, 11, tzinfo=timezone.utc), "Score": 6.0, "Big": 2**43,
         "Id": EntityProperty("Edm.Guid", "44444444-4444-4444-4444-444444444444")},
    ]
    for r in rows:
        svc.insert_entity(table, r)
    return table


@pytest.mark.parametrize(
    "flt, expected",
    [
        ("PartitionKey eq 'a'", [("a", "1"), ("a", "2")]),
        ("Name eq 'Grace'", [("b", "1")]),
        ("Age gt 40 and Age lt 80", [("a", "2"), ("c", "1")]),
        ("Active eq true", [("a", "1"), ("b", "1")]),
        ("not (Active eq true)", [("a", "2"), ("c", "1")]),
        ("Born lt datetime'1910-01-01T00:00:00Z'", [("a", "1"), ("b", "1")]),
        ("Score ge 8.0 or PartitionKey eq 'c'", [("a", "1"), ("b", "1"), ("c", "1")]),
        ("Big eq 4398046511104L", [("b", "1")]),
        ("Id eq guid'22222222-2222-2222-2222-222222222222'", [("a", "2")]),
        ("PartitionKey eq 'a' and RowKey ge '2'", [("a", "2")]),
        ("Name eq 'Nobody'", []),
    ],
)
def test_filter(svc, people, flt, expected):
    rows = svc.query_entities(people, filter=flt)
    assert _keys(rows) == expected
    assert not _continuation(rows)


def test_filter_string_with_quote(svc, table):
    svc.insert_entity(table, {"PartitionKey": "p", "RowKey": "1", "Name": "O'Brien"})
    svc.insert_entity(table, {"PartitionKey": "p", "RowKey": "2", "Name": "OBrien"})
    assert _keys(svc.query_entities(table, filter="Name eq 'O''Brien'")) == [("p", "1")]


def test_select(svc, people):
    rows = svc.query_entities(people, filter="PartitionKey eq 'a'", select="Name,Age")
    assert len(rows) == 2
    for r in rows:
        props = entity_props(r)
        assert set(props) <= {"Name", "Age", "PartitionKey", "RowKey", "Timestamp"}
        assert "Active" not in props and "Score" not in props
        assert r.etag.startswith('W/"')
    assert sorted((r.Name, r.Age) for r in rows) == [("Ada", 36), ("Alan", 41)]


def test_select_a_missing_property(svc, people):
    rows = svc.query_entities(people, filter="PartitionKey eq 'b'", select="Name,Nope")
    [row] = rows
    assert row.Name == "Grace"
    assert "Age" not in entity_props(row)


def test_top_and_continuation_across_partitions(svc, people):
    seen = []
    nextpk = nextrk = None
    pages = 0
    while True:
        page = svc.query_entities(people, top=1, next_partition_key=nextpk, next_row_key=nextrk)
        assert len(page) <= 1
        seen += _keys(page)
        pages += 1
        cont = _continuation(page)
        if not cont:
            break
        nextpk = cont["NextPartitionKey"]
        nextrk = cont.get("nextrowkey")
        assert pages < 20, "paging does not end"
    assert seen == [("a", "1"), ("a", "2"), ("b", "1"), ("c", "1")]


def test_top_with_filter(svc, people):
    first = svc.query_entities(people, filter="Active eq false", top=1)
    assert _keys(first) == [("a", "2")]
    cont = _continuation(first)
    assert cont
    second = svc.query_entities(
        people, filter="Active eq false", top=1,
        next_partition_key=cont["NextPartitionKey"], next_row_key=cont.get("nextrowkey"),
    )
    assert _keys(second) == [("c", "1")]


def _insert_by_batches(svc, table, pk, count, per_batch=100):
    for start in range(0, count, per_batch):
        svc.begin_batch()
        for i in range(start, min(start + per_batch, count)):
            svc.insert_entity(table, {"PartitionKey": pk, "RowKey": f"{i:05d}", "N": i})
        svc.commit_batch()


def test_more_than_one_page_without_top(svc, table):
    """A query without $top returns at most 1000 entities and a continuation."""
    _insert_by_batches(svc, table, "p", 1100)
    first = svc.query_entities(table)
    assert len(first) == 1000
    assert [r.N for r in first] == list(range(1000))
    cont = _continuation(first)
    assert cont and cont["NextPartitionKey"]
    second = svc.query_entities(
        table, next_partition_key=cont["NextPartitionKey"], next_row_key=cont.get("nextrowkey")
    )
    assert [r.N for r in second] == list(range(1000, 1100))
    assert not _continuation(second)


def test_paging_with_top_and_filter_over_batches(svc, table):
    _insert_by_batches(svc, table, "q", 250, per_batch=50)
    got = []
    nextpk = nextrk = None
    pages = 0
    while True:
        page = svc.query_entities(
            table, filter="N ge 10", select="N", top=64,
            next_partition_key=nextpk, next_row_key=nextrk,
        )
        assert len(page) <= 64
        got += [r.N for r in page]
        pages += 1
        cont = _continuation(page)
        if not cont:
            break
        nextpk, nextrk = cont["NextPartitionKey"], cont.get("nextrowkey")
        assert pages < 50, "paging does not end"
    assert got == list(range(10, 250))
    assert pages >= 4
