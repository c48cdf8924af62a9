"""The same data through both wire formats: written by the legacy AtomPub client and read
by the modern JSON SDK (azure-data-tables), and the other way round."""

import math
import uuid
from datetime import datetime, timezone

import pytest
from azure.data.tables import EdmType, EntityProperty as JsonProperty, UpdateMode
from azure.storage.table import EntityProperty as AtomProperty

from legacy_util import entity_props

UTC = timezone.utc
GUID = "c9da6455-213d-42c9-9a79-3e9149a57833"
BLOB = bytes(range(256)) * 3


@pytest.fixture
def json_table(modern, table):
    client = modern.get_table_client(table)
    yield client
    client.close()


def test_atom_written_json_read(svc, table, json_table):
    inserted = svc.insert_entity(
        table,
        {
            "PartitionKey": "x",
            "RowKey": "1",
            "Str": "h\u00e9llo <&> \U0001F600",
            "Empty": "",
            "Int32": -2147483648,
            "Int64": 2**63 - 1,
            "Int64Typed": AtomProperty("Edm.Int64", "5"),
            "Double": 0.1,
            "DoubleTiny": 5e-324,
            "Inf": AtomProperty("Edm.Double", "INF"),
            "NaN": AtomProperty("Edm.Double", "NaN"),
            "Bool": False,
            "When": datetime(2024, 2, 29, 13, 14, 15, tzinfo=UTC),
            "WhenFraction": AtomProperty("Edm.DateTime", "2024-02-29T13:14:15.1234567Z"),
            "Guid": AtomProperty("Edm.Guid", GUID),
            "Bin": AtomProperty("Edm.Binary", BLOB),
            "BinEmpty": AtomProperty("Edm.Binary", b""),
        },
    )
    got = json_table.get_entity("x", "1")
    assert got.metadata["etag"] == inserted.etag

    assert got["Str"] == "h\u00e9llo <&> \U0001F600"
    assert got["Empty"] == ""
    assert type(got["Int32"]) is int and got["Int32"] == -2147483648
    for name, value in (("Int64", 2**63 - 1), ("Int64Typed", 5)):
        assert isinstance(got[name], JsonProperty), (name, got[name])
        assert (got[name].value, got[name].edm_type) == (value, EdmType.INT64), name
    assert type(got["Double"]) is float and got["Double"] == 0.1
    assert got["DoubleTiny"] == 5e-324
    assert got["Inf"] == math.inf
    assert math.isnan(got["NaN"])
    assert got["Bool"] is False
    assert got["When"] == datetime(2024, 2, 29, 13, 14, 15, tzinfo=UTC)
    assert got["WhenFraction"] == datetime(2024, 2, 29, 13, 14, 15, 123456, tzinfo=UTC)
    assert got["WhenFraction"].tables_service_value == "2024-02-29T13:14:15.1234567Z"
    assert got["Guid"] == uuid.UUID(GUID)
    assert got["Bin"] == BLOB and isinstance(got["Bin"], bytes)
    assert got["BinEmpty"] == b""
    assert set(got) == {
        "PartitionKey", "RowKey", "Str", "Empty", "Int32", "Int64", "Int64Typed", "Double", "DoubleTiny",
        "Inf", "NaN", "Bool", "When", "WhenFraction", "Guid", "Bin", "BinEmpty",
    }


def test_json_written_atom_read(svc, table, json_table):
    written = json_table.create_entity(
        {
            "PartitionKey": "y",
            "RowKey": "1",
            "Str": "  spaced \u65e5\u672c  ",
            "Int32": 2147483647,
            "Int64": JsonProperty(-(2**63), EdmType.INT64),
            "Double": 1.7976931348623157e308,
            "NegInf": float("-inf"),
            "Bool": True,
            "When": datetime(1601, 1, 1, tzinfo=UTC),
            "WhenFraction": datetime(2020, 5, 6, 7, 8, 9, 654321, tzinfo=UTC),
            "Guid": uuid.UUID(GUID),
            "Bin": BLOB,
        }
    )
    got = svc.get_entity(table, "y", "1")
    assert got.etag == written["etag"]
    props = entity_props(got)
    assert props["Str"] == "  spaced \u65e5\u672c  "
    assert props["Int32"] == 2147483647
    assert props["Int64"] == -(2**63)
    assert props["Double"] == 1.7976931348623157e308
    assert props["NegInf"] == -math.inf
    assert props["Bool"] is True
    assert props["When"] == datetime(1601, 1, 1, tzinfo=UTC)
    assert props["WhenFraction"] == datetime(2020, 5, 6, 7, 8, 9, 654321, tzinfo=UTC)
    assert (props["Guid"].type, props["Guid"].value) == ("Edm.Guid", GUID)
    assert (props["Bin"].type, props["Bin"].value) == ("Edm.Binary", BLOB)
    assert isinstance(props["Timestamp"], datetime)
    assert set(props) == {
        "PartitionKey", "RowKey", "Timestamp", "Str", "Int32", "Int64", "Double", "NegInf", "Bool",
        "When", "WhenFraction", "Guid", "Bin",
    }


def test_int32_and_int64_keep_their_types_across_formats(svc, table, json_table):
    """The client picks Edm.Int32 or Edm.Int64 by range; the JSON side sees that type."""
    svc.insert_entity(table, {"PartitionKey": "t", "RowKey": "1", "Small": 2**31 - 1, "Large": 2**31})
    got = json_table.get_entity("t", "1")
    assert type(got["Small"]) is int
    assert isinstance(got["Large"], JsonProperty) and got["Large"].edm_type == EdmType.INT64


def test_etag_from_one_format_guards_writes_in_the_other(svc, table, json_table):
    json_written = json_table.create_entity({"PartitionKey": "e", "RowKey": "1", "V": 1})
    atom = svc.merge_entity(table, "e", "1", {"V": 2}, if_match=json_written["etag"])

    from azure.core import MatchConditions
    from azure.core.exceptions import ResourceModifiedError

    with pytest.raises(ResourceModifiedError):
        json_table.update_entity(
            {"PartitionKey": "e", "RowKey": "1", "V": 3}, mode=UpdateMode.MERGE,
            etag=json_written["etag"], match_condition=MatchConditions.IfNotModified,
        )
    json_table.update_entity(
        {"PartitionKey": "e", "RowKey": "1", "V": 4}, mode=UpdateMode.REPLACE,
        etag=atom["etag"], match_condition=MatchConditions.IfNotModified,
    )
    assert svc.get_entity(table, "e", "1").V == 4


def test_table_created_in_one_format_is_listed_in_the_other(svc, modern, table):
    assert table in [t.name for t in modern.list_tables()]
    json_made = "json" + table[4:]
    modern.create_table(json_made)
    try:
        assert json_made in [t.name for t in svc.query_tables()]
        assert [t.name for t in svc.query_tables(json_made)] == [json_made]
    finally:
        modern.delete_table(json_made)
