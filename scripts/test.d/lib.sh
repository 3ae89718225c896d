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

# pcsc_namespace: private_pcscd for a stage that runs pcscd; where namespaces are not
# permitted, the machine's /run/pcscd and vpcd port, unless another pcscd holds them (then
# the stage ends, failed).
pcsc_namespace() {
  private_pcscd && return 0
  if [[ -S /run/pcscd/pcscd.comm ]]; then
    echo "$stage: another pcscd holds /run/pcscd and 'unshare -m -n' is not permitted here" >&2
    exit 1
  fi
  echo "$stage: no namespaces available; using the machine's /run/pcscd and port 35963" >&2
}

# vpcd_card CARD [felica-sim vpcd options]: the virtual card placed in vpcd's reader (pid
# in $sim_pid, its stderr appended to $work/sim.log); vpcd_card_stop takes it away.
sim_pid=""
vpcd_card() {
  local card=$1
  shift
  "$sim" vpcd --card "$card" "$@" 2>>"$work/sim.log" &
  sim_pid=$!
}
vpcd_card_stop() {
  [[ -n "$sim_pid" ]] && kill "$sim_pid" 2>/dev/null
  wait "$sim_pid" 2>/dev/null
  sim_pid=""
}

# start_pn532 LINK [felica-sim pn532 options]: the PN532 emulator serving on the pty link
# LINK (its output in LINK.out and LINK.err), up once it has printed where it serves; fails,
# saying why, when it does not come up. Its pid is in $pn532_pid; stop_pn532 [PID] stops it
# (default: the last one started), and the stage's exit stops any left running.
pn532_pid=""
pn532_pids=()
start_pn532() {
  local link="$1"
  shift
  "$sim" pn532 --link "$link" "$@" >"$link.out" 2>"$link.err" &
  pn532_pid=$!
  pn532_pids+=("$pn532_pid")
  for _ in $(seq "${pn532_wait:-200}"); do   # 25 ms each
    [[ -L "$link" && -s "$link.out" ]] && return 0
    kill -0 "$pn532_pid" 2>/dev/null || break
    sleep 0.025
  done
  fail "felica-sim pn532 $* did not start: $(cat "$link.err")"
  return 1
}
stop_pn532() {
  local pid="${1:-$pn532_pid}"
  [[ -n "$pid" ]] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
  [[ "$pid" == "$pn532_pid" ]] && pn532_pid=""
  return 0
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
# `cleanup` function (when it defines one) and stop_pn532 have stopped what it started.
stage_workdir() {
  work="$(mktemp -d)"
  trap 'declare -F cleanup >/dev/null && cleanup; for p in "${pn532_pids[@]}"; do kill "$p" 2>/dev/null; done; wait 2>/dev/null; rm -rf "$work"' EXIT
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

# Stages 55-usb and 56-rcs956 drive an emulated USB reader (`felica-sim SIM -- COMMAND`).
#
# usb_matches_virtual SIM DEVICE CARD ARGS...: runs `felica ARGS --device DEVICE` for each
# ARGS (one string each) under one `felica-sim SIM --card CARD` (one bridge start-up), and
# checks that each prints exactly what `--device virtual:CARD` prints.
usb_matches_virtual() {
  local sim_command="$1" device="$2" card="$3"
  shift 3
  local script="$work/$card.sh" i args vs rs
  : >"$script"
  i=0
  for args in "$@"; do
    echo "timeout 30 \"$felica\" $args --device $device >\"$work/$card.$i.out\" 2>\"$work/$card.$i.err\"; echo \$? >\"$work/$card.$i.rc\"" >>"$script"
    i=$((i + 1))
  done
  timeout 120 "$sim" "$sim_command" --card "$card" -- bash "$script" 2>"$work/$card.sim.err"
  i=0
  for args in "$@"; do
    # shellcheck disable=SC2086
    "$felica" $args --device "virtual:$card" >"$work/v.out" 2>/dev/null; vs=$?
    rs=$(cat "$work/$card.$i.rc" 2>/dev/null || echo "not run")
    if [[ "$vs" != 0 || "$rs" != 0 ]]; then
      fail "$card $args: exit virtual $vs, $device $rs"; cat "$work/$card.$i.err" "$work/$card.sim.err" 2>/dev/null | head -5 >&2
    elif ! cmp -s "$work/v.out" "$work/$card.$i.out"; then
      fail "$card $args: output differs"; diff "$work/v.out" "$work/$card.$i.out" | head -20 >&2
    else
      pass "$card $args --device $device: output equals virtual output"
    fi
    i=$((i + 1))
  done
}

# usb_fault SIM DEVICE NAME SIM-OPTIONS FIRST EXPECT SECOND: under `felica-sim SIM
# SIM-OPTIONS`, runs `felica FIRST --device DEVICE`, then `felica SECOND` on the same reader.
# EXPECT is a regex the first command's error must match (empty: it must succeed); SECOND
# "-" means the second command may fail (the card is gone). Both must end within 20 s.
usb_fault() {
  local sim_command="$1" device="$2" name="$3" options="$4" first="$5" expect="$6" second="$7"
  local start end rc1 rc2 ms
  start=$(now_ms)
  # shellcheck disable=SC2086
  timeout 60 "$sim" "$sim_command" $options -- bash -c "timeout 30 \"$felica\" $first --device $device >\"$work/f1.out\" 2>\"$work/f1.err\"; echo \$? >\"$work/f1.rc\"; timeout 30 \"$felica\" $second --device $device >\"$work/f2.out\" 2>\"$work/f2.err\"; echo \$? >\"$work/f2.rc\"" 2>"$work/f.sim.err"
  end=$(now_ms)
  ms=$((end - start))
  rc1=$(cat "$work/f1.rc" 2>/dev/null || echo none); rc2=$(cat "$work/f2.rc" 2>/dev/null || echo none)
  if [[ -n "$expect" ]] && { [[ "$rc1" == 0 || "$rc1" == none || "$rc1" == 124 ]] || ! grep -qE "$expect" "$work/f1.err"; }; then
    fail "$name: first command exit $rc1, expected an error matching /$expect/"; cat "$work/f1.err" "$work/f.sim.err" >&2
  elif [[ -z "$expect" && "$rc1" != 0 ]]; then
    fail "$name: first command exit $rc1, expected it to recover"; cat "$work/f1.err" >&2
  elif [[ "$second" != "-" && "$rc2" != 0 ]]; then
    fail "$name: the next command failed (exit $rc2)"; cat "$work/f2.err" >&2
  elif ((ms > 20000)); then
    fail "$name: took $ms ms (hang guard 20 s)"
  else
    pass "$name: $( [[ -n "$expect" ]] && head -c 160 "$work/f1.err" | tr '\n' ' ' || echo recovered); next command ok"
  fi
}

# reader_loss_watched WHAT DEVICE OUT ERR [CARDS]: checks a `felica watch --json --count
# CARDS` (default 3) whose reader went away once and came back: it read CARDS cards, at
# least one of them after the reader was back; stderr says exactly once that DEVICE is gone and once
# that it is back; the JSON lines carry the same two events, in that order, naming DEVICE.
reader_loss_watched() {
  local what="$1" device="$2" out="$3" err="$4" cards="${5:-3}" gone back seq
  gone=$(grep -c "reader .* is gone" "$err"); back=$(grep -c "reader .* is back" "$err")
  # C: a card, L: readerLost, B: readerBack, in stdout's order.
  seq=$(python3 -c '
import json, sys
device = sys.argv[2]
for line in open(sys.argv[1]):
    o = json.loads(line)
    e = o.get("event")
    print("C" if "idm" in o else ("L" if e == "readerLost" else "B" if e == "readerBack" else "?") + ("" if o.get("device") == device else "!"), end="")
' "$out" "$device" 2>&1)
  if [[ "$gone" == 1 && "$back" == 1 ]] && grep -qF "reader $device is gone" "$err" && grep -qF "reader $device is back" "$err" \
     && [[ "$seq" =~ ^C*LBC+$ && "$(tr -cd C <<<"$seq" | wc -c)" == "$cards" ]]; then
    pass "$what: watch said once that $device left and once that it was back, and read on ($seq)"
  else
    fail "$what: gone $gone, back $back, events $seq"; cat "$err" >&2
  fi
}
