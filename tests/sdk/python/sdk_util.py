"""Helpers shared by the aztable Python SDK conformance tests."""

import json
import os
import re
import socket
import subprocess
import tempfile
import time
import uuid
from contextlib import contextmanager
from typing import Any, Dict, List, Optional

WELL_KNOWN_ACCOUNT = "devstoreaccount1"
WELL_KNOWN_KEY = (
    "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
)


def parse_connection_string(conn_str: str) -> Dict[str, str]:
    parts: Dict[str, str] = {}
    for segment in conn_str.split(";"):
        segment = segment.strip()
        if not segment:
            continue
        key, _, value = segment.partition("=")
        parts[key.strip()] = value.strip()
    return parts


def connection_string_for(endpoint: str, account: str = WELL_KNOWN_ACCOUNT, key: str = WELL_KNOWN_KEY) -> str:
    return (
        f"DefaultEndpointsProtocol=http;AccountName={account};AccountKey={key};"
        f"TableEndpoint={endpoint};"
    )


def unique_table_name(prefix: str = "py") -> str:
    """A valid table name (letter first, alphanumeric, <= 63 chars) that no other test uses."""
    return f"{prefix}{uuid.uuid4().hex[:20]}"


def odata_error_code(body: Any) -> Optional[str]:
    """Extract odata.error.code from a raw response body (bytes / str / dict)."""
    if body is None:
        return None
    if isinstance(body, (bytes, bytearray)):
        body = body.decode("utf-8", errors="replace")
    if isinstance(body, str):
        if not body.strip():
            return None
        try:
            body = json.loads(body)
        except ValueError:
            return None
    if isinstance(body, dict):
        err = body.get("odata.error")
        if isinstance(err, dict):
            return err.get("code")
    return None


class ResponseRecorder:
    """A raw_response_hook that records (status, error code) of every response.

    Used where the SDK deliberately swallows an error (delete_table / delete_entity
    on a missing resource) so that the server's actual answer can still be asserted.
    """

    def __init__(self) -> None:
        self.responses: List[Dict[str, Any]] = []

    def __call__(self, pipeline_response) -> None:
        http = pipeline_response.http_response
        try:
            body = http.body()
        except Exception:  # pragma: no cover - depends on transport
            body = None
        self.responses.append(
            {
                "status": http.status_code,
                "code": odata_error_code(body),
                "prefer": pipeline_response.http_request.headers.get("Prefer"),
                "headers": dict(http.headers),
            }
        )

    def expected_create_status(self) -> int:
        """The one answer to the last create: 204 if it asked `Prefer: return-no-content`, else 201."""
        return 204 if self.last["prefer"] == "return-no-content" else 201

    @property
    def last(self) -> Dict[str, Any]:
        assert self.responses, "no HTTP response was recorded"
        return self.responses[-1]


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_port(port: int, proc: Optional[subprocess.Popen] = None, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"server exited early with code {proc.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.1)
    raise TimeoutError(f"server did not accept connections on port {port} within {timeout}s")


@contextmanager
def temp_dir(prefix: str = "aztable-sdk-"):
    with tempfile.TemporaryDirectory(prefix=prefix) as d:
        yield d


def start_server(
    binary: str, port: int, location: str, log_path: str, extra_args=(), silent: bool = True
) -> subprocess.Popen:
    """Starts the server; with ``silent=False`` its access log (one line per request,
    ``status=<code>``) goes to ``log_path`` too."""
    log = open(log_path, "ab")
    try:
        proc = subprocess.Popen(
            [
                binary,
                "--tableHost",
                "127.0.0.1",
                "--tablePort",
                str(port),
                "--location",
                location,
                *(["--silent"] if silent else []),
                *extra_args,
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )
    finally:
        log.close()
    try:
        wait_for_port(port, proc)
    except Exception:
        proc.kill()
        proc.wait()
        raise
    return proc


def env_flag(name: str) -> bool:
    return os.environ.get(name, "").strip() not in ("", "0", "false", "no")


def error_code(exc: BaseException) -> Optional[str]:
    """The service error code carried by an SDK exception.

    azure.data.tables sets ``error_code`` on most errors it decodes, but some operations
    (create_entity in 12.x) re-raise the raw azure-core error without it. Fall back to the
    response's odata.error body, then to the x-ms-error-code header.
    """
    code = getattr(exc, "error_code", None)
    if code is not None:
        return getattr(code, "value", code)
    response = getattr(exc, "response", None)
    if response is None:
        return None
    try:
        code = odata_error_code(response.text())
    except Exception:
        code = None
    if code is None:
        code = response.headers.get("x-ms-error-code")
    return code


# The service's documented messages (the first line of odata.error.message.value) for the
# codes whose message does not depend on the case.
DOCUMENTED_MESSAGES = {
    "AuthenticationFailed": "Server failed to authenticate the request. Make sure the value of "
    "Authorization header is formed correctly including the signature.",
    "AuthorizationFailure": "This request is not authorized to perform this operation.",
    "AuthorizationPermissionMismatch": "This request is not authorized to perform this operation using this permission.",
    "EntityAlreadyExists": "The specified entity already exists.",
    "NoAuthenticationInformation": "Server failed to authenticate the request. Please refer to the "
    "information in the www-authenticate header.",
    "ResourceNotFound": "The specified resource does not exist.",
    "TableAlreadyExists": "The table specified already exists.",
    "TableNotFound": "The table specified does not exist.",
    "UpdateConditionNotSatisfied": "The update condition specified in the request was not satisfied.",
}


def error_message(response_text: str) -> str:
    """The first line of the odata.error.message.value of an error body ("" if none).

    A failed change set's answer is multipart: its failing part's JSON is read, and the
    operation's index prefix (``1:``) is dropped.
    """
    start, end = response_text.find('{"odata.error"'), response_text.rfind("}") + 1
    if start < 0:
        return ""
    try:
        value = json.loads(response_text[start:end])["odata.error"]["message"]["value"]
    except (ValueError, KeyError, TypeError):
        return ""
    return re.sub(r"^\d+:", "", value.split("\n")[0])


def assert_refused(exc: BaseException, status: int, code: str, message: Optional[str] = None) -> None:
    """One refusal: `status`, `code` and `message` (or the code's documented message).

    `exc` is an SDK exception or a `requests` response.
    """
    raw_text = getattr(exc, "text", None)
    if isinstance(raw_text, str):  # a requests.Response
        got_status, text = exc.status_code, raw_text
        got_code = odata_error_code(text) or exc.headers.get("x-ms-error-code")
    else:
        response = getattr(exc, "response", None)
        got_status = getattr(exc, "status_code", None)
        text = response.text() if response is not None else ""
        got_code = error_code(exc)
    assert got_status == status, f"status {got_status}, expected {status}: {text}"
    assert got_code == code, f"code {got_code}, expected {code}: {text}"
    expected = message if message is not None else DOCUMENTED_MESSAGES.get(code)
    if expected is not None:
        assert error_message(text) == expected, f"message of {code}: {text}"
