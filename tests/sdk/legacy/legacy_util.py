"""Helpers for the legacy AtomPub client suite (azure-storage 0.20.3, x-ms-version 2014-02-14).

The client is installed apart from the modern SDKs, in ./.deps (see README.md);
`use_legacy_deps()` puts that directory first on sys.path and checks that
`azure.storage` really is the pinned legacy package before any test runs.
"""

import re
import sys
import threading
import uuid
import xml.etree.ElementTree as ET
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Dict, List, Optional, Tuple
from urllib.parse import urlsplit, urlunsplit

HERE = Path(__file__).resolve().parent
DEPS_DIR = HERE / ".deps"
LEGACY_VERSION = "0.20.3"
LEGACY_X_MS_VERSION = "2014-02-14"
DEV_ACCOUNT = "devstoreaccount1"
DEV_KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="

NS_ATOM = "http://www.w3.org/2005/Atom"
NS_M = "http://schemas.microsoft.com/ado/2007/08/dataservices/metadata"
NS_D = "http://schemas.microsoft.com/ado/2007/08/dataservices"

FIXTURE_DIR = HERE.parent.parent / "fixtures" / "atom" / "client-requests"
# The capture server listens here when fixtures are written, so the Host header and the
# URLs inside the batch body read like the emulator's default endpoint.
FIXTURE_PORT = 10002


def use_legacy_deps() -> None:
    """Make `import azure.storage` load the pinned legacy client from ./.deps."""
    if not (DEPS_DIR / "azure" / "storage" / "table" / "tableservice.py").is_file():
        raise RuntimeError(
            f"the legacy client is not installed in {DEPS_DIR}; run "
            "python3 -m pip install --no-deps --target tests/sdk/legacy/.deps "
            "-r tests/sdk/legacy/requirements.txt"
        )
    if str(DEPS_DIR) not in sys.path:
        sys.path.insert(0, str(DEPS_DIR))
    import azure.storage
    from azure.storage import constants

    origin = Path(azure.storage.__file__).resolve()
    if DEPS_DIR.resolve() not in origin.parents:
        raise RuntimeError(f"azure.storage was loaded from {origin}, not from {DEPS_DIR}")
    if constants.__version__ != LEGACY_VERSION or constants.X_MS_VERSION != LEGACY_X_MS_VERSION:
        raise RuntimeError(
            f"expected azure-storage {LEGACY_VERSION} (x-ms-version {LEGACY_X_MS_VERSION}), "
            f"found {constants.__version__} ({constants.X_MS_VERSION})"
        )


def parse_connection_string(conn_str: str) -> Dict[str, str]:
    parts: Dict[str, str] = {}
    for segment in conn_str.split(";"):
        segment = segment.strip()
        if segment:
            key, _, value = segment.partition("=")
            parts[key.strip()] = value.strip()
    return parts


class LoopbackSession:
    """Builds a requests.Session that sends every request to `address` (host:port).

    The client addresses `<account>.table.<host_base>`; the session keeps that name in
    the Host header (the server takes the account from it) and connects to the
    server's real address, so no name resolution is needed.
    """

    @staticmethod
    def create(address: str, record: Optional[list] = None):
        """`record`, when given, receives every requests.Response the client gets."""
        import requests

        class _Session(requests.Session):
            def request(self, method, url, *args, **kwargs):
                parts = urlsplit(url)
                headers = dict(kwargs.pop("headers", None) or {})
                headers["Host"] = parts.netloc
                url = urlunsplit((parts.scheme, address, parts.path, parts.query, parts.fragment))
                response = super().request(method, url, *args, headers=headers, **kwargs)
                if record is not None:
                    record.append(response)
                return response

        return _Session()


def legacy_service(
    endpoint: str,
    account: str = DEV_ACCOUNT,
    key: Optional[str] = DEV_KEY,
    record: Optional[list] = None,
    sas_token: Optional[str] = None,
):
    """A legacy TableService for the server at `endpoint` (http://host:port/account).

    The 0.20.x client knows two URL shapes: `<protocol>://<account><host_base>/...`
    (its normal mode, as against `<account>.table.core.windows.net`) and an emulator
    mode that prefixes paths with /devstoreaccount1. The emulator mode sends
    entity group transactions to `/$batch` without the account segment, so this uses
    the normal mode with the server's host-style account name,
    `<account>.table.localhost:<port>`, and a session that connects to the endpoint's
    address. With `sas_token`, the client signs nothing and appends the token instead.
    """
    from azure.storage.table import TableService

    url = urlsplit(endpoint)
    path_account = url.path.strip("/")
    if path_account and path_account != account:
        raise ValueError(f"endpoint {endpoint!r} is not for account {account!r}")
    port = url.port or (443 if url.scheme == "https" else 80)
    return TableService(
        account_name=account,
        account_key=None if sas_token else key,
        sas_token=sas_token,
        protocol=url.scheme,
        host_base=f".table.localhost:{port}",
        request_session=LoopbackSession.create(url.netloc, record),
    )


