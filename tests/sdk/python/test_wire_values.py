"""Values the real service accepts from this SDK, as its own recordings show: an
Edm.Boolean given as the string "False", keys typed Edm.DateTime / Edm.Guid in upserts and
updates (ignored there, refused by create_entity), a DateTime with nine fractional digits
(stored at 100 ns), and a filter of far more than 15 comparisons."""

import datetime
import uuid

import pytest

from azure.core.exceptions import HttpResponseError
from azure.data.tables import EdmType, EntityProperty, UpdateMode

from sdk_util import error_code


def test_boolean_strings_in_any_case_as_the_encoder_test_sends_them(table):
    # test_encoder_create_entity_tuples, recorded against the real service: 201
    table.create_entity(
        {
            "PartitionKey": "PK2",
            "RowKey": "RK2",
            "Data1": ("12345", EdmType.INT32),
            "Data2": ("False", EdmType.BOOLEAN),
            "Data3": ("True", EdmType.BOOLEAN),
            "Data4": EntityProperty("TRUE", EdmType.BOOLEAN),
            "Data7": ("3.14", EdmType.DOUBLE),
        }
    )
    got = table.get_entity("PK2", "RK2")
    assert got["Data1"] == 12345
    assert got["Data2"] is False
    assert got["Data3"] is True
    assert got["Data4"] is True
    assert got["Data7"] == 3.14
    with pytest.raises(HttpResponseError) as info:
        table.create_entity({"PartitionKey": "p", "RowKey": "bad", "B": ("yes", EdmType.BOOLEAN)})
    assert info.value.status_code == 400
    assert error_code(info.value) == "InvalidInput"


def test_typed_keys_are_ignored_by_upserts_and_updates_and_refused_by_insert(table):
    # test_encoder_{create,upsert,update}_entity_complex_keys, recorded against the real
    # service: the SDK annotates datetime and UUID keys; Insert answers 400, the rest 204
    pk = datetime.datetime(2022, 4, 1, 9, 30, 45, tzinfo=datetime.timezone.utc)
    rk = uuid.UUID("4738dc7e-bb2e-4b38-9a3e-a3b6eb0f5f7c")
    with pytest.raises(HttpResponseError) as info:
        table.create_entity({"PartitionKey": pk, "RowKey": rk, "n": 0})
    assert info.value.status_code == 400
    assert error_code(info.value) == "InvalidInput"

    n = 0
    for mode in (UpdateMode.MERGE, UpdateMode.REPLACE):
        n += 1
        table.upsert_entity({"PartitionKey": pk, "RowKey": rk, "n": n}, mode=mode)
        n += 1
        table.update_entity({"PartitionKey": pk, "RowKey": rk, "n": n}, mode=mode)
    got = table.get_entity("2022-04-01T09:30:45.000000Z", str(rk))
    assert got["PartitionKey"] == "2022-04-01T09:30:45.000000Z"
    assert got["RowKey"] == str(rk)
    assert got["n"] == n
    # (in a transaction the SDK itself refuses keys that are not strings, so the batch
    # case is tested over raw HTTP only: tests/it/wire_values.rs)


def test_a_nine_digit_datetime_is_stored_at_100_ns(table):
    # the Java SDK's createEntityWithAllSupportedDataTypes sends nanoseconds; the service
    # reads back seven digits
    table.create_entity(
        {
            "PartitionKey": "p",
            "RowKey": "r",
            "When": ("2023-04-11T21:16:49.114906917Z", EdmType.DATETIME),
            "Carry": EntityProperty("2020-12-31T23:59:59.99999999Z", EdmType.DATETIME),
        }
    )
    got = table.get_entity("p", "r")
    assert got["When"].tables_service_value == "2023-04-11T21:16:49.1149069Z"
    assert got["Carry"].tables_service_value == "2021-01-01T00:00:00Z"
    hits = list(table.query_entities("When eq datetime'2023-04-11T21:16:49.114906917Z'"))
    assert [e["RowKey"] for e in hits] == ["r"]


def test_a_filter_of_200_comparisons(table):
    entities = [{"PartitionKey": "c", "RowKey": f"g{i:03}"} for i in range(150)]
    for start in range(0, len(entities), 100):
        table.submit_transaction([("create", e) for e in entities[start : start + 100]])
    # Orleans' grain directory shape: 100 alternatives of two comparisons, plus one
    wanted = [f"g{2 * i + 1:03}" for i in range(100)]
    alternatives = " or ".join(f"(RowKey eq '{rk}' and PartitionKey ne 'x')" for rk in wanted)
    got = [e["RowKey"] for e in table.query_entities(f"PartitionKey eq 'c' and ({alternatives})")]
    assert got == [rk for rk in wanted if rk < "g150"]
    with pytest.raises(HttpResponseError) as info:
        list(table.query_entities(" or ".join(["RowKey eq 'g000'"] * 501)))
    assert info.value.status_code == 400
    assert error_code(info.value) == "InvalidInput"
