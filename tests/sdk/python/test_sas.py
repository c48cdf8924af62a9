"""Shared access signatures made by azure-data-tables (spec 1.7): generate_table_sas and
generate_account_sas used through AzureSasCredential. Allowed operations succeed; every
refusal has the documented status and error code; table SAS key ranges limit queries,
point operations and transactions."""

from datetime import datetime, timedelta, timezone
from urllib.parse import parse_qsl, urlencode

import pytest
from azure.core.credentials import AzureNamedKeyCredential, AzureSasCredential
from azure.core.exceptions import HttpResponseError, ResourceNotFoundError
from azure.data.tables import (
    AccountSasPermissions,
    ResourceTypes,
    TableClient,
    TableSasPermissions,
    TableServiceClient,
    UpdateMode,
    generate_account_sas,
    generate_table_sas,
)
from azure.data.tables._table_shared_access_signature import TableSharedAccessSignature

from sdk_util import assert_refused, error_code, unique_table_name


def _utc(minutes: float) -> datetime:
    return datetime.now(timezone.utc) + timedelta(minutes=minutes)


@pytest.fixture(scope="module")
def cred(account_name, account_key):
    return AzureNamedKeyCredential(account_name, account_key)


def _table_sas(cred, table: str, permission: str, **kwargs) -> str:
    kwargs.setdefault("start", _utc(-5))
    kwargs.setdefault("expiry", _utc(60))
    return generate_table_sas(cred, table, permission=TableSasPermissions(_str=permission), **kwargs)


def _account_sas(cred, resource_types: str, permission: str, **kwargs) -> str:
    kwargs.setdefault("start", _utc(-5))
    return generate_account_sas(
        cred,
        ResourceTypes.from_string(resource_types),
        AccountSasPermissions.from_string(permission),
        kwargs.pop("expiry", _utc(60)),
        **kwargs,
    )


def _table_client(endpoint, table, token) -> TableClient:
    return TableClient(endpoint, table, credential=AzureSasCredential(token))


def _service_client(endpoint, token) -> TableServiceClient:
    return TableServiceClient(endpoint, credential=AzureSasCredential(token))


# The message of a write outside a table SAS's key range.
OUTSIDE_THE_RANGE = "This request is not authorized to perform this operation: the entity is outside the SAS key range."


def _refused(fn, status, code):
    with pytest.raises(HttpResponseError) as info:
        result = fn()
        if hasattr(result, "__iter__") and not isinstance(result, (dict, str)):
            list(result)
    exc = info.value
    assert exc.status_code == status, f"{exc.status_code} {error_code(exc)}: {exc.message}"
    assert error_code(exc) == code, exc.message
    return exc


def _keys(entities):
    return sorted((e["PartitionKey"], e["RowKey"]) for e in entities)


@pytest.fixture
def loaded(table):
    """The fixture table with one entity (p, r, v=1)."""
    table.create_entity({"PartitionKey": "p", "RowKey": "r", "v": 1})
    return table


# --- table SAS: operations and permissions -------------------------------------------------


def test_table_sas_allows_its_operations(endpoint, cred, loaded):
    c = _table_client(endpoint, loaded.table_name, _table_sas(cred, loaded.table_name, "raud"))
    assert c.get_entity("p", "r")["v"] == 1
    c.create_entity({"PartitionKey": "p", "RowKey": "n", "v": 2})
    c.update_entity({"PartitionKey": "p", "RowKey": "n", "v": 3}, mode=UpdateMode.REPLACE)
    c.upsert_entity({"PartitionKey": "p", "RowKey": "m", "v": 4}, mode=UpdateMode.MERGE)
    c.upsert_entity({"PartitionKey": "p", "RowKey": "m", "w": 5}, mode=UpdateMode.REPLACE)
    assert _keys(c.list_entities()) == [("p", "m"), ("p", "n"), ("p", "r")]
    assert [e["RowKey"] for e in c.query_entities("v ge 2")] == ["n"]
    c.delete_entity("p", "r")
    # What SharedKey sees.
    assert _keys(loaded.list_entities()) == [("p", "m"), ("p", "n")]
    assert loaded.get_entity("p", "n")["v"] == 3
    m = loaded.get_entity("p", "m")
    assert m["w"] == 5 and "v" not in m


