"""Every Edm type the legacy client writes, read back through the same client.

The client infers String, Int32/Int64 (by range), Double, Boolean and DateTime (sent
with whole seconds) from Python values; Guid, Binary, typed Int64 and DateTime with a
fraction go through EntityProperty(type, value).
"""

import math
from datetime import datetime, timezone

import pytest
from azure.storage.table import EntityProperty

from legacy_util import entity_props

UTC = timezone.utc

STRINGS = {
    "Str": "hello world",
    "Empty": "",
    "Spaces": "  leading and trailing  ",
    "Tabs": "a\tb\nc",
    "Markup": "<d:Str m:type=\"Edm.Int32\">1</d:Str> & &amp; ]]> 'q'",
    "Unicode": "h\u00e9llo w\u00f6rld \u2014 \u65e5\u672c\u8a9e \u2014 \U0001F600 \u00a0",
    "NumericLooking": "12345",
    "Long": "x" * 30000,
}

NUMBERS = {
    "Int32": 42,
    "Int32Zero": 0,
    "Int32Max": 2**31 - 1,
    "Int32Min": -(2**31),
    "Int64Auto": 2**31,
    "Int64Max": 2**63 - 1,
    "Int64Min": -(2**63),
    "Double": 3.141592653589793,
    "DoubleTenth": 0.1,
    "DoubleIntegral": 2.0,
    "DoubleNeg": -0.1,
    "DoubleHuge": 1.7976931348623157e308,
    "DoubleTiny": 5e-324,
    "DoubleSmallNormal": 2.2250738585072014e-308,
    "DoubleExp": 1e16,
    "DoubleNegExp": 1e-7,
}


def _roundtrip(svc, table, props):
    entity = {"PartitionKey": "types", "RowKey": "r"}
    entity.update(props)
    svc.insert_entity(table, entity)
    return entity_props(svc.get_entity(table, "types", "r"))


def test_strings(svc, table):
    got = _roundtrip(svc, table, STRINGS)
    for name, value in STRINGS.items():
        assert got[name] == value, name


def test_int32_int64_and_double(svc, table):
    got = _roundtrip(svc, table, NUMBERS)
    for name, value in NUMBERS.items():
        assert type(got[name]) is type(value), name
        assert got[name] == value, name


def test_double_special_values(svc, table):
    got = _roundtrip(
        svc,
        table,
        {
            "Inf": EntityProperty("Edm.Double", "INF"),
            "NegInf": EntityProperty("Edm.Double", "-INF"),
            "NaN": EntityProperty("Edm.Double", "NaN"),
            "NegZero": -0.0,
        },
    )
    assert got["Inf"] == math.inf
    assert got["NegInf"] == -math.inf
    assert math.isnan(got["NaN"])
    assert got["NegZero"] == 0.0 and math.copysign(1.0, got["NegZero"]) == -1.0


def test_typed_int64_given_as_text(svc, table):
    got = _roundtrip(
        svc,
        table,
        {"Small": EntityProperty("Edm.Int64", "7"), "Neg": EntityProperty("Edm.Int64", "-9007199254740993")},
    )
    assert got["Small"] == 7
    assert got["Neg"] == -9007199254740993


def test_booleans(svc, table):
    got = _roundtrip(svc, table, {"T": True, "F": False})
    assert got["T"] is True
    assert got["F"] is False


def test_datetimes(svc, table):
    got = _roundtrip(
        svc,
        table,
        {
            "Whole": datetime(2024, 2, 29, 13, 14, 15, tzinfo=UTC),
            "Naive": datetime(2001, 9, 9, 1, 46, 40),
            "Fraction": EntityProperty("Edm.DateTime", "2024-02-29T13:14:15.1234567Z"),
            "Min": EntityProperty("Edm.DateTime", "1601-01-01T00:00:00Z"),
            "Max": EntityProperty("Edm.DateTime", "9999-12-31T23:59:59.9999999Z"),
        },
    )
    assert got["Whole"] == datetime(2024, 2, 29, 13, 14, 15, tzinfo=UTC)
    # the client sends a naive datetime as UTC
    assert got["Naive"] == datetime(2001, 9, 9, 1, 46, 40, tzinfo=UTC)
    # the client's parser keeps microseconds
    assert got["Fraction"] == datetime(2024, 2, 29, 13, 14, 15, 123456, tzinfo=UTC)
    assert got["Min"] == datetime(1601, 1, 1, tzinfo=UTC)
    assert got["Max"] == datetime(9999, 12, 31, 23, 59, 59, 999999, tzinfo=UTC)


