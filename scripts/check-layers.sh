#!/usr/bin/env bash
# Checks the crate's layering (src/lib.rs, docs/ARCHITECTURE.md) on the source text:
#   - the `rocksdb` crate is named only under src/store/ (the storage layer);
#   - the `axum` crate is named only under src/http/, in src/main.rs, and in the load
#     tool's ceiling server (src/bin/aztable-bench/ceiling.rs), which stands on the
#     same HTTP stack on purpose;
#   - the pure parsers (src/auth, src/odata, src/filter, src/batch, src/settings,
#     src/endpoint.rs) and the partition advisor's counters (src/insight)
#     name neither tokio nor axum, nor the crate's store, partition, service or http
#     modules.
# Comments and string literals are skipped, so prose and `feature = "rocksdb"` do not
# count. Paths through `super::` that end in one of those module names are refused in
# the parsers too (none of them has a submodule of that name). Prints each violation
# as file:line and exits 1 if there is any.
set -euo pipefail
cd "$(dirname "$0")/.."

mapfile -t files < <(find src -name '*.rs' | LC_ALL=C sort)
awk -v q="'" '
function rep(s, n,    r) { r = ""; while (n-- > 0) r = r s; return r }

# The line with comments removed and string/char literal contents blanked; block
# comments and strings may span lines (state in blk, str, hashes).
function strip(line,    out, i, n, c, c2, j, h, p) {
  out = ""; n = length(line); i = 1
  while (i <= n) {
    c = substr(line, i, 1); c2 = substr(line, i, 2)
    if (blk > 0) {
      if (c2 == "*/") { blk--; i += 2 } else if (c2 == "/*") { blk++; i += 2 } else i++
      continue
    }
    if (str == 1) {
      if (c == "\\") { i += 2; continue }
      if (c == "\"") { str = 0; out = out "\"" }
      i++; continue
    }
    if (str == 2) {
      if (c == "\"" && substr(line, i + 1, hashes) == rep("#", hashes)) {
        str = 0; out = out "\""; i += 1 + hashes; continue
      }
      i++; continue
    }
    if (c2 == "//") break
    if (c2 == "/*") { blk = 1; i += 2; continue }
    if (c == "\"") { str = 1; out = out "\""; i++; continue }
    p = (i > 1) ? substr(line, i - 1, 1) : ""
    if (c == "r" && (p !~ /[A-Za-z0-9_]/ || (p == "b" && (i < 3 || substr(line, i - 2, 1) !~ /[A-Za-z0-9_]/)))) {
      j = i + 1; h = 0
      while (substr(line, j, 1) == "#") { h++; j++ }
      if (substr(line, j, 1) == "\"") { str = 2; hashes = h; out = out "\""; i = j + 1; continue }
    }
    if (c == q) {
      # a char literal (quote, escape or one possibly multi-byte char, quote) or a lifetime
      if (substr(line, i + 1, 1) == "\\") {
        j = index(substr(line, i + 3), q)
        if (j > 0) { out = out q q; i += 3 + j; continue }
      } else if (substr(line, i + 2, 1) == q) {
        out = out q q; i += 3; continue
      } else if (substr(line, i + 1, 1) !~ /[ -~]/) {
        j = index(substr(line, i + 1, 6), q)
        if (j > 0) { out = out q q; i += 1 + j; continue }
      }
    }
    out = out c; i++
  }
  return out
}

function ident(code, name) {
  return code ~ ("(^|[^A-Za-z0-9_])" name "([^A-Za-z0-9_]|$)")
}

function report(why) {
  printf "%s:%d: %s\n    %s\n", FILENAME, FNR, why, raw
  bad++
}

# Within `crate::{...}` or `super::{...}` groups (possibly over several lines), reports
# the first-level items that name a module the parsers may not use.
function groups(code,    i, n, c, rest, name) {
  n = length(code); i = 1
  while (i <= n) {
    if (gdepth == 0) {
      rest = substr(code, i)
      if (!match(rest, /(crate|super)[ \t]*::[ \t]*\{/)) return
      i += RSTART + RLENGTH - 1
      gdepth = 1; ghead = 1
      continue
    }
    c = substr(code, i, 1)
    if (c == "{") { gdepth++; ghead = 0; i++; continue }
    if (c == "}") { gdepth--; ghead = 0; i++; continue }
    if (c == ",") { if (gdepth == 1) ghead = 1; i++; continue }
    if (ghead && c ~ /[A-Za-z_]/) {
      rest = substr(code, i)
      match(rest, /^[A-Za-z0-9_]+/)
      name = substr(rest, 1, RLENGTH)
      if (name ~ /^(store|partition|service|http)$/)
        report("a pure parser module uses the " name " layer (parsers do no I/O and know no server layer)")
      ghead = 0; i += RLENGTH; continue
    }
    if (c !~ /[ \t]/) ghead = 0
    i++
  }
}

# A file that ends inside a comment or string means the scan lost track of the
# literals; say so rather than check the rest of it wrongly.
function lost() {
  if (prev != "" && (blk > 0 || str > 0)) {
    printf "%s: ends inside a comment or string literal; check-layers cannot read it\n", prev
    bad++
  }
}

FNR == 1 {
  lost(); prev = FILENAME
  blk = 0; str = 0; gdepth = 0
  f = FILENAME
  store_ok = (f ~ /^src\/store\//)
  axum_ok = (f ~ /^src\/http\// || f == "src/main.rs" || f == "src/bin/aztable-bench/ceiling.rs")
  parser = (f ~ /^src\/(auth|odata|filter|batch|settings|insight)(\/|\.rs$)/ || f == "src/endpoint.rs")
}

{
  raw = $0
  code = strip($0)
  if (!store_ok && ident(code, "rocksdb"))
    report("`rocksdb` outside src/store/ (only the storage layer names the engine)")
  if (!axum_ok && ident(code, "axum"))
    report("`axum` outside src/http/, src/main.rs and the bench ceiling server")
  if (parser) {
    if (ident(code, "tokio"))
      report("a pure parser module names `tokio` (parsers are synchronous)")
    if (code ~ /(crate|super)[ \t]*::[ \t]*(super[ \t]*::[ \t]*)*(store|partition|service|http)([^A-Za-z0-9_]|$)/)
      report("a pure parser module uses a server layer: store, partition, service or http (parsers do no I/O and know no server layer)")
    groups(code)
  }
}

END {
  lost()
  if (bad > 0) {
    printf "check-layers: %d layering violation(s); see src/lib.rs and docs/ARCHITECTURE.md\n", bad
    exit 1
  }
  print "check-layers: ok"
}
' "${files[@]}"
