#!/usr/bin/env bash
# End-to-end over PC/SC: the real pcscd with Debian's vsmartcard-vpcd driver, the virtual
# card `felica-sim vpcd` in it, and `felica ... --device pcsc` as the client. For every
# reader dialect, poll, dump and balance must print what the virtual device prints; the
# failure paths (no daemon, card pulled mid-read, wrong dialect forced) must end with a
# clear error, never a hang (every command runs under `timeout`).
#
# pcscd's socket is fixed at /run/pcscd/pcscd.comm and vpcd's port at 35963, so the stage
# runs in a private mount + network namespace (tmpfs on /run/pcscd, its own loopback)
# with the client inside it, beside any pcscd the machine runs (Docs/pcsc.md).
source "$(dirname "$0")/lib.sh"
pcsc_namespace

stage_workdir
cleanup() {
  [[ -n "$sim_pid" ]] && kill "$sim_pid" 2>/dev/null
  [[ -n "$pcscd_pid" ]] && kill "$pcscd_pid" 2>/dev/null
}

# start_card CARD DIALECT [more felica-sim options]
start_card() { vpcd_card "$1" --dialect "$2" "${@:3}"; }
stop_card() { vpcd_card_stop; }

# expect_error NAME EXIT_CODE PATTERN -- command...: the command fails with EXIT_CODE and
# a message matching PATTERN, within its timeout.
expect_error() {
  local name=$1 code=$2 pattern=$3
  shift 4
  local rc=0
  timeout 30 "$@" >"$work/out" 2>"$work/err" || rc=$?
  if ((rc == 124)); then
    fail "$name: hung (killed by timeout)"
  elif ((rc != code)); then
    fail "$name: exit $rc, expected $code; stderr: $(cat "$work/err")"
  elif ! grep -q -- "$pattern" "$work/err"; then
    fail "$name: message does not say '$pattern': $(cat "$work/err")"
  else
    pass "$name: $(head -n 1 "$work/err")"
  fi
}

# same_as_virtual CMD [felica options]: `felica CMD --device pcsc ...` succeeds and prints
# what `felica CMD --device virtual:$card` printed (saved below as the reference, or the
# file $reference names when it is set).
same_as_virtual() {
  local cmd=$1
  shift
  local rc=0
  # shellcheck disable=SC2086
  timeout 30 "$felica" $cmd --device pcsc "$@" >"$work/pcsc.out" 2>"$work/pcsc.err" || rc=$?
  if ((rc != 0)); then
    fail "felica $cmd --device pcsc $*: exit $rc: $(cat "$work/pcsc.err")"
  elif ! diff -u "${reference:-$work/virtual.${cmd// /_}}" "$work/pcsc.out" >"$work/diff"; then
    fail "felica $cmd --device pcsc $* differs from virtual:$card:"
    cat "$work/diff" >&2
  else
    pass "felica $cmd"
  fi
}

# The reference: the same card through the virtual device.
card=suica
for cmd in "poll" "poll --json" "dump" "dump --json" "balance" "balance --json" "history" "history --json"; do
  # shellcheck disable=SC2086
  timeout 30 "$felica" $cmd --device "virtual:$card" >"$work/virtual.${cmd// /_}" 2>"$work/virtual.err" || {
    echo "50-pcsc: reference 'felica $cmd --device virtual:$card' failed: $(cat "$work/virtual.err")" >&2
    exit 1
  }
done

echo "-- no daemon" >&2
expect_error "no pcscd" 69 "no PC/SC daemon is running" -- "$felica" poll --device pcsc

start_pcscd || stage_end

# dialect / extra felica options / extra felica-sim options
cases=(
  "part3||"
  "acr122u||"
  "acr122u|--dialect acr122u|--t0"
  "raw||"
  "sony|--dialect sony|"
)
for c in "${cases[@]}"; do
  IFS='|' read -r dialect client_opts sim_opts <<<"$c"
  echo "-- dialect $dialect ${client_opts:+($client_opts) }${sim_opts:+(card $sim_opts)}" >&2
  # shellcheck disable=SC2086
  start_card "$card" "$dialect" $sim_opts
  for cmd in "poll" "poll --json" "dump" "dump --json" "balance" "balance --json"; do
    # shellcheck disable=SC2086
    same_as_virtual "$cmd" $client_opts
  done
  stop_card
