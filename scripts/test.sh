#!/usr/bin/env bash
# Runs every test: the Swift test suites, then each end-to-end stage in scripts/test.d
# (in name order). Stages drive the real stacks (libnfc, pcscd, tshark) against the
# project's stand-ins. Exit status is non-zero when anything failed.
set -uo pipefail
cd "$(dirname "$0")/.."

export LIBNFC_AUTO_SCAN=false
export SWIFT_BACKTRACE=enable=no

log=.build/test-logs
mkdir -p "$log"

echo "== build (debug, with tests)" >&2
if ! swift build --build-tests -Xswiftc -warnings-as-errors >"$log/build.log" 2>&1; then
  grep -v "prohibited flag" "$log/build.log" >&2
  echo "FAILED: build" >&2
  exit 1
fi

bin="$(swift build --show-bin-path)"
export FELICA_BIN="$bin"
status=0

echo "== swift test" >&2
if swift test --skip-build -Xswiftc -warnings-as-errors >"$log/swift-test.log" 2>&1; then
  grep -E "^✔ Test run with|Executed [0-9]+ tests" "$log/swift-test.log" | tail -n 2 >&2
else
  grep -E "✘|error:|Fatal|crashed" "$log/swift-test.log" | head -n 100 >&2
  tail -n 3 "$log/swift-test.log" >&2
  echo "FAILED: swift test (full log: $log/swift-test.log)" >&2
  status=1
fi

for stage in scripts/test.d/[0-9][0-9]-*.sh; do   # lib.sh is sourced by the stages, not a stage
  [[ -e "$stage" ]] || continue
  echo "== $(basename "$stage")" >&2
  if ! bash "$stage"; then
    echo "FAILED: $stage" >&2
    status=1
  fi
done

if ((status == 0)); then echo "== all tests passed" >&2; else echo "== SOME TESTS FAILED" >&2; fi
exit $status
