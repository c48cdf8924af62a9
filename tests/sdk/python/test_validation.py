"""Entity validation errors surface with the service's codes (spec 1.9, 1.10).

Azurite deviates from the real service here (no property-name validation, no 252-property
limit, no Int32 range check); these tests assert the REAL service's behaviour.
"""

import pytest
from azure.core.exceptions import HttpResponseError

from sdk_util import ResponseRecorder, error_code, odata_error_code

MAX_STRING_CHARS = 32 * 1024  # 64 KiB of UTF-16
MAX_BINARY_BYTES = 64 * 1024
MAX_CUSTOM_PROPERTIES = 252  # 255 including PartitionKey, RowKey, Timestamp


def _assert_400(exc_info, code):
    exc = exc_info.value
    assert exc.status_code == 400, f"expected 400, got {exc.status_code}: {exc}"
    assert error_code(exc) == code, f"expected {code}, got {error_code(exc)!r}: {exc}"


def _assert_absent(table, pk="p", rk="r"):
    assert [(e["PartitionKey"], e["RowKey"]) for e in table.list_entities()].count((pk, rk)) == 0


def test_string_property_at_limit_accepted(table):
    value = "s" * MAX_STRING_CHARS
    table.create_entity({"PartitionKey": "p", "RowKey": "r", "s": value})
    assert table.get_entity("p", "r")["s"] == value


def test_string_property_too_large(table):
    with pytest.raises(HttpResponseError) as exc:
        table.create_entity({"PartitionKey": "p", "RowKey": "r", "s": "s" * (MAX_STRING_CHARS + 1)})
    _assert_400(exc, "PropertyValueTooLarge")
    _assert_absent(table)


def test_string_property_too_large_on_update(table):
    table.create_entity({"PartitionKey": "p", "RowKey": "r", "s": "small"})
    with pytest.raises(HttpResponseError) as exc:
        table.upsert_entity({"PartitionKey": "p", "RowKey": "r", "s": "s" * (MAX_STRING_CHARS + 1)})
    _assert_400(exc, "PropertyValueTooLarge")
    assert table.get_entity("p", "r")["s"] == "small"


def test_binary_property_at_limit_accepted(table):
    value = bytes(i % 251 for i in range(MAX_BINARY_BYTES))
    table.create_entity({"PartitionKey": "p", "RowKey": "r", "b": value})
    assert table.get_entity("p", "r")["b"] == value


def test_binary_property_too_large(table):
    with pytest.raises(HttpResponseError) as exc:
        table.create_entity({"PartitionKey": "p", "RowKey": "r", "b": b"\x01" * (MAX_BINARY_BYTES + 1)})
    _assert_400(exc, "PropertyValueTooLarge")
    _assert_absent(table)


def test_max_properties_accepted(table):
    entity = {"PartitionKey": "p", "RowKey": "r"}
    entity.update({f"p{i}": i for i in range(MAX_CUSTOM_PROPERTIES)})
    table.create_entity(entity)
    got = table.get_entity("p", "r")
    assert len(got) == MAX_CUSTOM_PROPERTIES + 2


def test_too_many_properties(table):
    entity = {"PartitionKey": "p", "RowKey": "r"}
    entity.update({f"p{i}": i for i in range(MAX_CUSTOM_PROPERTIES + 1)})
    with pytest.raises(HttpResponseError) as exc:
        table.create_entity(entity)
    _assert_400(exc, "TooManyProperties")
    _assert_absent(table)


def test_too_many_properties_via_merge(table):
    first = {"PartitionKey": "p", "RowKey": "r"}
    first.update({f"a{i}": i for i in range(200)})
    table.create_entity(first)
    second = {"PartitionKey": "p", "RowKey": "r"}
    second.update({f"b{i}": i for i in range(60)})  # 260 custom properties after the merge
    with pytest.raises(HttpResponseError) as exc:
        table.update_entity(second)  # MERGE
    _assert_400(exc, "TooManyProperties")
    assert len(table.get_entity("p", "r")) == 202


@pytest.mark.parametrize("name", ["bad-name", "has space", "semi;colon"])
def test_invalid_property_name(table, name):
    with pytest.raises(HttpResponseError) as exc:
        table.create_entity({"PartitionKey": "p", "RowKey": "r", name: "v"})
    _assert_400(exc, "PropertyNameInvalid")
    _assert_absent(table)


def test_property_name_too_long(table):
    table.create_entity({"PartitionKey": "p", "RowKey": "ok", "n" * 255: 1})
    assert table.get_entity("p", "ok")["n" * 255] == 1
    with pytest.raises(HttpResponseError) as exc:
        table.create_entity({"PartitionKey": "p", "RowKey": "r", "n" * 256: 1})
    _assert_400(exc, "PropertyNameTooLong")
    _assert_absent(table)


