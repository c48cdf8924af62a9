"""Table SAS tokens made by the legacy client (signed version 2014-02-14), and table
ACLs (stored access policies) set and read through it."""

from datetime import datetime, timedelta, timezone

import pytest
from azure.common import AzureHttpError
from azure.storage.models import AccessPolicy, SignedIdentifier, SignedIdentifiers
from azure.storage.sharedaccesssignature import SharedAccessPolicy

import legacy_util
from legacy_util import error_details


def _when(delta):
    return (datetime.now(timezone.utc) + delta).strftime("%Y-%m-%dT%H:%M:%SZ")


@pytest.fixture
def sas_for(svc, conn_parts, endpoint):
    def make(table, policy):
        token = svc.generate_shared_access_signature(table, policy)
        assert "sv=2014-02-14" in token and "tn=" in token
        return legacy_util.legacy_service(endpoint, conn_parts["AccountName"], sas_token=token)

    return make


def _refused(fn, status, code):
    with pytest.raises(AzureHttpError) as ei:
        fn()
    got_status, got_code, text = error_details(ei.value)
    assert (got_status, got_code) == (status, code), text


def test_read_only_sas(svc, table, sas_for):
    svc.insert_entity(table, {"PartitionKey": "p", "RowKey": "r", "V": 1})
    ro = sas_for(table, SharedAccessPolicy(AccessPolicy(expiry=_when(timedelta(hours=1)), permission="r")))
    assert ro.get_entity(table, "p", "r").V == 1
    assert [e.RowKey for e in ro.query_entities(table)] == ["r"]
    _refused(lambda: ro.insert_entity(table, {"PartitionKey": "p", "RowKey": "x"}), 403, "AuthorizationPermissionMismatch")
    _refused(lambda: ro.delete_entity(table, "p", "r"), 403, "AuthorizationPermissionMismatch")
    assert [e.RowKey for e in svc.query_entities(table)] == ["r"]


def test_expired_sas(svc, table, sas_for):
    old = sas_for(
        table,
        SharedAccessPolicy(AccessPolicy(start=_when(timedelta(hours=-2)), expiry=_when(timedelta(hours=-1)), permission="r")),
    )
    _refused(lambda: old.query_entities(table), 403, "AuthenticationFailed")


def test_sas_key_range(svc, table, sas_for):
    for pk in ("a", "b", "c"):
        svc.insert_entity(table, {"PartitionKey": pk, "RowKey": "r", "V": pk})
    ranged = sas_for(
        table,
        SharedAccessPolicy(AccessPolicy(expiry=_when(timedelta(hours=1)), permission="raud", start_pk="b", end_pk="b")),
    )
    assert [e.PartitionKey for e in ranged.query_entities(table)] == ["b"]
    ranged.insert_entity(table, {"PartitionKey": "b", "RowKey": "new"})
    with pytest.raises(AzureHttpError) as ei:
        ranged.insert_entity(table, {"PartitionKey": "c", "RowKey": "new"})
    assert ei.value.status_code == 403, str(ei.value)
    # a point read outside the range is answered as if the entity did not exist
    with pytest.raises(AzureHttpError) as ei:
        ranged.get_entity(table, "a", "r")
    assert ei.value.status_code == 404, str(ei.value)
    assert "ResourceNotFound" in str(ei.value), str(ei.value)
    assert sorted((e.PartitionKey, e.RowKey) for e in svc.query_entities(table)) == [
        ("a", "r"), ("b", "new"), ("b", "r"), ("c", "r")]


def test_sas_through_a_stored_access_policy(svc, table, sas_for):
    ident = SignedIdentifier()
    ident.id = "readers"
    ident.access_policy = AccessPolicy(start=_when(timedelta(minutes=-5)), expiry=_when(timedelta(hours=1)), permission="r")
    ids = SignedIdentifiers()
    ids.signed_identifiers.append(ident)
    svc.set_table_acl(table, ids)

    got = svc.get_table_acl(table)
    assert [i.id for i in got] == ["readers"]
    [policy] = list(got)
    assert policy.access_policy.permission == "r"
    assert policy.access_policy.expiry.startswith(ident.access_policy.expiry[:19])

    svc.insert_entity(table, {"PartitionKey": "p", "RowKey": "r"})
    by_id = sas_for(table, SharedAccessPolicy(signed_identifier="readers"))
    assert [e.RowKey for e in by_id.query_entities(table)] == ["r"]
    _refused(lambda: by_id.insert_entity(table, {"PartitionKey": "p", "RowKey": "x"}), 403, "AuthorizationPermissionMismatch")

    svc.set_table_acl(table, SignedIdentifiers())
    assert len(svc.get_table_acl(table)) == 0
