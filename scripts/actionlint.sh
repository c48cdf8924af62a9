#!/usr/bin/env bash
# Checks the GitHub Actions workflows (.github/workflows/*.yml) with actionlint, a
# pinned version installed with the Go toolchain into ~/.cache/aztable/bin (outside
# the clone) when missing. shellcheck, when installed, also checks their run: scripts.
set -euo pipefail
cd "$(dirname "$0")/.."

VERSION=v1.7.7
bin="$HOME/.cache/aztable/bin"
tool="$bin/actionlint-$VERSION"
if [ ! -x "$tool" ]; then
  command -v go >/dev/null || { echo "actionlint.sh: needs the Go toolchain to install actionlint $VERSION" >&2; exit 1; }
  echo "== installing actionlint $VERSION into $bin"
  mkdir -p "$bin"
  GOBIN="$bin" GOFLAGS=-mod=mod go install "github.com/rhysd/actionlint/cmd/actionlint@$VERSION"
  mv "$bin/actionlint" "$tool"
fi
"$tool" -version | head -1
"$tool" -no-color .github/workflows/*.yml
echo "actionlint: $(ls .github/workflows/*.yml | wc -l) workflows, no findings"
