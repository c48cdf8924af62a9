"""Stored access policies through azure-data-tables (spec 1.2 Get/Set Table ACL, 1.7
stored access policy): set/get round trip, the limit of 5, SAS tokens naming a policy
(policy_id), revocation by deleting the policy, and fields given twice."""

from datetime import datetime, timedelta, timezone

import pytest
from azure.core.credentials import AzureNamedKeyCredential, AzureSasCredential
from azure.core.exceptions import HttpResponseError
from azure.data.tables import TableAccessPolicy, TableClient, generate_table_sas

from sdk_util import ResponseRecorder, assert_refused, error_code


def _utc(minutes: float) -> datetime:
    return (datetime.now(timezone.utc) + timedelta(minutes=minutes)).replace(microsecond=0)


@pytest.fixture(scope="module")
def cred(account_name, account_key):
    return AzureNamedKeyCredential(account_name, account_key)


@pytest.fixture
def loaded(table):
    table.create_entity({"PartitionKey": "p", "RowKey": "r", "v": 1})
    return table


def _sas_client(endpoint, cred, table, **kwargs) -> TableClient:
    return TableClient(endpoint, table, credential=AzureSasCredential(generate_table_sas(cred, table, **kwargs)))


def _status(fn):
    """The HTTP status and error code of the error fn raises."""
    with pytest.raises(HttpResponseError) as info:
        fn()
    return info.value.status_code, error_code(info.value)


def _refused(fn, status, code):
    """Asserts that fn raises one refusal: status, code and the code's documented message."""
    with pytest.raises(HttpResponseError) as info:
        fn()
    assert_refused(info.value, status, code)


def test_round_trip(table):
    assert table.get_table_access_policy() == {}
    start, expiry = datetime(2030, 1, 2, 3, 4, 5, tzinfo=timezone.utc), datetime(2031, 6, 7, 8, 9, 10, tzinfo=timezone.utc)
    table.set_table_access_policy(
        {
            "read-only": TableAccessPolicy(start=start, expiry=expiry, permission="r"),
            "writer": TableAccessPolicy(expiry=expiry, permission="raud"),
            "perm-only": TableAccessPolicy(permission="a"),
        }
    )
    got = table.get_table_access_policy()
    assert set(got) == {"read-only", "writer", "perm-only"}
    ro = got["read-only"]
    assert (ro.start, ro.expiry, ro.permission) == (start, expiry, "r")
    w = got["writer"]
    assert not w.start and (w.expiry, w.permission) == (expiry, "raud")
    p = got["perm-only"]
    assert not p.start and not p.expiry and p.permission == "a"

    # A set replaces the whole ACL.
    table.set_table_access_policy({"only": TableAccessPolicy(expiry=expiry, permission="d")})
    got = table.get_table_access_policy()
    assert list(got) == ["only"] and got["only"].permission == "d"
    # An empty set clears it.
    table.set_table_access_policy({})
    assert table.get_table_access_policy() == {}


def test_at_most_five_policies(table):
    expiry = _utc(60)
    five = {f"id{i}": TableAccessPolicy(expiry=expiry, permission="r") for i in range(5)}
    table.set_table_access_policy(five)
    six = dict(five, id5=TableAccessPolicy(expiry=expiry, permission="r"))
    recorder = ResponseRecorder()
    # azure-data-tables turns the service's 400 InvalidXmlDocument for > 5 identifiers (and
    # only that answer) into a ValueError; anything else surfaces as HttpResponseError.
    with pytest.raises(ValueError, match="Too many access policies"):
        table.set_table_access_policy(six, raw_response_hook=recorder)
    assert recorder.last["status"] == 400, recorder.last
    assert sorted(table.get_table_access_policy()) == sorted(five)


def test_sas_with_policy_id(endpoint, cred, loaded):
    name = loaded.table_name
    loaded.set_table_access_policy(
        {
            "reader": TableAccessPolicy(expiry=_utc(60), permission="r"),
            "adder": TableAccessPolicy(permission="ra"),
        }
    )
    reader = _sas_client(endpoint, cred, name, policy_id="reader")
    assert reader.get_entity("p", "r")["v"] == 1
    assert [e["RowKey"] for e in reader.list_entities()] == ["r"]
    assert _status(lambda: reader.create_entity({"PartitionKey": "p", "RowKey": "n"})) == (
        403,
        "AuthorizationPermissionMismatch",
    )
    # The policy gives the permission, the token the expiry.
    adder = _sas_client(endpoint, cred, name, policy_id="adder", expiry=_utc(30))
    adder.create_entity({"PartitionKey": "p", "RowKey": "n", "v": 2})
    assert loaded.get_entity("p", "n")["v"] == 2
    # Without an expiry anywhere the token is not valid.
    no_expiry = _sas_client(endpoint, cred, name, policy_id="adder")
    _refused(lambda: no_expiry.get_entity("p", "r"), 403, "AuthenticationFailed")


def test_deleting_the_policy_revokes_and_recreating_restores(endpoint, cred, loaded):
    name = loaded.table_name
    policy = {"reader": TableAccessPolicy(expiry=_utc(60), permission="r")}
    loaded.set_table_access_policy(policy)
    c = _sas_client(endpoint, cred, name, policy_id="reader")
    assert c.get_entity("p", "r")["v"] == 1
    loaded.set_table_access_policy({})
    # docs/compatibility.md: a missing stored policy is 403 AuthorizationFailure
    _refused(lambda: c.get_entity("p", "r"), 403, "AuthorizationFailure")
    _refused(lambda: list(c.list_entities()), 403, "AuthorizationFailure")
    loaded.set_table_access_policy(policy)
    assert c.get_entity("p", "r")["v"] == 1
    # Changing the policy changes what the same token may do.
    loaded.set_table_access_policy({"reader": TableAccessPolicy(expiry=_utc(-1), permission="r")})
    assert _status(lambda: c.get_entity("p", "r")) == (403, "AuthenticationFailed")
    # A token naming a policy that never existed.
    ghost = _sas_client(endpoint, cred, name, policy_id="ghost")
    _refused(lambda: ghost.get_entity("p", "r"), 403, "AuthorizationFailure")


def test_field_in_both_token_and_policy_is_400(endpoint, cred, loaded):
    name = loaded.table_name
    loaded.set_table_access_policy(
        {"full": TableAccessPolicy(start=_utc(-10), expiry=_utc(60), permission="r")}
    )
    for extra in ({"expiry": _utc(30)}, {"permission": "r"}, {"start": _utc(-5)}):
        kwargs = dict(extra)
        if "expiry" not in kwargs:
            kwargs["expiry"] = None
        c = _sas_client(endpoint, cred, name, policy_id="full", **kwargs)
        _refused(lambda: c.get_entity("p", "r"), 400, "InvalidQueryParameterValue")
    assert _sas_client(endpoint, cred, name, policy_id="full").get_entity("p", "r")["v"] == 1
