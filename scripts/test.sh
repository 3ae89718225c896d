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

# Stage 96 (Debian 13) needs a trixie root and three builds with Debian's Swift: ~17
# minutes on two cores when cold. They are made in the background, at the lowest priority, so
# they take only what the stages before it leave idle; stage 96 waits for them.
# FELICA_SKIP_TRIXIE=1 skips that stage (it needs root or sudo, debootstrap and ~5 GB).
trixie_stage=scripts/test.d/96-trixie.sh
prepare_pid=""
if [[ -e "$trixie_stage" && -z "${FELICA_SKIP_TRIXIE:-}" ]]; then
  echo "== Debian 13 root and builds: started in the background (log: $log/trixie-prepare.log)" >&2
  rm -f .build/trixie/prepared
  # Its own process group (set -m), so that an early end of this script stops all of it;
  # the same session, so that nice counts against the stages. sudo must not ask from the
  # background: where it would, the prepare stops and stage 96 asks.
  set -m
  FELICA_SUDO_NONINTERACTIVE=1 FELICA_BIN=unused nice -n 19 bash scripts/trixie-check.sh prepare \
    </dev/null >"$log/trixie-prepare.log" 2>&1 &
  prepare_pid=$!
  set +m
  trap 'kill -- -"$prepare_pid" 2>/dev/null' EXIT
fi

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
  if [[ "$stage" == "$trixie_stage" ]]; then
    if [[ -n "${FELICA_SKIP_TRIXIE:-}" ]]; then
      echo "== $(basename "$stage"): SKIPPED (FELICA_SKIP_TRIXIE is set): nothing of Debian 13 was checked" >&2
      continue
    fi
    wait_start=$(date +%s)
    wait "$prepare_pid" 2>/dev/null
    echo "== (waited $(($(date +%s) - wait_start)) s for the Debian 13 root and builds)" >&2
  fi
  echo "== $(basename "$stage")" >&2
  if ! FELICA_TRIXIE_PREPARED=${prepare_pid:+1} bash "$stage"; then
    echo "FAILED: $stage" >&2
    status=1
  fi
done

if ((status == 0)); then echo "== all tests passed" >&2; else echo "== SOME TESTS FAILED" >&2; fi
exit $status