def test_table_sas_missing_permission(endpoint, cred, loaded):
    name = loaded.table_name
    reader = _table_client(endpoint, name, _table_sas(cred, name, "r"))
    assert reader.get_entity("p", "r")["v"] == 1
    mismatch = "AuthorizationPermissionMismatch"
    _refused(lambda: reader.create_entity({"PartitionKey": "p", "RowKey": "n"}), 403, mismatch)
    _refused(lambda: reader.update_entity({"PartitionKey": "p", "RowKey": "r", "v": 9}), 403, mismatch)
    _refused(lambda: reader.delete_entity("p", "r"), 403, mismatch)
    adder = _table_client(endpoint, name, _table_sas(cred, name, "a"))
    _refused(lambda: adder.get_entity("p", "r"), 403, mismatch)
    _refused(lambda: adder.list_entities(), 403, mismatch)
    deleter = _table_client(endpoint, name, _table_sas(cred, name, "d"))
    _refused(lambda: deleter.update_entity({"PartitionKey": "p", "RowKey": "r", "v": 9}), 403, mismatch)
    assert _keys(loaded.list_entities()) == [("p", "r")]
    assert loaded.get_entity("p", "r")["v"] == 1


@pytest.mark.parametrize("mode", [UpdateMode.MERGE, UpdateMode.REPLACE])
def test_upsert_needs_add_and_update(endpoint, cred, loaded, mode):
    name = loaded.table_name
    for perm in ("u", "a", "rd"):
        c = _table_client(endpoint, name, _table_sas(cred, name, perm))
        for rk in ("r", "new"):  # an existing and a new entity
            _refused(
                lambda: c.upsert_entity({"PartitionKey": "p", "RowKey": rk, "v": 7}, mode=mode),
                403,
                "AuthorizationPermissionMismatch",
            )
    assert _keys(loaded.list_entities()) == [("p", "r")]
    assert loaded.get_entity("p", "r")["v"] == 1
    # Update (If-Match) needs only u.
    updater = _table_client(endpoint, name, _table_sas(cred, name, "u"))
    updater.update_entity({"PartitionKey": "p", "RowKey": "r", "v": 2}, mode=mode)
    assert loaded.get_entity("p", "r")["v"] == 2
    both = _table_client(endpoint, name, _table_sas(cred, name, "au"))
    both.upsert_entity({"PartitionKey": "p", "RowKey": "r", "v": 3}, mode=mode)
    both.upsert_entity({"PartitionKey": "p", "RowKey": "new", "v": 4}, mode=mode)
    assert loaded.get_entity("p", "r")["v"] == 3
    assert loaded.get_entity("p", "new")["v"] == 4


def test_table_sas_validity_window(endpoint, cred, loaded):
    name = loaded.table_name
    expired = _table_sas(cred, name, "r", start=_utc(-120), expiry=_utc(-60))
    _refused(lambda: _table_client(endpoint, name, expired).get_entity("p", "r"), 403, "AuthenticationFailed")
    early = _table_sas(cred, name, "r", start=_utc(60), expiry=_utc(120))
    _refused(lambda: _table_client(endpoint, name, early).get_entity("p", "r"), 403, "AuthenticationFailed")
    no_start = generate_table_sas(cred, name, permission="r", expiry=_utc(10))
    assert _table_client(endpoint, name, no_start).get_entity("p", "r")["v"] == 1


def _with(token: str, **changes) -> str:
    fields = dict(parse_qsl(token, keep_blank_values=True))
    fields.update(changes)
    return urlencode(fields)


def test_tampered_signature(endpoint, cred, loaded):
    name = loaded.table_name
    token = _table_sas(cred, name, "r")
    sig = dict(parse_qsl(token))["sig"]
    bad_sig = _with(token, sig=("A" if sig[0] != "A" else "B") + sig[1:])
    _refused(lambda: _table_client(endpoint, name, bad_sig).get_entity("p", "r"), 403, "AuthenticationFailed")
    widened = _with(token, sp="raud")
    _refused(lambda: _table_client(endpoint, name, widened).delete_entity("p", "r"), 403, "AuthenticationFailed")
    wrong_key = AzureNamedKeyCredential(cred.named_key.name, "b3RoZXIga2V5IG90aGVyIGtleQ==")
    forged = _table_sas(wrong_key, name, "r")
    _refused(lambda: _table_client(endpoint, name, forged).get_entity("p", "r"), 403, "AuthenticationFailed")
    acct = _account_sas(cred, "o", "r")
    widened = _with(acct, sp="rwdlacu")
    _refused(lambda: _table_client(endpoint, name, widened).delete_entity("p", "r"), 403, "AuthenticationFailed")
    assert loaded.get_entity("p", "r")["v"] == 1