def unique_table_name(prefix: str = "atom") -> str:
    return f"{prefix}{uuid.uuid4().hex[:20]}"


def error_details(exc: BaseException) -> Tuple[Optional[int], Optional[str], str]:
    """(status, error code, raw text) of an error the legacy client raised.

    The client raises azure.common.AzureHttpError with `status_code`, and puts the
    response body after the reason phrase in the message; for an Atom request the
    body is the XML `<m:error><m:code>...</m:code>` document. A batch failure is an
    AzureBatchOperationError whose `code` is the code the client read from the
    failed operation's part.
    """
    text = str(exc)
    status = getattr(exc, "status_code", None)
    if status is None:
        status = getattr(exc, "status", None)
    code = getattr(exc, "code", None)
    if code is None:
        start = text.find("<")
        if start >= 0:
            try:
                root = ET.fromstring(text[start:].encode("utf-8"))
            except ET.ParseError:
                root = None
            if root is not None and root.tag == f"{{{NS_M}}}error":
                found = root.find(f"{{{NS_M}}}code")
                code = found.text if found is not None else None
    return status, code, text


def entity_props(entity) -> Dict[str, object]:
    """The properties of a legacy Entity, without its etag."""
    return {k: v for k, v in vars(entity).items() if k != "etag"}


# --- the capture server -------------------------------------------------------------------

class Captured:
    def __init__(self, method: str, target: str, version: str, headers: List[Tuple[str, str]], body: bytes):
        self.method = method
        self.target = target
        self.version = version
        self.headers = headers
        self.body = body

    def header(self, name: str) -> Optional[str]:
        for k, v in self.headers:
            if k.lower() == name.lower():
                return v
        return None

    def head_text(self) -> str:
        lines = [f"{self.method} {self.target} {self.version}"]
        lines += [f"{k}: {v}" for k, v in self.headers]
        return "\n".join(lines) + "\n"


_EMPTY_FEED = (
    b'<?xml version="1.0" encoding="utf-8" standalone="yes"?>'
    b'<feed xmlns="http://www.w3.org/2005/Atom"/>'
)
_ENTRY = (
    b'<?xml version="1.0" encoding="utf-8" standalone="yes"?>'
    b'<entry xmlns="http://www.w3.org/2005/Atom" '
    b'xmlns:m="http://schemas.microsoft.com/ado/2007/08/dataservices/metadata" '
    b'xmlns:d="http://schemas.microsoft.com/ado/2007/08/dataservices" '
    b'm:etag="W/&quot;datetime\'2024-01-01T00%3A00%3A00.0000000Z\'&quot;">'
    b'<content type="application/xml"><m:properties/></content></entry>'
)


class _CaptureHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):  # quiet
        pass

    def _handle(self):
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        self.server.captured.append(
            Captured(self.command, self.path, self.request_version, list(self.headers.items()), body)
        )
        # Just enough of an answer for the client to return normally.
        status, payload = 204, b""
        path = self.path.split("?")[0]
        if self.command == "GET":
            status, payload = 200, (_ENTRY if "PartitionKey=" in path else _EMPTY_FEED)
        elif self.command == "POST" and path.endswith("/$batch"):
            # no change set response part: the client takes that as success
            status, payload = 202, b"--batchresponse_stub--\r\n"
        elif self.command == "POST" and path.endswith("/Tables"):
            status = 201
        elif self.command == "POST":
            status, payload = 201, _ENTRY
        self.send_response(status)
        self.send_header("Content-Type", "application/atom+xml;charset=utf-8")
        self.send_header("ETag", "W/\"datetime'2024-01-01T00%3A00%3A00.0000000Z'\"")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    do_GET = do_POST = do_PUT = do_DELETE = do_MERGE = do_PATCH = _handle


class CaptureServer:
    """A local HTTP server that records every request and answers it with a stub."""

    def __init__(self, port: int = 0):
        self.httpd = ThreadingHTTPServer(("127.0.0.1", port), _CaptureHandler)
        self.httpd.captured = []
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}/{DEV_ACCOUNT}"

    @property
    def captured(self) -> List[Captured]:
        return self.httpd.captured

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()


FIXTURE_TABLE = "atomfixtures"
FIXTURE_ETAG = "W/\"datetime'2024-05-06T07%3A08%3A09.1234567Z'\""


