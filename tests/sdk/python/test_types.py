"""Every Edm type round-trips exactly (spec 1.5, 1.9)."""

import math
import uuid
from datetime import datetime, timedelta, timezone

import pytest
from azure.data.tables import EdmType, EntityProperty, UpdateMode

GUID = uuid.UUID("c9da6455-213d-42c9-9a79-3e9149a57833")

ENTITY = {
    "PartitionKey": "types",
    "RowKey": "all",
    "Str": "hello world",
    "EmptyStr": "",
    "Unicode": "héllo wörld — 日本語 — 😀 — \u00a0\u2028",
    "NumericLookingStr": "12345",
    "DateLookingStr": "2024-01-01T00:00:00Z",
    "Int32": 42,
    "Int32Zero": 0,
    "Int32Max": 2**31 - 1,
    "Int32Min": -(2**31),
    "Int64": EntityProperty(2**53 + 1, EdmType.INT64),
    "Int64Small": EntityProperty(7, EdmType.INT64),
    "Int64Max": EntityProperty(2**63 - 1, EdmType.INT64),
    "Int64Min": EntityProperty(-(2**63), EdmType.INT64),
    "Double": 3.141592653589793,
    "DoubleIntegral": 2.0,
    "DoubleNeg": -0.1,
    "DoubleHuge": 1e308,
    "DoubleTiny": 5e-324,
    "NaN": float("nan"),
    "Inf": float("inf"),
    "NegInf": float("-inf"),
    "BoolTrue": True,
    "BoolFalse": False,
    "DateTime": datetime(2024, 2, 29, 13, 14, 15, 123456, tzinfo=timezone.utc),
    "DateTimeNoFraction": datetime(2001, 9, 9, 1, 46, 40, tzinfo=timezone.utc),
    "DateTimeMin": datetime(1601, 1, 1, tzinfo=timezone.utc),
    "DateTimeMax": datetime(9999, 12, 31, 23, 59, 59, 999999, tzinfo=timezone.utc),
    "Guid": GUID,
    "Binary": bytes(range(256)),
    "BinaryEmpty": b"",
    "TypedString": EntityProperty("typed", EdmType.STRING),
    "TypedBool": EntityProperty(True, EdmType.BOOLEAN),
    "TypedDouble": EntityProperty(10.0, EdmType.DOUBLE),
    "TypedInt32": EntityProperty(-5, EdmType.INT32),
}


def _check_roundtrip(got):
    assert got["Str"] == "hello world"
    assert got["EmptyStr"] == ""
    assert got["Unicode"] == ENTITY["Unicode"]
    assert got["NumericLookingStr"] == "12345" and isinstance(got["NumericLookingStr"], str)
    assert got["DateLookingStr"] == "2024-01-01T00:00:00Z" and isinstance(got["DateLookingStr"], str)

    for k in ("Int32", "Int32Zero", "Int32Max", "Int32Min"):
        assert type(got[k]) is int, (k, got[k])
        assert got[k] == ENTITY[k]
    for k in ("Int64", "Int64Small", "Int64Max", "Int64Min"):
        assert isinstance(got[k], EntityProperty), (k, got[k])
        assert got[k].edm_type == EdmType.INT64, (k, got[k])
        assert got[k].value == ENTITY[k].value, (k, got[k])

    for k in ("Double", "DoubleIntegral", "DoubleNeg", "DoubleHuge", "DoubleTiny"):
        assert type(got[k]) is float, (k, got[k])
        assert got[k] == ENTITY[k], (k, got[k])
    assert type(got["NaN"]) is float and math.isnan(got["NaN"])
    assert got["Inf"] == float("inf")
    assert got["NegInf"] == float("-inf")

    assert got["BoolTrue"] is True
    assert got["BoolFalse"] is False

    for k in ("DateTime", "DateTimeNoFraction", "DateTimeMin", "DateTimeMax"):
        assert isinstance(got[k], datetime), (k, got[k])
        assert got[k] == ENTITY[k], (k, got[k])
        assert got[k].microsecond == ENTITY[k].microsecond, (k, got[k])

    assert got["Guid"] == GUID and isinstance(got["Guid"], uuid.UUID)
    assert got["Binary"] == bytes(range(256)) and isinstance(got["Binary"], bytes)
    assert got["BinaryEmpty"] == b"" and isinstance(got["BinaryEmpty"], bytes)

    assert got["TypedString"] == "typed"
    assert got["TypedBool"] is True
    assert got["TypedDouble"] == 10.0 and type(got["TypedDouble"]) is float
    assert got["TypedInt32"] == -5 and type(got["TypedInt32"]) is int

    expected_names = set(ENTITY) - {"PartitionKey", "RowKey"}
    assert set(got.keys()) - {"PartitionKey", "RowKey"} == expected_names