def test_table_sas_other_table_and_table_operations(endpoint, cred, service, loaded):
    name = loaded.table_name
    other = service.create_table(unique_table_name())
    try:
        other.create_entity({"PartitionKey": "p", "RowKey": "r", "v": 1})
        token = _table_sas(cred, name, "raud")
        wrong = _table_client(endpoint, other.table_name, token)
        failure = "AuthorizationFailure"
        _refused(lambda: wrong.get_entity("p", "r"), 403, failure)
        _refused(lambda: wrong.list_entities(), 403, failure)
        _refused(lambda: wrong.create_entity({"PartitionKey": "p", "RowKey": "x"}), 403, failure)
        _refused(lambda: wrong.delete_entity("p", "r"), 403, failure)
        svc = _service_client(endpoint, token)
        new_name = unique_table_name()
        _refused(lambda: svc.create_table(new_name), 403, failure)
        _refused(lambda: svc.list_tables(), 403, failure)
        _refused(lambda: svc.delete_table(name), 403, failure)
        _refused(lambda: _table_client(endpoint, name, token).get_table_access_policy(), 403, failure)
        names = {t.name for t in service.list_tables()}
        assert name in names and other.table_name in names and new_name not in names
        assert _keys(other.list_entities()) == [("p", "r")]
    finally:
        service.delete_table(other.table_name)


def test_sas_source_ip(endpoint, cred, loaded):
    name = loaded.table_name
    for ip in ("10.0.0.1-10.0.0.255", "10.1.2.3", "127.0.0.2-127.0.0.9"):
        token = _table_sas(cred, name, "r", ip_address_or_range=ip)
        _refused(
            lambda: _table_client(endpoint, name, token).get_entity("p", "r"), 403, "AuthorizationSourceIPMismatch"
        )
    for ip in ("127.0.0.1", "127.0.0.0-127.0.0.255"):
        token = _table_sas(cred, name, "r", ip_address_or_range=ip)
        assert _table_client(endpoint, name, token).get_entity("p", "r")["v"] == 1
    token = _account_sas(cred, "o", "r", ip_address_or_range="192.168.0.1-192.168.0.20")
    _refused(lambda: _table_client(endpoint, name, token).get_entity("p", "r"), 403, "AuthorizationSourceIPMismatch")


def test_sas_protocol(endpoint, cred, loaded):
    name = loaded.table_name
    https_only = _table_sas(cred, name, "r", protocol="https")
    _refused(
        lambda: _table_client(endpoint, name, https_only).get_entity("p", "r"), 403, "AuthorizationProtocolMismatch"
    )
    both = _table_sas(cred, name, "r", protocol="https,http")
    assert _table_client(endpoint, name, both).get_entity("p", "r")["v"] == 1
    acct = _account_sas(cred, "o", "r", protocol="https")
    _refused(lambda: _table_client(endpoint, name, acct).get_entity("p", "r"), 403, "AuthorizationProtocolMismatch")


# --- account SAS ---------------------------------------------------------------------------