done

# A reader that departs from the plain dialect as an RC-S300 may: it refuses to forward
# Polling, Request Service and Request System Code, takes only short or only extended
# APDUs for a transparent exchange, or cuts replies to short APDUs at 256 bytes. Balance
# and history must come out as through the virtual device in every combination, in both
# transparent-exchange dialects (without the transit brand where Request Service is refused);
# a refusing reader must say what it kept from the probe.
for dialect in part3 sony; do
  for refuse in "" "--refuse polling,request-service,request-system-code"; do
    for apdu in "" "--apdu short" "--apdu extended"; do
      for cut in "" "--cut-long-replies"; do
        sim_opts="$(echo $refuse $apdu $cut)"
        echo "-- dialect $dialect, reader quirks: ${sim_opts:-none}" >&2
        # shellcheck disable=SC2086
        start_card "$card" "$dialect" $sim_opts
        for cmd in "balance" "history --json"; do
          reference=""
          if [[ -n "$refuse" && "$cmd" == "history --json" ]]; then
            # The transit brand is told by a Request Service, which this reader will not
            # forward: the purse comes without an issuer, never with a guessed one.
            reference="$work/virtual.history_--json.no-issuer"
            sed 's/"issuer":"Suica",//' "$work/virtual.history_--json" >"$reference"
          fi
          same_as_virtual "$cmd" --dialect "$dialect"
          reference=""
          if [[ -n "$refuse" ]] && ! grep -q "note: the reader would not forward Polling, Request System Code" "$work/pcsc.err"; then
            fail "felica $cmd ($dialect, $sim_opts) does not say what the reader refused: $(cat "$work/pcsc.err")"
          fi
        done
        stop_card
      done
    done
  done
done

# same_with_note NAME CMD VIRTUAL_CARD NOTE: `felica CMD --device pcsc --dialect sony`
# prints what the virtual device prints for VIRTUAL_CARD and says NOTE on stderr.
same_with_note() {
  local name=$1 cmd=$2 virtual=$3 note=$4 rc=0
  # shellcheck disable=SC2086
  timeout 30 "$felica" $cmd --device "virtual:$virtual" >"$work/virtual.note" 2>/dev/null
  # shellcheck disable=SC2086
  timeout 60 "$felica" $cmd --device pcsc --dialect sony >"$work/pcsc.out" 2>"$work/pcsc.err" || rc=$?
  if ((rc != 0)) || ! diff -u "$work/virtual.note" "$work/pcsc.out" >"$work/diff"; then
    fail "felica $cmd ($name): exit $rc: $(cat "$work/pcsc.err") $(cat "$work/diff")"
  elif ! grep -q "$note" "$work/pcsc.err"; then
    fail "felica $cmd ($name) does not say '$note': $(cat "$work/pcsc.err")"
  else
    pass "felica $cmd ($name)"
  fi
}

# A card whose first system is the common area (Edy) on a reader refusing everything but
# reads: the purse is found by reading the profiles' services directly.
echo "-- card edy, reader refusing Polling, Request Service, Request System Code" >&2
start_card edy sony --refuse polling,request-service,request-system-code
same_with_note "edy, refusing reader" balance edy "services were found by reading them"
stop_card

# A card ignoring Request Block Information: `felica dump` completes, with a note.
echo "-- card ignoring Request Block Information" >&2
"$felica" dump --json --device "virtual:$card" | sed 's/^{$/{\n  "ignores": ["request-block-information"],/' >"$work/ignoring.json"
start_card "$work/ignoring.json" sony
same_with_note "card ignoring Request Block Information" dump "$work/ignoring.json" "did not answer Request Block Information"
stop_card

