"""Entity CRUD through azure.data.tables (spec 1.3, 1.6, 1.10)."""

from datetime import datetime

import pytest
from azure.core import MatchConditions
from azure.core.exceptions import (
    HttpResponseError,
    ResourceExistsError,
    ResourceModifiedError,
    ResourceNotFoundError,
)
from azure.data.tables import UpdateMode

from sdk_util import ResponseRecorder, assert_refused, error_code

# Keys with characters that must survive URL path encoding and OData '' quoting.
SPECIAL_KEYS = [
    ("it's", "o'clock"),
    ("''", "'"),
    ("with space", " leading and trailing "),
    ("unicodé", "日本語-😀-Ω"),
    ("100%", "%41%2F"),
    ("a+b", "1+1=2"),
    ("", "empty-partition-key"),
    ("empty-row-key", ""),
    ("", ""),
    ("&=,;:@$!*()~", "[]{}<>|^`\""),
]


def _props(entity):
    """User properties of an entity, without keys."""
    return {k: v for k, v in entity.items() if k not in ("PartitionKey", "RowKey")}


def test_create_entity_returns_etag(table):
    meta = table.create_entity({"PartitionKey": "p", "RowKey": "r", "v": 1})
    assert meta.get("etag"), f"create_entity metadata has no etag: {meta}"
    got = table.get_entity("p", "r")
    assert got.metadata["etag"] == meta["etag"]
    assert got["v"] == 1


def test_create_entity_response_status(table):
    rec = ResponseRecorder()
    table.create_entity({"PartitionKey": "p", "RowKey": "r"}, raw_response_hook=rec)
    # the one answer: 204 with Preference-Applied if Prefer asks for no content, else 201
    assert rec.last["status"] == rec.expected_create_status(), rec.last
    if rec.last["prefer"] == "return-no-content":
        assert rec.last["headers"].get("Preference-Applied") == "return-no-content"


def test_create_duplicate_entity_conflicts(table):
    table.create_entity({"PartitionKey": "p", "RowKey": "r", "v": 1})
    with pytest.raises(ResourceExistsError) as exc:
        table.create_entity({"PartitionKey": "p", "RowKey": "r", "v": 2})
    assert exc.value.status_code == 409
    assert error_code(exc.value) == "EntityAlreadyExists"
    assert table.get_entity("p", "r")["v"] == 1


@pytest.mark.parametrize("pk,rk", SPECIAL_KEYS, ids=[f"{i}" for i in range(len(SPECIAL_KEYS))])
def test_point_operations_with_special_keys(table, pk, rk):
    table.create_entity({"PartitionKey": pk, "RowKey": rk, "v": "x"})
    got = table.get_entity(pk, rk)
    assert got["PartitionKey"] == pk
    assert got["RowKey"] == rk
    assert got["v"] == "x"

    table.update_entity({"PartitionKey": pk, "RowKey": rk, "v": "y"}, mode=UpdateMode.REPLACE)
    assert table.get_entity(pk, rk)["v"] == "y"
    table.update_entity({"PartitionKey": pk, "RowKey": rk, "w": 1}, mode=UpdateMode.MERGE)
    got = table.get_entity(pk, rk)
    assert (got["v"], got["w"]) == ("y", 1)

    # The key also round-trips through a query feed and a $filter.
    listed = list(table.list_entities())
    assert [(e["PartitionKey"], e["RowKey"]) for e in listed] == [(pk, rk)]
    found = list(
        table.query_entities("PartitionKey eq @pk and RowKey eq @rk", parameters={"pk": pk, "rk": rk})
    )
    assert [(e["PartitionKey"], e["RowKey"]) for e in found] == [(pk, rk)]

    table.delete_entity(pk, rk)
    with pytest.raises(ResourceNotFoundError) as exc:
        table.get_entity(pk, rk)
    assert_refused(exc.value, 404, "ResourceNotFound")


def test_special_keys_are_distinct(table):
    for pk, rk in SPECIAL_KEYS:
        table.create_entity({"PartitionKey": pk, "RowKey": rk, "tag": f"{pk}|{rk}"})
    for pk, rk in SPECIAL_KEYS:
        assert table.get_entity(pk, rk)["tag"] == f"{pk}|{rk}"
    assert len(list(table.list_entities())) == len(SPECIAL_KEYS)


def test_get_missing_entity_404(table):
    table.create_entity({"PartitionKey": "p", "RowKey": "r"})
    for pk, rk in [("p", "missing"), ("missing", "r"), ("P", "r")]:
        with pytest.raises(ResourceNotFoundError) as exc:
            table.get_entity(pk, rk)
        assert exc.value.status_code == 404
        assert error_code(exc.value) == "ResourceNotFound"


def test_update_replace_drops_unspecified_properties(table):
    table.create_entity({"PartitionKey": "p", "RowKey": "r", "a": 1, "b": "keep?"})
    table.update_entity({"PartitionKey": "p", "RowKey": "r", "a": 2, "c": True}, mode=UpdateMode.REPLACE)
    got = table.get_entity("p", "r")
    assert _props(got) == {"a": 2, "c": True}