def test_account_sas_resource_types_and_permissions(endpoint, cred, service):
    mismatch, rt_mismatch = "AuthorizationPermissionMismatch", "AuthorizationResourceTypeMismatch"
    lister = _service_client(endpoint, _account_sas(cred, "s", "l"))
    list(lister.list_tables())
    _refused(lambda: _service_client(endpoint, _account_sas(cred, "co", "rwdlacu")).list_tables(), 403, rt_mismatch)
    _refused(lambda: _service_client(endpoint, _account_sas(cred, "s", "r")).list_tables(), 403, mismatch)

    name = unique_table_name()
    _refused(lambda: _service_client(endpoint, _account_sas(cred, "so", "rwdlacu")).create_table(name), 403, rt_mismatch)
    _refused(lambda: _service_client(endpoint, _account_sas(cred, "c", "rl")).create_table(name), 403, mismatch)
    assert name not in {t.name for t in service.list_tables()}
    creator = _service_client(endpoint, _account_sas(cred, "c", "c"))
    creator.create_table(name)
    try:
        assert name in {t.name for t in lister.list_tables()}
        tc = service.get_table_client(name)
        tc.create_entity({"PartitionKey": "p", "RowKey": "r", "v": 1})

        reader = _table_client(endpoint, name, _account_sas(cred, "o", "r"))
        assert reader.get_entity("p", "r")["v"] == 1
        assert _keys(reader.list_entities()) == [("p", "r")]
        _refused(lambda: reader.create_entity({"PartitionKey": "p", "RowKey": "n"}), 403, mismatch)
        _refused(lambda: _table_client(endpoint, name, _account_sas(cred, "sc", "rwdlacu")).get_entity("p", "r"),
                 403, rt_mismatch)
        for perm in ("a", "u"):
            c = _table_client(endpoint, name, _account_sas(cred, "o", perm))
            _refused(lambda: c.upsert_entity({"PartitionKey": "p", "RowKey": "up", "v": 2}), 403, mismatch)
        assert _keys(tc.list_entities()) == [("p", "r")]
        writer = _table_client(endpoint, name, _account_sas(cred, "o", "raud"))
        writer.upsert_entity({"PartitionKey": "p", "RowKey": "up", "v": 2})
        writer.update_entity({"PartitionKey": "p", "RowKey": "r", "v": 3})
        writer.delete_entity("p", "up")
        assert _keys(tc.list_entities()) == [("p", "r")] and tc.get_entity("p", "r")["v"] == 3

        _refused(lambda: creator.delete_table(name), 403, mismatch)
        _service_client(endpoint, _account_sas(cred, "c", "d")).delete_table(name)
        assert name not in {t.name for t in service.list_tables()}
    finally:
        service.delete_table(name)


def test_account_sas_without_the_table_service(endpoint, cred, loaded):
    token = TableSharedAccessSignature(cred).generate_account(
        "bqf", ResourceTypes.from_string("sco"), AccountSasPermissions.from_string("rwdlacu"), _utc(60)
    )
    c = _table_client(endpoint, loaded.table_name, token)
    _refused(lambda: c.get_entity("p", "r"), 403, "AuthorizationServiceMismatch")
    _refused(lambda: _service_client(endpoint, token).list_tables(), 403, "AuthorizationServiceMismatch")


def test_account_sas_validity_window(endpoint, cred, loaded):
    name = loaded.table_name
    expired = _account_sas(cred, "o", "r", start=_utc(-120), expiry=_utc(-60))
    _refused(lambda: _table_client(endpoint, name, expired).get_entity("p", "r"), 403, "AuthenticationFailed")
    early = _account_sas(cred, "o", "r", start=_utc(60), expiry=_utc(120))
    _refused(lambda: _table_client(endpoint, name, early).get_entity("p", "r"), 403, "AuthenticationFailed")


# --- key ranges ----------------------------------------------------------------------------

RANGE = dict(start_pk="p1", start_rk="r2", end_pk="p2", end_rk="r1")


def _in_range(pk, rk):
    return (pk > "p1" or (pk == "p1" and rk >= "r2")) and (pk < "p2" or (pk == "p2" and rk <= "r1"))


@pytest.fixture
def grid(table):
    """The fixture table with 16 entities p0..p3 x r0..r3 (n = 10*p + r)."""
    for p in range(4):
        for r in range(4):
            table.create_entity({"PartitionKey": f"p{p}", "RowKey": f"r{r}", "n": 10 * p + r})
    return table


