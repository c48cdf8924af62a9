#!/usr/bin/env python3
"""The workspace's crate graph, read from `cargo metadata`.

The compiler keeps the layers apart (a crate can only name the crates it depends
on); this script checks the two things it cannot:
  - the rules on outside crates: `rocksdb` only in aztable-store (behind its
    feature); `hyper` only in aztable-server and the load tool (aztable-bench,
    whose ceiling server stands on the same HTTP stack on purpose); no web
    framework (`axum`) anywhere: the server is hyper with one service function;
    `tokio` in none of the pure crates (model, wire, store, insight);
  - that the graph drawn in docs/ARCHITECTURE.md (between the `crate-graph` markers)
    is the one cargo reads, so the picture cannot drift from the manifests.

  scripts/crate-graph.py           check; exit 1 with the differences
  scripts/crate-graph.py --print   print the graph as the doc shows it
  scripts/crate-graph.py --write   rewrite the graph in docs/ARCHITECTURE.md
"""

import json
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "ARCHITECTURE.md"
START, END = "<!-- crate-graph:start -->", "<!-- crate-graph:end -->"

# The layers, lowest first: a crate may depend only on crates listed before it.
LAYERS = [
    "aztable-model",
    "aztable-wire",
    "aztable-store",
    "aztable-insight",
    "aztable-engine",
    "aztable-server",
    "aztable-transfer",
    "aztable-bench",
    "aztable",
]
PURE = {"aztable-model", "aztable-wire", "aztable-store", "aztable-insight"}
ONLY_IN = {
    "rocksdb": {"aztable-store"},
    "axum": set(),
    "hyper": {"aztable-server", "aztable-bench"},
    "hyper-util": {"aztable-server", "aztable-bench"},
}
# outside crates worth naming beside a crate in the picture
SHOWN = ["rocksdb", "tokio", "hyper"]


def metadata():
    out = subprocess.run(
        ["cargo", "metadata", "--format-version", "1", "--no-deps", "--offline"],
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return json.loads(out)


def graph(meta):
    """{crate: (internal deps, outside deps)} over normal (not dev/build) dependencies."""
    names = {p["name"] for p in meta["packages"]}
    g = {}
    for p in meta["packages"]:
        normal = [d for d in p["dependencies"] if d["kind"] is None]
        internal = sorted((d["name"] for d in normal if d["name"] in names), key=LAYERS.index)
        outside = {d["name"]: d["optional"] for d in normal if d["name"] not in names}
        g[p["name"]] = (internal, outside)
    return g


def problems(g):
    found = []
    for crate in g:
        if crate not in LAYERS:
            found.append(f"{crate}: not in this script's LAYERS; place it in a layer")
    for crate, (internal, outside) in g.items():
        if crate not in LAYERS:
            continue
        for dep in internal:
            if dep in LAYERS and LAYERS.index(dep) >= LAYERS.index(crate):
                found.append(f"{crate} depends on {dep}, which is not a lower layer")
        for dep, allowed in ONLY_IN.items():
            if dep in outside and crate not in allowed:
                found.append(f"{crate} depends on {dep} (only {', '.join(sorted(allowed))} may)")
        if crate in PURE and "tokio" in outside:
            found.append(f"{crate} depends on tokio (a pure crate: no async, no I/O)")
    return found


def picture(g):
    width = max(len(c) for c in g)
    lines = ["```text"]
    for crate in reversed(LAYERS):
        if crate not in g:
            continue
        internal, outside = g[crate]
        deps = ", ".join(d.removeprefix("aztable-") for d in reversed(internal)) or "(none)"
        extra = [d + (" (feature)" if outside[d] else "") for d in SHOWN if d in outside]
        line = f"{crate:<{width}}  ──►  {deps}"
        if extra:
            line = f"{line:<76}  [{', '.join(extra)}]"
        lines.append(line.rstrip())
    lines.append("```")
    return "\n".join(lines)


def main():
    g = graph(metadata())
    pic = picture(g)
    if "--print" in sys.argv:
        print(pic)
        return 0
    text = DOC.read_text()
    if START not in text or END not in text:
        print(f"crate-graph: {DOC.name} lacks the {START} / {END} markers", file=sys.stderr)
        return 1
    head, rest = text.split(START, 1)
    _, tail = rest.split(END, 1)
    current = rest.split(END, 1)[0].strip("\n")
    if "--write" in sys.argv:
        DOC.write_text(f"{head}{START}\n{pic}\n{END}{tail}")
        print(f"crate-graph: {DOC.relative_to(ROOT)} rewritten")
        return 0
    found = problems(g)
    if current != pic:
        found.append(
            f"{DOC.relative_to(ROOT)}: the crate graph differs from cargo metadata; "
            "run scripts/crate-graph.py --write\n--- doc\n" + current + "\n--- cargo metadata\n" + pic
        )
    for p in found:
        print(f"crate-graph: {p}", file=sys.stderr)
    if found:
        return 1
    print(f"crate-graph: ok ({len(g)} crates)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