def test_all_types_roundtrip_point_query(table):
    table.create_entity(ENTITY)
    _check_roundtrip(table.get_entity("types", "all"))


def test_all_types_roundtrip_query_feed(table):
    table.create_entity(ENTITY)
    rows = list(table.list_entities())
    assert len(rows) == 1
    _check_roundtrip(rows[0])


@pytest.mark.parametrize("mode", [UpdateMode.REPLACE, UpdateMode.MERGE])
def test_all_types_roundtrip_after_update(table, mode):
    table.create_entity({"PartitionKey": "types", "RowKey": "all", "Str": "old", "Extra": 1})
    table.update_entity(ENTITY, mode=mode)
    got = table.get_entity("types", "all")
    if mode == UpdateMode.MERGE:
        assert got.pop("Extra") == 1
    else:
        assert "Extra" not in got
    _check_roundtrip(got)


@pytest.mark.parametrize("mode", [UpdateMode.REPLACE, UpdateMode.MERGE])
def test_all_types_roundtrip_after_upsert(table, mode):
    table.upsert_entity(ENTITY, mode=mode)
    _check_roundtrip(table.get_entity("types", "all"))


# Each typed filter with a value that matches and a near value that must not, so that a
# server matching everything (or comparing loosely) fails one of the pair.
MICROSECOND = timedelta(microseconds=1)
FILTER_PAIRS = [
    ("Int32 eq @v", 42, 43),
    # the SDK sends 9007199254740993L; a server reading Int64 through a double matches 2**53 too
    ("Int64 eq @v", 2**53 + 1, 2**53),
    ("Int64Max gt @v", 2**62, 2**63 - 1),
    # Int64 comparison is numeric, not textual ("7" > "10000000000" as text).
    ("Int64Small lt @v", 10_000_000_000, 7),
    ("Double eq @v", 3.141592653589793, 3.1415926535897927),
    ("BoolTrue eq @v", True, False),
    ("DateTime eq @v", ENTITY["DateTime"], ENTITY["DateTime"] + MICROSECOND),
    # Sub-millisecond precision is kept: 1 microsecond earlier compares less.
    ("DateTime gt @v", ENTITY["DateTime"] - MICROSECOND, ENTITY["DateTime"]),
    ("Guid eq @v", GUID, uuid.UUID(int=0)),
    # comparison is case-sensitive
    ("Str eq @v", "hello world", "Hello world"),
    ("Unicode eq @v", ENTITY["Unicode"], ENTITY["Unicode"][:-1]),
    ("Binary eq @v", bytes(range(256)), bytes(range(255))),
]


@pytest.mark.parametrize(
    "flt,match,other", FILTER_PAIRS, ids=[f"{f}-{i}" for i, (f, _, _) in enumerate(FILTER_PAIRS)]
)
def test_typed_filter_matches_its_value_and_not_a_near_one(table, flt, match, other):
    """Typed constants in $filter (spec 1.8)."""
    table.create_entity(ENTITY)
    assert len(list(table.query_entities(flt, parameters={"v": match}))) == 1, (flt, match)
    assert list(table.query_entities(flt, parameters={"v": other})) == [], (flt, other)