# Regression: the pcsc-lite context used to be released whenever its last reference
# dropped, racing libpcsclite's teardown at exit (SIGSEGV about 1 run in 400). Many short
# runs in a row must all exit normally.
echo "-- 300 short runs (teardown race)" >&2
start_card suica part3
crashed=0
for i in $(seq 300); do
  rc=0
  timeout 30 "$felica" poll --device pcsc >/dev/null 2>"$work/err" || rc=$?
  if ((rc >= 124)); then crashed=$((crashed + 1)); echo "  run $i: exit $rc $(head -c 300 "$work/err")" >&2; fi
done
if ((crashed > 0)); then fail "$crashed of 300 runs crashed or hung"; else pass "300 runs, none crashed"; fi
stop_card

# Every other built-in card once (dialect detected), as far as dump and balance go.
others=$("$felica" devices --json 2>/dev/null | grep -o '"virtual:[a-z]*"' | tr -d '"' | sed 's/^virtual://' | grep -vx "$card")
for other in $others; do
  echo "-- card $other" >&2
  start_card "$other" part3
  for cmd in "dump --json" "balance --json"; do
    rc=0
    # shellcheck disable=SC2086
    timeout 30 "$felica" $cmd --device "virtual:$other" >"$work/virtual.out" 2>"$work/virtual.err"
    # shellcheck disable=SC2086
    timeout 30 "$felica" $cmd --device pcsc >"$work/pcsc.out" 2>"$work/pcsc.err" || rc=$?
    if ((rc != 0)); then
      fail "felica $cmd --device pcsc with $other: exit $rc: $(cat "$work/pcsc.err")"
    elif ! diff -u "$work/virtual.out" "$work/pcsc.out" >"$work/diff"; then
      fail "felica $cmd --device pcsc with $other differs from virtual:$other:"
      cat "$work/diff" >&2
    else
      pass "felica $cmd ($other)"
    fi
  done
  stop_card
done

echo "-- failure paths" >&2
start_card "$card" part3
# (The listing first: the card is in the first slot, the second slot is empty.)
timeout 30 "$felica" poll --device pcsc >/dev/null 2>&1
if timeout 30 "$felica" devices --json >"$work/devices" 2>&1 &&
   grep -q '"device":"pcsc:Virtual PCD 00 00","state":"FeliCa card present"' "$work/devices" &&
   grep -q '"device":"pcsc:Virtual PCD 00 01","state":"empty"' "$work/devices"; then
  pass "felica devices lists both vpcd slots with their state"
else
  fail "felica devices: $(cat "$work/devices")"
fi
expect_error "wrong dialect forced" 1 "does not speak the acr122u dialect" -- "$felica" poll --device pcsc --dialect acr122u
expect_error "wrong dialect in the device string" 1 "does not speak the raw dialect" -- "$felica" poll --device "pcsc?dialect=raw"
expect_error "unknown device option" 64 "device option 'bogus' is not known to pcsc devices" -- "$felica" poll --device "pcsc?bogus=1"
expect_error "unknown reader" 69 "no PC/SC reader named" -- "$felica" poll --device "pcsc:No Such Reader"
expect_error "ambiguous reader prefix" 1 "matches several PC/SC readers" -- "$felica" poll --device "pcsc:Virtual"
stop_card

# The card leaves after answering 8 commands: the dump is cut mid-read, the socket closes.
start_card "$card" part3 --remove-after 8
expect_error "card removed mid-read" 1 "card was removed" -- "$felica" dump --device pcsc
wait "$sim_pid" 2>/dev/null
sim_pid=""

expect_error "no card" 69 "no FeliCa card" -- "$felica" poll --device "pcsc?wait=0.5"

stop_pcscd
expect_error "pcscd stopped" 69 "sudo systemctl start pcscd" -- "$felica" balance --device pcsc

if ((failures > 0)); then
  echo "50-pcsc: pcscd's log ends:" >&2
  tail -n 40 "$work/pcscd.log" >&2
fi
stage_end