def test_update_merge_keeps_unspecified_properties(table):
    table.create_entity({"PartitionKey": "p", "RowKey": "r", "a": 1, "b": "kept"})
    table.update_entity({"PartitionKey": "p", "RowKey": "r", "a": 2, "c": True}, mode=UpdateMode.MERGE)
    got = table.get_entity("p", "r")
    assert _props(got) == {"a": 2, "b": "kept", "c": True}


@pytest.mark.parametrize("mode", [UpdateMode.REPLACE, UpdateMode.MERGE])
def test_update_missing_entity_404(table, mode):
    with pytest.raises(ResourceNotFoundError) as exc:
        table.update_entity({"PartitionKey": "p", "RowKey": "nope", "a": 1}, mode=mode)
    assert exc.value.status_code == 404
    assert error_code(exc.value) == "ResourceNotFound"
    assert list(table.list_entities()) == []


@pytest.mark.parametrize("mode", [UpdateMode.REPLACE, UpdateMode.MERGE])
def test_update_with_etag_conditions(table, mode):
    created = table.create_entity({"PartitionKey": "p", "RowKey": "r", "a": 1})
    etag1 = created["etag"]

    updated = table.update_entity(
        {"PartitionKey": "p", "RowKey": "r", "a": 2},
        mode=mode,
        etag=etag1,
        match_condition=MatchConditions.IfNotModified,
    )
    etag2 = updated["etag"]
    assert etag2 and etag2 != etag1
    assert table.get_entity("p", "r").metadata["etag"] == etag2

    with pytest.raises(ResourceModifiedError) as exc:
        table.update_entity(
            {"PartitionKey": "p", "RowKey": "r", "a": 3},
            mode=mode,
            etag=etag1,
            match_condition=MatchConditions.IfNotModified,
        )
    assert exc.value.status_code == 412
    assert error_code(exc.value) == "UpdateConditionNotSatisfied"
    got = table.get_entity("p", "r")
    assert got["a"] == 2
    assert got.metadata["etag"] == etag2

    # Unconditional update (If-Match: *) always succeeds.
    table.update_entity(
        {"PartitionKey": "p", "RowKey": "r", "a": 4}, mode=mode, match_condition=MatchConditions.Unconditionally
    )
    assert table.get_entity("p", "r")["a"] == 4


def test_etag_and_timestamp_change_on_every_write(table):
    etags = []
    stamps = []
    table.create_entity({"PartitionKey": "p", "RowKey": "r", "n": 0})
    for i in range(1, 6):
        got = table.get_entity("p", "r")
        etags.append(got.metadata["etag"])
        stamps.append(got.metadata["timestamp"])
        if i % 2:
            table.update_entity({"PartitionKey": "p", "RowKey": "r", "n": i}, mode=UpdateMode.MERGE)
        else:
            table.upsert_entity({"PartitionKey": "p", "RowKey": "r", "n": i}, mode=UpdateMode.REPLACE)
    assert len(set(etags)) == len(etags), f"etag did not change on every update: {etags}"
    assert all(isinstance(s, datetime) for s in stamps)
    assert all(s.tzinfo is not None for s in stamps)
    assert stamps == sorted(stamps) and len(set(stamps)) == len(stamps), stamps
    now = datetime.now(stamps[0].tzinfo)
    assert abs((now - stamps[-1]).total_seconds()) < 300, "Timestamp should be the server's current UTC time"


def test_entity_metadata_present(table):
    table.create_entity({"PartitionKey": "p", "RowKey": "r"})
    got = table.get_entity("p", "r")
    assert got.metadata.get("etag", "").startswith('W/"'), got.metadata
    assert isinstance(got.metadata.get("timestamp"), datetime)
    listed = list(table.list_entities())[0]
    assert listed.metadata["etag"] == got.metadata["etag"]
    assert listed.metadata["timestamp"] == got.metadata["timestamp"]
    # Timestamp is a system property, not a user property.
    assert "Timestamp" not in got


def test_timestamp_sent_by_client_is_ignored(table):
    table.create_entity(
        {"PartitionKey": "p", "RowKey": "r", "Timestamp": datetime(2001, 1, 1), "v": 1}
    )
    got = table.get_entity("p", "r")
    assert got.metadata["timestamp"].year >= 2020


@pytest.mark.parametrize("mode", [UpdateMode.MERGE, UpdateMode.REPLACE])
def test_upsert_new_and_existing(table, mode):
    # New entity: inserted.
    table.upsert_entity({"PartitionKey": "p", "RowKey": "r", "a": 1, "b": "x"}, mode=mode)
    assert _props(table.get_entity("p", "r")) == {"a": 1, "b": "x"}
    # Existing entity: merged or replaced.
    meta = table.upsert_entity({"PartitionKey": "p", "RowKey": "r", "a": 2, "c": 3.5}, mode=mode)
    assert meta.get("etag")
    got = table.get_entity("p", "r")
    if mode == UpdateMode.MERGE:
        assert _props(got) == {"a": 2, "b": "x", "c": 3.5}
    else:
        assert _props(got) == {"a": 2, "c": 3.5}
    assert got.metadata["etag"] == meta["etag"]


