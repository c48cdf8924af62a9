"""What real clients send that a strict reading of the REST reference would refuse: an
empty filter, an entity body over 4 MiB. (A lower-case `w/` ETag prefix is tested with the
JS SDK and raw HTTP: this SDK quotes any ETag that does not start with `W/`.)"""

import pytest
from azure.core.exceptions import HttpResponseError

from sdk_util import error_code


def test_an_empty_filter_lists_every_entity_and_table(service, table):
    table.create_entity({"PartitionKey": "p", "RowKey": "a", "v": 1})
    table.create_entity({"PartitionKey": "p", "RowKey": "b", "v": 2})
    assert sorted(e["RowKey"] for e in table.query_entities("")) == ["a", "b"]
    assert table.table_name in [t.name for t in service.query_tables("")]


def test_an_entity_body_over_4_mib_is_413_and_one_under_it_over_1_mib_is_400(table):
    # 140 strings of 30,000 characters: just over 4 MiB of JSON (4.0-4.06 MiB)
    huge = {"PartitionKey": "p", "RowKey": "huge", **{f"s{i}": "y" * 30_000 for i in range(140)}}
    with pytest.raises(HttpResponseError) as info:
        table.create_entity(huge)
    assert info.value.status_code == 413
    assert error_code(info.value) == "RequestBodyTooLarge"
    # 60 of them: about 1.8 MB of JSON, 3.6 MB as the service counts (UTF-16)
    large = {"PartitionKey": "p", "RowKey": "large", **{f"s{i}": "y" * 30_000 for i in range(60)}}
    with pytest.raises(HttpResponseError) as info:
        table.create_entity(large)
    assert info.value.status_code == 400
    assert error_code(info.value) == "EntityTooLarge"
    assert list(table.list_entities()) == []
