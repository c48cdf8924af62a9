"""What travels on the wire between the legacy client and the server: the formats of the
answers to its Atom requests, and the requests themselves against the fixtures in
tests/fixtures/atom/client-requests/ (written by capture_requests.py)."""

import re
import xml.etree.ElementTree as ET

import pytest
from azure.common import AzureHttpError
from azure.storage.models import AzureBatchOperationError

import legacy_util
from legacy_util import NS_ATOM, NS_D, NS_M

XML_BASE = "{http://www.w3.org/XML/1998/namespace}base"


@pytest.fixture
def recorded(conn_parts, endpoint):
    record = []
    svc = legacy_util.legacy_service(endpoint, conn_parts["AccountName"], conn_parts["AccountKey"], record)
    return svc, record


def _last(record):
    assert record, "no response recorded"
    return record[-1]


def _is_atom(resp, root_tag):
    ctype = resp.headers.get("Content-Type", "")
    assert ctype.split(";")[0].strip() == "application/atom+xml", (resp.request.method, resp.url, ctype)
    root = ET.fromstring(resp.content)
    assert root.tag == f"{{{NS_ATOM}}}{root_tag}", resp.content[:300]
    return root


def test_requests_carry_no_accept_header(recorded, table):
    svc, record = recorded
    svc.query_entities(table)
    req = _last(record).request
    assert "Accept" not in req.headers
    assert req.headers["x-ms-version"] == "2014-02-14"
    assert req.headers["Content-Type"] == "application/atom+xml"


def test_answers_are_atom_entries_and_feeds(recorded, table_name, conn_parts):
    svc, record = recorded
    conn_account = conn_parts["AccountName"]
    svc.create_table(table_name, fail_on_exist=True)
    try:
        resp = _last(record)
        assert resp.status_code == 201
        entry = _is_atom(resp, "entry")
        assert entry.find(f"./{{{NS_ATOM}}}content/{{{NS_M}}}properties") is not None

        svc.query_tables()
        _is_atom(_last(record), "feed")

        svc.insert_entity(table_name, {"PartitionKey": "p", "RowKey": "r", "V": 1})
        resp = _last(record)
        assert resp.status_code == 201
        entry = _is_atom(resp, "entry")
        assert entry.get(f"{{{NS_M}}}etag") == resp.headers["ETag"]

        svc.get_entity(table_name, "p", "r")
        entry = _is_atom(_last(record), "entry")
        base = entry.get(XML_BASE)
        assert base and base.endswith("/"), base
        key = f"{table_name}(PartitionKey='p',RowKey='r')"
        assert entry.findtext(f"{{{NS_ATOM}}}id") == base + key
        edit = entry.find(f"{{{NS_ATOM}}}link[@rel='edit']")
        assert edit is not None and edit.get("href") == key and edit.get("title") == table_name
        category = entry.find(f"{{{NS_ATOM}}}category")
        assert category is not None and category.get("term") == f"{conn_account}.{table_name}"
        stamp = entry.find(f"./{{{NS_ATOM}}}content/{{{NS_M}}}properties/{{{NS_D}}}Timestamp")
        assert stamp is not None and stamp.get(f"{{{NS_M}}}type") == "Edm.DateTime"
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{7}Z", stamp.text), stamp.text

        svc.query_entities(table_name)
        feed = _is_atom(_last(record), "feed")
        assert len(feed.findall(f"./{{{NS_ATOM}}}entry")) == 1

        svc.query_entities(table_name, filter="V eq 2")
        feed = _is_atom(_last(record), "feed")
        assert feed.findall(f"./{{{NS_ATOM}}}entry") == []

        svc.merge_entity(table_name, "p", "r", {"W": 2})
        resp = _last(record)
        assert resp.status_code == 204
        assert resp.headers["ETag"].startswith('W/"')
    finally:
        svc.delete_table(table_name)
    assert _last(record).status_code == 204


def test_error_body_is_xml(recorded):
    svc, record = recorded
    with pytest.raises(AzureHttpError):
        svc.query_tables(legacy_util.unique_table_name())
    resp = _last(record)
    assert resp.status_code == 404
    assert resp.headers.get("Content-Type", "").split(";")[0].strip() == "application/xml"
    root = ET.fromstring(resp.content)
    assert root.tag == f"{{{NS_M}}}error"
    assert root.findtext(f"{{{NS_M}}}code") == "ResourceNotFound"
    assert root.findtext(f"{{{NS_M}}}message")


def test_batch_answer_uses_changesetresponse_boundaries(recorded, table):
    """The client finds a failed operation only in a part after `--changesetresponse_`."""
    svc, record = recorded
    svc.begin_batch()
    svc.insert_entity(table, {"PartitionKey": "p", "RowKey": "1"})
    svc.commit_batch()
    resp = _last(record)
    assert resp.status_code == 202
    assert resp.headers["Content-Type"].startswith("multipart/mixed; boundary=batchresponse_")
    assert b"--changesetresponse_" in resp.content
    assert b"HTTP/1.1 201 Created" in resp.content

    svc.begin_batch()
    svc.insert_entity(table, {"PartitionKey": "p", "RowKey": "1"})
    with pytest.raises(AzureBatchOperationError):
        svc.commit_batch()
    resp = _last(record)
    assert resp.status_code == 202
    assert b"--changesetresponse_" in resp.content
    assert b"HTTP/1.1 409 Conflict" in resp.content


def test_the_pinned_client_still_sends_the_fixture_requests():
    names_and_files = sorted(legacy_util.FIXTURE_DIR.glob("*.head"))
    assert names_and_files, f"no fixtures in {legacy_util.FIXTURE_DIR}"
    with legacy_util.CaptureServer() as server:
        names = legacy_util.run_fixture_script(legacy_util.legacy_service(server.endpoint))
        captured = list(server.captured)
    assert len(captured) == len(names) == len(names_and_files)
    for i, (name, req) in enumerate(zip(names, captured), start=1):
        stem = f"{i:02d}-{name}"
        head = (legacy_util.FIXTURE_DIR / f"{stem}.head").read_text(encoding="utf-8").splitlines()
        method, target, _ = head[0].split(" ", 2)
        assert (req.method, req.target) == (method, target), stem
        fixture_headers = [tuple(line.split(": ", 1)) for line in head[1:]]
        stable = [(k, v) for k, v in fixture_headers if k.lower() not in legacy_util.VOLATILE_HEADERS]
        assert [(k, v) for k, v in req.headers if k.lower() not in legacy_util.VOLATILE_HEADERS] == stable, stem
        ctype = dict((k.lower(), v) for k, v in fixture_headers).get("content-type")
        assert legacy_util.normalize_content_type(req.header("Content-Type")) == legacy_util.normalize_content_type(ctype), stem
        body_file = legacy_util.FIXTURE_DIR / f"{stem}.body"
        if req.body:
            assert legacy_util.normalize_body(req.body) == legacy_util.normalize_body(body_file.read_bytes()), stem
        else:
            assert not body_file.exists(), stem