def fixture_entity(row_key: str = "rk1") -> Dict[str, object]:
    """One entity with every type the client writes, with fixed values."""
    from azure.storage.table import EntityProperty

    return {
        "PartitionKey": "pk",
        "RowKey": row_key,
        "Str": "text with <markup> & 'quotes' and \"double quotes\"",
        "Spaces": "  leading and trailing  ",
        "Unicode": "h\u00e9llo \u65e5\u672c \U0001F600",
        "Empty": "",
        "Int32": 42,
        "Int32Min": -(2**31),
        "Int64": 2**53 + 1,
        "Int64Typed": EntityProperty("Edm.Int64", "7"),
        "Double": 0.1,
        "DoubleHuge": 1.7976931348623157e308,
        "DoubleInf": EntityProperty("Edm.Double", "INF"),
        "BoolTrue": True,
        "BoolFalse": False,
        "DateTime": datetime(2024, 2, 29, 13, 14, 15, tzinfo=timezone.utc),
        "DateTimeFraction": EntityProperty("Edm.DateTime", "2024-02-29T13:14:15.1234567Z"),
        "Guid": EntityProperty("Edm.Guid", "c9da6455-213d-42c9-9a79-3e9149a57833"),
        "Binary": EntityProperty("Edm.Binary", b"\x00\x01\xfe\xff"),
        "Null": None,
    }


def run_fixture_script(svc) -> List[str]:
    """Send one of each request shape through `svc`; returns a name for each request."""
    t = FIXTURE_TABLE
    names = []

    def step(name, fn):
        fn()
        names.append(name)

    step("create-table", lambda: svc.create_table(t, fail_on_exist=True))
    step("query-tables", lambda: svc.query_tables())
    step("insert-entity", lambda: svc.insert_entity(t, fixture_entity()))
    step("get-entity", lambda: svc.get_entity(t, "pk", "rk1"))
    step(
        "query-entities",
        lambda: svc.query_entities(
            t,
            filter="PartitionKey eq 'pk' and Int32 gt 10 and DateTime ge datetime'2024-01-01T00:00:00Z'",
            select="Str,Int32",
            top=5,
        ),
    )
    step(
        "query-entities-continuation",
        lambda: svc.query_entities(t, top=2, next_partition_key="1!4!cGs-", next_row_key="1!4!cmsy"),
    )
    step(
        "update-entity",
        lambda: svc.update_entity(t, "pk", "rk1", {"Str": "replaced", "Int32": 1}, if_match=FIXTURE_ETAG),
    )
    step("merge-entity", lambda: svc.merge_entity(t, "pk", "rk1", {"Added": True}, if_match="*"))
    step(
        "insert-or-replace-entity",
        lambda: svc.insert_or_replace_entity(t, "pk", "rk2", {"Str": "upserted"}),
    )
    step(
        "insert-or-merge-entity",
        lambda: svc.insert_or_merge_entity(t, "pk", "rk2", {"Int64": 2**40}),
    )
    step("delete-entity", lambda: svc.delete_entity(t, "pk", "rk1", if_match=FIXTURE_ETAG))

    def batch():
        svc.begin_batch()
        svc.insert_entity(t, {"PartitionKey": "pk", "RowKey": "b1", "Int32": 1, "Str": "one"})
        svc.update_entity(t, "pk", "b2", {"Str": "two"}, if_match=FIXTURE_ETAG)
        svc.merge_entity(t, "pk", "b3", {"Bool": False})
        svc.insert_or_replace_entity(t, "pk", "b4", {"Double": 2.5})
        svc.insert_or_merge_entity(t, "pk", "b5", {"Str": "five"})
        svc.delete_entity(t, "pk", "b6")
        svc.commit_batch()

    step("batch", batch)
    step("delete-table", lambda: svc.delete_table(t, fail_not_exist=True))
    return names


_VOLATILE_BODY = [
    (re.compile(rb"<updated>[^<]*</updated>"), b"<updated>UPDATED</updated>"),
    (re.compile(rb"(batch|changeset)_[0-9a-f-]{36}"), rb"\1_BOUNDARY"),
    (re.compile(rb"\.table\.localhost:\d+/"), b".table.localhost:PORT/"),
]
VOLATILE_HEADERS = {"authorization", "date", "x-ms-date", "host", "content-length", "content-type"}


def normalize_body(body: bytes) -> bytes:
    for pattern, repl in _VOLATILE_BODY:
        body = pattern.sub(repl, body)
    return body


def normalize_content_type(value: Optional[str]) -> Optional[str]:
    if value is None:
        return None
    return re.sub(r"(batch|changeset)_[0-9a-f-]{36}", r"\1_BOUNDARY", value)
