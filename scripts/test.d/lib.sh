# Shared start-up of the end-to-end stages; each stage sources it first:
#   source "$(dirname "$0")/lib.sh"
# It moves to the package root, finds the built executables ($felica, $sim), clears the
# environment variables that would pick another device, and defines pass/fail/note,
# now_ms, private_pcscd and stage_workdir. A stage ends with `stage_end`.
set -uo pipefail
cd "$(dirname "$0")/../.."

stage="$(basename "$0" .sh)"
bin="${FELICA_BIN:-$(swift build --show-bin-path)}"
felica="$bin/felica"
sim="$bin/felica-sim"
export LIBNFC_AUTO_SCAN=false LIBNFC_LOG_LEVEL=0 SWIFT_BACKTRACE=enable=no
unset LIBNFC_DEVICE FELICA_DEVICE

failures=0
checks=0
pass() { checks=$((checks + 1)); [[ -n "${QUIET_PASS:-}" ]] || echo "  ok: $*" >&2; return 0; }
fail() { checks=$((checks + 1)); failures=$((failures + 1)); echo "  FAIL: $*" >&2; }
note() { echo "  $*" >&2; }
now_ms() { echo $(($(date +%s%N) / 1000000)); }

# private_pcscd: runs the stage again in a private mount + network namespace (once),
# where /run/pcscd is a fresh tmpfs and loopback is up, so its pcscd and vpcd live beside
# any the machine runs. Returns 1, without re-running, when namespaces are not permitted.
private_pcscd() {
  if [[ -z "${FELICA_STAGE_NAMESPACE:-}" ]]; then
    local flags
    for flags in "-m -n" "-r -m -n"; do
      # shellcheck disable=SC2086
      if unshare $flags true 2>/dev/null; then
        FELICA_STAGE_NAMESPACE=1 exec unshare $flags bash "$0"
      fi
    done
    return 1
  fi
  ip link set lo up
  mkdir -p /run/pcscd 2>/dev/null
  mount -t tmpfs tmpfs /run/pcscd
}

# start_pcscd: pcscd in the foreground (pid in $pcscd_pid, log in $work/pcscd.log), up
# once its socket appears (it has no other readiness signal); fails, saying why, when
# it does not come up. stop_pcscd ends it.
pcscd_pid=""
start_pcscd() {
  pcscd --foreground >"$work/pcscd.log" 2>&1 &
  pcscd_pid=$!
  for _ in $(seq 500); do
    [[ -S /run/pcscd/pcscd.comm ]] && return 0
    kill -0 "$pcscd_pid" 2>/dev/null || break
    sleep 0.01
  done
  fail "pcscd did not start: $(cat "$work/pcscd.log")"
  return 1
}
stop_pcscd() {
  [[ -n "$pcscd_pid" ]] && kill "$pcscd_pid" 2>/dev/null && wait "$pcscd_pid" 2>/dev/null
  pcscd_pid=""
}

# stage_workdir: a scratch directory $work, removed on exit after the stage's own
# `cleanup` function (when it defines one) has stopped what it started.
stage_workdir() {
  work="$(mktemp -d)"
  trap 'declare -F cleanup >/dev/null && cleanup; wait 2>/dev/null; rm -rf "$work"' EXIT
}

# stage_end: the stage's verdict and exit status.
stage_end() {
  if ((failures > 0)); then
    echo "$stage: $failures of $checks checks failed" >&2
    exit 1
  fi
  echo "$stage: all $checks checks passed" >&2
  exit 0
}