@pytest.mark.parametrize(
    "pk,rk",
    [
        ("a/b", "r"),
        ("p", "a/b"),
        ("a\\b", "r"),
        ("p", "a#b"),
        ("p", "a?b"),
        ("p", "tab\there"),
        ("p", "new\nline"),
        ("p", "del\x7f"),
    ],
    ids=["slash-pk", "slash-rk", "backslash", "hash", "question", "tab", "newline", "del"],
)
def test_forbidden_key_characters(table, pk, rk):
    rec = ResponseRecorder()
    with pytest.raises((HttpResponseError, ValueError)):
        table.create_entity({"PartitionKey": pk, "RowKey": rk, "v": 1}, raw_response_hook=rec)
    assert rec.responses and rec.last["status"] == 400, rec.responses
    assert list(table.list_entities()) == []


def test_missing_row_key_rejected(table):
    rec = ResponseRecorder()
    # The SDK turns PropertiesNeedValue into a ValueError; anything else stays an HttpResponseError.
    with pytest.raises((HttpResponseError, ValueError)):
        table.create_entity({"PartitionKey": "p", "v": 1}, raw_response_hook=rec)
    assert rec.last["status"] == 400
    assert rec.last["code"] == "PropertiesNeedValue"


def _raw_insert(table, body):
    """Insert bypassing the SDK's client-side type checks (it refuses out-of-range Int32)."""
    return table._client.table.insert_entity(table=table.table_name, table_entity_properties=body)


@pytest.mark.parametrize("value", [2**31, -(2**31) - 1, 10**12])
def test_int32_out_of_range_rejected(table, value):
    with pytest.raises(HttpResponseError) as exc:
        _raw_insert(table, {"PartitionKey": "p", "RowKey": "r", "n": value, "n@odata.type": "Edm.Int32"})
    _assert_400(exc, "InvalidInput")
    _assert_absent(table)


def test_int32_in_range_typed_accepted_raw(table):
    _raw_insert(table, {"PartitionKey": "p", "RowKey": "r", "n": 2**31 - 1, "n@odata.type": "Edm.Int32"})
    assert table.get_entity("p", "r")["n"] == 2**31 - 1


def test_int64_out_of_range_rejected(table):
    with pytest.raises(HttpResponseError) as exc:
        _raw_insert(
            table, {"PartitionKey": "p", "RowKey": "r", "n": str(2**63), "n@odata.type": "Edm.Int64"}
        )
    _assert_400(exc, "InvalidInput")
    _assert_absent(table)


def test_entity_under_limit_accepted(table):
    # 10 x 30,000 chars: about 600 KB as UTF-16, well under 1 MiB.
    entity = {"PartitionKey": "p", "RowKey": "r"}
    entity.update({f"s{i}": chr(ord("a") + i) * 30000 for i in range(10)})
    table.create_entity(entity)
    got = table.get_entity("p", "r")
    assert all(got[f"s{i}"] == entity[f"s{i}"] for i in range(10))


def test_entity_too_large(table):
    # 40 x 30,000 chars: 1.2 MB of request body, 2.4 MB as UTF-16; every property is valid alone.
    entity = {"PartitionKey": "p", "RowKey": "r"}
    entity.update({f"s{i}": "x" * 30000 for i in range(40)})
    with pytest.raises(HttpResponseError) as exc:
        table.create_entity(entity)
    _assert_400(exc, "EntityTooLarge")
    _assert_absent(table)


def test_entity_too_large_on_upsert(table):
    table.create_entity({"PartitionKey": "p", "RowKey": "r", "small": 1})
    entity = {"PartitionKey": "p", "RowKey": "r"}
    entity.update({f"s{i}": "x" * 30000 for i in range(40)})
    with pytest.raises(HttpResponseError) as exc:
        table.upsert_entity(entity)
    _assert_400(exc, "EntityTooLarge")
    assert set(table.get_entity("p", "r").keys()) == {"PartitionKey", "RowKey", "small"}


def test_odata_error_body_shape(table):
    """The error code is carried in the odata.error JSON body (the SDKs read it from there)."""
    table.create_entity({"PartitionKey": "p", "RowKey": "r"})
    with pytest.raises(HttpResponseError) as exc:
        _raw_insert(table, {"PartitionKey": "p", "RowKey": "r"})
    body = exc.value.response.json()
    assert odata_error_code(body) == "EntityAlreadyExists"
    msg = body["odata.error"]["message"]
    assert msg["lang"] == "en-US"
    assert isinstance(msg["value"], str) and msg["value"]
