"""Service properties, stats and CORS (spec 1.1): get_service_properties defaults,
set_service_properties round trip (logging, metrics, CORS rules), subset updates, the
limit of 5 CORS rules, get_service_stats on the -secondary endpoint, and CORS preflight /
actual requests over plain HTTP (requests).

Service properties are account-wide, so this module runs against a server of its own when
AZTABLE_BINARY is set (scripts/sdk-tests.sh sets it); otherwise against the shared server,
without the test of the never-set defaults."""

import os
from datetime import datetime, timezone
from urllib.parse import urlparse

import pytest
import requests
from azure.core.credentials import AzureNamedKeyCredential
from azure.core.exceptions import HttpResponseError
from azure.data.tables import (
    TableAnalyticsLogging,
    TableCorsRule,
    TableMetrics,
    TableRetentionPolicy,
    TableServiceClient,
)

from sdk_util import (
    assert_refused,
    connection_string_for,
    error_code,
    free_port,
    odata_error_code,
    start_server,
    temp_dir,
)

BINARY = os.environ.get("AZTABLE_BINARY")


@pytest.fixture(scope="module")
def own(endpoint, account_name, account_key):
    """(endpoint, fresh) of the server this module uses; fresh = its properties were never set."""
    if not BINARY:
        yield endpoint, False
        return
    with temp_dir("aztable-props-") as root:
        location = os.path.join(root, "data")
        os.makedirs(location)
        port = free_port()
        proc = start_server(BINARY, port, location, os.path.join(root, "server.log"))
        try:
            yield f"http://127.0.0.1:{port}/{account_name}", True
        finally:
            proc.kill()
            proc.wait(timeout=30)


@pytest.fixture(scope="module")
def svc(own, account_name, account_key):
    client = TableServiceClient.from_connection_string(connection_string_for(own[0], account_name, account_key))
    yield client
    client.close()


@pytest.fixture
def restore(svc):
    """Leaves the account without CORS rules and with plain logging/metrics afterwards."""
    yield
    svc.set_service_properties(
        analytics_logging=TableAnalyticsLogging(),
        hour_metrics=TableMetrics(),
        minute_metrics=TableMetrics(),
        cors=[],
    )


def test_defaults(own, svc):
    if not own[1]:
        pytest.skip("AZTABLE_BINARY not set: the shared server's properties may have been set already")
    props = svc.get_service_properties()
    logging = props["analytics_logging"]
    assert logging.version == "1.0"
    assert logging.retention_policy.enabled is False
    for key in ("hour_metrics", "minute_metrics"):
        m = props[key]
        assert m.version == "1.0", key
        assert m.enabled is False, key
        assert m.retention_policy.enabled is False, key
    assert not props["cors"], props["cors"]


def _rule(origins, methods, **kw):
    return TableCorsRule(origins, methods, **kw)


def test_set_and_get_round_trip(svc, restore):
    svc.set_service_properties(
        analytics_logging=TableAnalyticsLogging(
            read=True, write=False, delete=True, retention_policy=TableRetentionPolicy(enabled=True, days=5)
        ),
        hour_metrics=TableMetrics(
            enabled=True, include_apis=True, retention_policy=TableRetentionPolicy(enabled=True, days=7)
        ),
        minute_metrics=TableMetrics(enabled=False),
        cors=[
            _rule(
                ["http://example.com", "http://contoso.com"],
                ["GET", "PUT"],
                allowed_headers=["x-ms-meta-*", "content-type"],
                exposed_headers=["x-ms-request-id"],
                max_age_in_seconds=300,
            ),
            _rule(["*"], ["DELETE", "MERGE"], max_age_in_seconds=1),
        ],
    )
    props = svc.get_service_properties()
    lg = props["analytics_logging"]
    assert (lg.version, lg.read, lg.write, lg.delete) == ("1.0", True, False, True)
    assert (lg.retention_policy.enabled, lg.retention_policy.days) == (True, 5)
    hm = props["hour_metrics"]
    assert (hm.enabled, hm.include_apis) == (True, True)
    assert (hm.retention_policy.enabled, hm.retention_policy.days) == (True, 7)
    mm = props["minute_metrics"]
    assert mm.enabled is False and mm.retention_policy.enabled is False
    cors = props["cors"]
    assert len(cors) == 2
    first, second = cors
    assert [o.strip() for o in first.allowed_origins] == ["http://example.com", "http://contoso.com"]
    assert [m.strip() for m in first.allowed_methods] == ["GET", "PUT"]
    assert [h.strip() for h in first.allowed_headers] == ["x-ms-meta-*", "content-type"]
    assert [h.strip() for h in first.exposed_headers] == ["x-ms-request-id"]
    assert first.max_age_in_seconds == 300
    assert second.allowed_origins == ["*"] and [m.strip() for m in second.allowed_methods] == ["DELETE", "MERGE"]
    assert second.allowed_headers == [] and second.exposed_headers == [] and second.max_age_in_seconds == 1


