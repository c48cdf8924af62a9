"""Write the legacy client's requests to tests/fixtures/atom/client-requests/.

    python3 tests/sdk/legacy/capture_requests.py [--port 10002] [--out DIR]

Starts a local HTTP server that records each request and answers it with a stub, points
the pinned azure-storage 0.20.3 TableService at it, sends one request of each shape
(legacy_util.run_fixture_script), and writes for each one `NN-<name>.head` (request line
and headers, as received) and, when it has one, `NN-<name>.body` (the raw body bytes).
test_fixtures.py checks that the pinned client still sends what these files hold.
"""

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import legacy_util  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--port", type=int, default=legacy_util.FIXTURE_PORT)
    ap.add_argument("--out", type=Path, default=legacy_util.FIXTURE_DIR)
    args = ap.parse_args()

    legacy_util.use_legacy_deps()
    with legacy_util.CaptureServer(args.port) as server:
        svc = legacy_util.legacy_service(server.endpoint)
        names = legacy_util.run_fixture_script(svc)
        captured = list(server.captured)
    if len(captured) != len(names):
        print(f"expected {len(names)} requests, captured {len(captured)}", file=sys.stderr)
        return 1

    args.out.mkdir(parents=True, exist_ok=True)
    for old in list(args.out.glob("*.head")) + list(args.out.glob("*.body")):
        old.unlink()
    for i, (name, req) in enumerate(zip(names, captured), start=1):
        stem = f"{i:02d}-{name}"
        (args.out / f"{stem}.head").write_text(req.head_text(), encoding="utf-8", newline="\n")
        if req.body:
            (args.out / f"{stem}.body").write_bytes(req.body)
        print(f"{stem}: {req.method} {req.target} ({len(req.body)} body bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
