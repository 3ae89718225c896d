#!/usr/bin/env bash
# Runs every test: the Swift test suites, then each end-to-end stage in scripts/test.d
# (in name order). Stages drive the real stacks (libnfc, pcscd, tshark) against the
# project's stand-ins. Exit status is non-zero when anything failed.
set -euo pipefail
cd "$(dirname "$0")/.."

export LIBNFC_AUTO_SCAN=false
export SWIFT_BACKTRACE=enable=no

echo "== build" >&2
swift build --build-tests 2>&1 | grep -v "prohibited flag" >&2
echo "== swift test" >&2
swift test --skip-build --parallel --num-workers 2 2>&1 | tail -n 40

bin="$(swift build --show-bin-path)"
export FELICA_BIN="$bin"
status=0
for stage in scripts/test.d/*.sh; do
  [[ -e "$stage" ]] || continue
  echo "== $(basename "$stage")" >&2
  if ! bash "$stage"; then
    echo "FAILED: $stage" >&2
    status=1
  fi
done
exit $status