def test_subset_update_keeps_the_other_roots(svc, restore):
    svc.set_service_properties(
        analytics_logging=TableAnalyticsLogging(read=True, write=True, delete=False),
        hour_metrics=TableMetrics(enabled=True, include_apis=False,
                                  retention_policy=TableRetentionPolicy(enabled=True, days=3)),
        cors=[_rule(["http://a.example"], ["GET"])],
    )
    # Only CORS.
    svc.set_service_properties(cors=[_rule(["http://b.example"], ["POST"], max_age_in_seconds=9)])
    props = svc.get_service_properties()
    lg, hm = props["analytics_logging"], props["hour_metrics"]
    assert (lg.read, lg.write, lg.delete) == (True, True, False)
    assert (hm.enabled, hm.include_apis, hm.retention_policy.days) == (True, False, 3)
    assert [(r.allowed_origins, r.max_age_in_seconds) for r in props["cors"]] == [(["http://b.example"], 9)]
    # Only logging.
    svc.set_service_properties(analytics_logging=TableAnalyticsLogging(read=False, write=False, delete=True))
    props = svc.get_service_properties()
    assert (props["analytics_logging"].read, props["analytics_logging"].delete) == (False, True)
    assert props["hour_metrics"].retention_policy.days == 3
    assert [r.allowed_origins for r in props["cors"]] == [["http://b.example"]]
    # An empty CORS list removes the rules.
    svc.set_service_properties(cors=[])
    assert not svc.get_service_properties()["cors"]


def test_six_cors_rules_are_refused(svc, restore):
    five = [_rule([f"http://o{i}.example"], ["GET"]) for i in range(5)]
    svc.set_service_properties(cors=five)
    with pytest.raises(HttpResponseError) as info:
        svc.set_service_properties(cors=five + [_rule(["http://o5.example"], ["GET"])])
    assert info.value.status_code == 400, info.value.message
    assert error_code(info.value) == "InvalidXmlDocument", info.value.message
    assert [r.allowed_origins[0] for r in svc.get_service_properties()["cors"]] == [
        f"http://o{i}.example" for i in range(5)
    ]


def test_retention_days_out_of_range_is_refused(svc, restore):
    for days in (0, 366):
        with pytest.raises(HttpResponseError) as info:
            svc.set_service_properties(
                analytics_logging=TableAnalyticsLogging(retention_policy=TableRetentionPolicy(enabled=True, days=days))
            )
        assert_refused(info.value, 400, "InvalidXmlDocument", f"The value '{days}' of the XML node 'Days' is not valid.")


def test_service_stats_on_the_secondary_endpoint(own, account_name, account_key):
    primary = urlparse(own[0])
    # azure-data-tables derives the secondary location by rewriting the host name, which
    # cannot work for a path-style IP endpoint; point the client at the -secondary account
    # path and name its host as the secondary host, so get_service_stats stays there.
    client = TableServiceClient(
        f"{own[0]}-secondary",
        credential=AzureNamedKeyCredential(account_name, account_key),
        secondary_hostname=primary.netloc,
    )
    urls = []
    stats = client.get_service_stats(raw_request_hook=lambda r: urls.append(r.http_request.url))
    assert urlparse(urls[-1]).path == f"/{account_name}-secondary/", urls
    _assert_live_and_synced_now(stats)