def test_key_range_limits_queries(endpoint, cred, grid):
    name = grid.table_name
    everything = _keys(grid.list_entities())
    assert len(everything) == 16
    expected = [k for k in everything if _in_range(*k)]
    assert expected == [("p1", "r2"), ("p1", "r3"), ("p2", "r0"), ("p2", "r1")]
    c = _table_client(endpoint, name, _table_sas(cred, name, "r", **RANGE))
    assert _keys(c.list_entities()) == expected
    # Paging under the range, one entity per page.
    pages = list(c.list_entities(results_per_page=1).by_page())
    assert _keys(e for page in pages for e in page) == expected
    # A filter narrows the range further; one outside it returns nothing.
    assert _keys(c.query_entities("n lt 21")) == [("p1", "r2"), ("p1", "r3"), ("p2", "r0")]
    assert _keys(c.query_entities("PartitionKey eq 'p3'")) == []
    # Only a lower bound.
    lower = _table_client(endpoint, name, _table_sas(cred, name, "r", start_pk="p2", start_rk="r2"))
    assert _keys(lower.list_entities()) == [k for k in everything if k >= ("p2", "r2")]


def test_key_range_point_operations(endpoint, cred, grid):
    name = grid.table_name
    before = {(e["PartitionKey"], e["RowKey"]): e["n"] for e in grid.list_entities()}
    c = _table_client(endpoint, name, _table_sas(cred, name, "raud", **RANGE))
    assert c.get_entity("p1", "r2")["n"] == 12
    assert c.get_entity("p2", "r1")["n"] == 21
    for pk, rk in (("p1", "r1"), ("p2", "r2"), ("p0", "r3"), ("p3", "r0")):
        # a point read outside the range is answered as if the entity did not exist
        with pytest.raises(ResourceNotFoundError) as info:
            c.get_entity(pk, rk)
        assert_refused(info.value, 404, "ResourceNotFound")
        _refused(lambda: c.update_entity({"PartitionKey": pk, "RowKey": rk, "n": -1}), 403, "AuthorizationFailure")
        _refused(lambda: c.upsert_entity({"PartitionKey": pk, "RowKey": rk, "n": -1}), 403, "AuthorizationFailure")
        _refused(lambda: c.delete_entity(pk, rk), 403, "AuthorizationFailure")
    _refused(lambda: c.create_entity({"PartitionKey": "p1", "RowKey": "r1x", "n": -1}), 403, "AuthorizationFailure")
    _refused(lambda: c.create_entity({"PartitionKey": "p3", "RowKey": "a", "n": -1}), 403, "AuthorizationFailure")
    _refused(lambda: c.upsert_entity({"PartitionKey": "p0", "RowKey": "new", "n": -1}), 403, "AuthorizationFailure")
    after = {(e["PartitionKey"], e["RowKey"]): e["n"] for e in grid.list_entities()}
    assert after == before, "a refused write changed the table"
    # Inside the range everything works.
    c.create_entity({"PartitionKey": "p1", "RowKey": "r5", "n": 15})
    c.update_entity({"PartitionKey": "p2", "RowKey": "r0", "n": 99}, mode=UpdateMode.MERGE)
    c.delete_entity("p1", "r3")
    assert grid.get_entity("p1", "r5")["n"] == 15
    assert grid.get_entity("p2", "r0")["n"] == 99
    assert ("p1", "r3") not in _keys(grid.list_entities())


def test_key_range_transaction_with_an_out_of_range_operation(endpoint, cred, grid):
    name = grid.table_name
    before = _keys(grid.list_entities())
    c = _table_client(endpoint, name, _table_sas(cred, name, "raud", **RANGE))
    for ops in (
        [("create", {"PartitionKey": "p1", "RowKey": "r8"}), ("create", {"PartitionKey": "p1", "RowKey": "r0x"})],
        [("upsert", {"PartitionKey": "p1", "RowKey": "r1"}), ("create", {"PartitionKey": "p1", "RowKey": "r8"})],
        [("create", {"PartitionKey": "p1", "RowKey": "r8"}), ("delete", {"PartitionKey": "p1", "RowKey": "r0"})],
    ):
        with pytest.raises(HttpResponseError) as info:
            c.submit_transaction(ops)
        assert_refused(info.value, 403, "AuthorizationFailure", OUTSIDE_THE_RANGE)
        assert _keys(grid.list_entities()) == before, f"a refused transaction wrote: {ops}"
    result = c.submit_transaction(
        [("create", {"PartitionKey": "p1", "RowKey": "r8"}), ("upsert", {"PartitionKey": "p1", "RowKey": "r9"})]
    )
    assert len(result) == 2
    assert ("p1", "r8") in _keys(grid.list_entities()) and ("p1", "r9") in _keys(grid.list_entities())