def test_guid(svc, table):
    got = _roundtrip(svc, table, {"G": EntityProperty("Edm.Guid", "c9da6455-213d-42c9-9a79-3e9149a57833")})
    assert isinstance(got["G"], EntityProperty)
    assert (got["G"].type, got["G"].value) == ("Edm.Guid", "c9da6455-213d-42c9-9a79-3e9149a57833")


def test_binary(svc, table):
    values = {
        "Bytes": bytes(range(256)),
        "Empty": b"",
        "Max": bytes(i % 251 for i in range(65536)),
    }
    got = _roundtrip(svc, table, {k: EntityProperty("Edm.Binary", v) for k, v in values.items()})
    for name, value in values.items():
        assert isinstance(got[name], EntityProperty), name
        assert (got[name].type, got[name].value) == ("Edm.Binary", value), name


def test_null_property_is_not_stored(svc, table):
    got = _roundtrip(svc, table, {"Kept": "v", "Nothing": None})
    assert got["Kept"] == "v"
    assert "Nothing" not in got


def test_every_type_in_one_entity_through_query(svc, table):
    props = dict(STRINGS)
    props.update(NUMBERS)
    props.update(
        {
            "Bool": True,
            "When": datetime(2020, 1, 2, 3, 4, 5, tzinfo=UTC),
            "G": EntityProperty("Edm.Guid", "00000000-0000-0000-0000-000000000001"),
            "B": EntityProperty("Edm.Binary", b"\x00\xff"),
        }
    )
    svc.insert_entity(table, dict(props, PartitionKey="types", RowKey="q"))
    [row] = list(svc.query_entities(table, filter="RowKey eq 'q'"))
    got = entity_props(row)
    for name in list(STRINGS) + list(NUMBERS) + ["Bool", "When"]:
        assert got[name] == props[name], name
    assert (got["G"].type, got["G"].value) == ("Edm.Guid", "00000000-0000-0000-0000-000000000001")
    assert (got["B"].type, got["B"].value) == ("Edm.Binary", b"\x00\xff")


@pytest.mark.parametrize(
    "edm, text",
    [("Edm.Int32", "2147483648"), ("Edm.Int32", "abc"), ("Edm.Int64", "9223372036854775808"),
     ("Edm.Guid", "not-a-guid"), ("Edm.DateTime", "yesterday"), ("Edm.Boolean", "maybe")],
)
def test_value_that_does_not_fit_its_type_is_400(svc, table, edm, text):
    from azure.common import AzureHttpError

    from legacy_util import error_details

    with pytest.raises(AzureHttpError) as ei:
        svc.insert_entity(table, {"PartitionKey": "p", "RowKey": "bad", "V": EntityProperty(edm, text)})
    status, code, body = error_details(ei.value)
    assert status == 400, body
    assert code == "InvalidInput", body
    assert list(svc.query_entities(table)) == []


def test_entity_size_counts_values_not_the_xml(svc, table):
    """15 binary properties of 64 KiB (about 1.3 MB of base64 in the entry) fit in the
    1 MiB entity limit; a 16th does not."""
    from azure.common import AzureHttpError

    from legacy_util import error_details

    blob = bytes(i % 256 for i in range(65536))
    props = {f"B{i:02d}": EntityProperty("Edm.Binary", blob) for i in range(15)}
    got = _roundtrip(svc, table, props)
    assert all(got[name].value == blob for name in props)

    props["B15"] = EntityProperty("Edm.Binary", blob)
    with pytest.raises(AzureHttpError) as ei:
        svc.insert_entity(table, dict(props, PartitionKey="types", RowKey="big"))
    status, code, body = error_details(ei.value)
    assert (status, code) == (400, "EntityTooLarge"), body[:500]