def _assert_live_and_synced_now(stats):
    geo = stats["geo_replication"]
    assert geo["status"] == "live", geo
    synced = geo["last_sync_time"]
    assert isinstance(synced, datetime), geo
    assert abs((datetime.now(timezone.utc) - synced).total_seconds()) < 60, geo


def test_service_stats_from_the_connection_string_client(own, account_name, account_key):
    # What the SDK does by itself: it sends the request to the secondary location as
    # /<account>-secondary/<account>/?restype=service&comp=stats.
    client = TableServiceClient.from_connection_string(
        f"DefaultEndpointsProtocol=http;AccountName={account_name};AccountKey={account_key};TableEndpoint={own[0]};"
    )
    urls = []
    stats = client.get_service_stats(raw_request_hook=lambda r: urls.append(r.http_request.url))
    assert urlparse(urls[-1]).path == f"/{account_name}-secondary/{account_name}/", urls
    _assert_live_and_synced_now(stats)


# --- CORS over plain HTTP ------------------------------------------------------------------


def _code(resp):
    return odata_error_code(resp.text) or resp.headers.get("x-ms-error-code")


def _preflight(endpoint, path, origin=None, method=None, headers=None):
    h = {}
    if origin:
        h["Origin"] = origin
    if method:
        h["Access-Control-Request-Method"] = method
    if headers:
        h["Access-Control-Request-Headers"] = headers
    return requests.options(f"{endpoint}{path}", headers=h, timeout=30)


def _list(value):
    return [v.strip().lower() for v in (value or "").split(",") if v.strip()]


def test_cors_preflight_and_actual_requests(own, svc, restore):
    endpoint = own[0]
    svc.set_service_properties(cors=[])
    r = _preflight(endpoint, "/Tables", "http://example.com", "GET")
    assert r.status_code == 403 and _code(r) == "CorsPreflightFailure", (r.status_code, r.text)

    svc.set_service_properties(
        cors=[
            _rule(
                ["http://example.com"],
                ["GET"],
                allowed_headers=["x-ms-*", "content-type"],
                exposed_headers=["x-ms-request-id"],
                max_age_in_seconds=3600,
            )
        ]
    )
    # Anonymous preflight (requests sends no Authorization).
    r = _preflight(endpoint, "/Tables", "http://example.com", "GET", "x-ms-version,content-type")
    assert r.status_code == 200, r.text
    assert r.headers.get("Access-Control-Allow-Origin") == "http://example.com"
    assert "get" in _list(r.headers.get("Access-Control-Allow-Methods"))
    assert r.headers.get("Access-Control-Max-Age") == "3600"
    assert {"x-ms-version", "content-type"} <= set(_list(r.headers.get("Access-Control-Allow-Headers")))

    for origin, method in (("http://other.example", "GET"), ("http://example.com", "DELETE")):
        r = _preflight(endpoint, "/Tables", origin, method)
        assert r.status_code == 403 and _code(r) == "CorsPreflightFailure", (origin, method, r.status_code, r.text)
        assert "Access-Control-Allow-Origin" not in r.headers
    r = _preflight(endpoint, "/Tables", "http://example.com", "GET", "x-not-allowed")
    assert (r.status_code, _code(r)) == (403, "CorsPreflightFailure"), r.text
    r = _preflight(endpoint, "/Tables", "http://example.com")
    assert_refused(r, 400, "InvalidInput", "A CORS preflight request must carry an Access-Control-Request-Method header.")
    r = _preflight(endpoint, "/Tables", method="GET")
    assert_refused(r, 400, "InvalidInput", "A CORS preflight request must carry an Origin header.")

    # An actual (signed) request with Origin.
    seen = []
    list(svc.list_tables(headers={"Origin": "http://example.com"}, raw_response_hook=lambda p: seen.append(p)))
    h = seen[-1].http_response.headers
    assert h.get("Access-Control-Allow-Origin") == "http://example.com", dict(h)
    assert "x-ms-request-id" in _list(h.get("Access-Control-Expose-Headers")), dict(h)
    seen.clear()
    list(svc.list_tables(headers={"Origin": "http://other.example"}, raw_response_hook=lambda p: seen.append(p)))
    assert "Access-Control-Allow-Origin" not in seen[-1].http_response.headers