def test_delete_entity_unconditional(table):
    table.create_entity({"PartitionKey": "p", "RowKey": "r"})
    table.create_entity({"PartitionKey": "p", "RowKey": "r2"})
    rec = ResponseRecorder()
    table.delete_entity("p", "r", raw_response_hook=rec)
    assert rec.last["status"] == 204
    with pytest.raises(ResourceNotFoundError) as exc:
        table.get_entity("p", "r")
    assert_refused(exc.value, 404, "ResourceNotFound")
    assert [e["RowKey"] for e in table.list_entities()] == ["r2"]
    # Also the entity-object overload.
    table.delete_entity(entity={"PartitionKey": "p", "RowKey": "r2"})
    assert list(table.list_entities()) == []


def test_delete_entity_with_etag(table):
    meta = table.create_entity({"PartitionKey": "p", "RowKey": "r", "a": 1})
    stale = meta["etag"]
    table.update_entity({"PartitionKey": "p", "RowKey": "r", "a": 2})
    current = table.get_entity("p", "r").metadata["etag"]
    assert current != stale

    with pytest.raises(ResourceModifiedError) as exc:
        table.delete_entity("p", "r", etag=stale, match_condition=MatchConditions.IfNotModified)
    assert exc.value.status_code == 412
    assert error_code(exc.value) == "UpdateConditionNotSatisfied"
    assert table.get_entity("p", "r")["a"] == 2

    table.delete_entity("p", "r", etag=current, match_condition=MatchConditions.IfNotModified)
    with pytest.raises(ResourceNotFoundError) as exc:
        table.get_entity("p", "r")
    assert_refused(exc.value, 404, "ResourceNotFound")


def test_delete_missing_entity_404(table):
    # The SDK swallows the 404; the server's answer is asserted from the raw response.
    rec = ResponseRecorder()
    table.delete_entity("p", "missing", raw_response_hook=rec)
    assert rec.last["status"] == 404
    assert rec.last["code"] == "ResourceNotFound"


def test_null_properties_are_not_stored(table):
    table.create_entity({"PartitionKey": "p", "RowKey": "r", "a": 1, "n": None})
    got = table.get_entity("p", "r")
    assert "n" not in got
    assert got["a"] == 1


def test_select_point_query(table):
    table.create_entity({"PartitionKey": "p", "RowKey": "r", "a": 1, "b": "two", "c": 3.0, "d": True})
    got = table.get_entity("p", "r", select=["a", "c"])
    assert dict(got) == {"a": 1, "c": 3.0}
    assert got.metadata.get("etag")


def test_select_query(table):
    for i in range(5):
        table.create_entity({"PartitionKey": "p", "RowKey": f"r{i}", "a": i, "b": f"b{i}", "c": i * 1.5})
    rows = list(table.list_entities(select=["b", "RowKey"]))
    assert [dict(r) for r in rows] == [{"RowKey": f"r{i}", "b": f"b{i}"} for i in range(5)]
    rows = list(table.query_entities("a ge 3", select=["a"]))
    assert [dict(r) for r in rows] == [{"a": 3}, {"a": 4}]
    assert all(r.metadata.get("etag") for r in rows)


def test_query_entities_filter_basic(table):
    for i in range(10):
        table.create_entity({"PartitionKey": f"p{i % 2}", "RowKey": f"r{i:02d}", "n": i})
    got = [e["n"] for e in table.query_entities("PartitionKey eq 'p1' and n gt 4")]
    assert got == [5, 7, 9]
    got = [e["n"] for e in table.query_entities("n lt @x or RowKey eq @r", parameters={"x": 2, "r": "r09"})]
    assert got == [0, 1, 9]


def test_results_sorted_by_partition_then_row_key_ordinal(table):
    keys = ["B", "a", "A", "b", "_", "0", "Z", "~", "a0", "aa", "Aa"]
    pks = ["pb", "pB", "pa"]
    for pk in pks:
        for rk in keys:
            table.create_entity({"PartitionKey": pk, "RowKey": rk})
    got = [(e["PartitionKey"], e["RowKey"]) for e in table.list_entities()]
    expected = sorted((pk, rk) for pk in pks for rk in keys)  # Python str order == ordinal for ASCII
    assert got == expected


def test_results_per_page_top(table):
    for i in range(23):
        table.create_entity({"PartitionKey": "p", "RowKey": f"{i:03d}"})
    pages = [list(p) for p in table.list_entities(results_per_page=7).by_page()]
    assert len(pages) >= 4
    assert all(len(p) <= 7 for p in pages)
    assert len(pages[0]) == 7
    flat = [e["RowKey"] for p in pages for e in p]
    assert flat == [f"{i:03d}" for i in range(23)]


def test_generated_client_error_is_http_response_error(table):
    # Sanity check that errors from the lower-level client are HttpResponseErrors with a body code.
    with pytest.raises(HttpResponseError) as exc:
        table._client.table.query_entity_with_partition_and_row_key(
            table=table.table_name, partition_key="x", row_key="y"
        )
    assert exc.value.status_code == 404
    assert error_code(exc.value) == "ResourceNotFound"
