#!/usr/bin/env bash
# Device discovery end to end, with readers on both stacks at once: a PN532 emulator that
# libnfc reaches (LIBNFC_DEVICE), listed by its native path pn532:<port>, and pcscd with
# vpcd's two slots, one holding a card.
# `felica devices` must list all three; a command without --device must say which reader it
# took and how to choose; `felica doctor` must poll each and exit 0.
#
# Like 50-pcsc.sh it runs in a private mount + network namespace, so its pcscd (socket
# /run/pcscd/pcscd.comm, vpcd port 35963) lives beside any other.
source "$(dirname "$0")/lib.sh"
if ! private_pcscd; then
  echo "60-devices: skipped: needs 'unshare -m -n' for a private pcscd" >&2
  exit 0
fi

# The PN532 holds a different card from the PC/SC one, so outputs tell them apart.
other=Tests/FeliCaCLITests/Fixtures/two-system.json
unset PCSCLITE_CSOCK_NAME
stage_workdir
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
}

start_pcscd || stage_end
pids+=("$pcscd_pid")

"$sim" vpcd --card suica 2>"$work/vpcd.log" &
pids+=($!)
start_pn532 "$work/pn532" --card "$other" || stage_end
connstring=$(head -n 1 "$work/pn532.out")
export LIBNFC_DEVICE="$connstring"
native="pn532:${connstring#pn532_uart:}"

# vpcd takes a moment to hand pcscd the card.
for _ in $(seq 100); do
  timeout 10 "$felica" devices --json >"$work/devices" 2>/dev/null
  grep -q '"state":"FeliCa card present"' "$work/devices" && break
  sleep 0.1
done

echo "-- felica devices" >&2
for row in "\"stack\":\"pn532\",\"name\":\"PN532 on ${connstring#pn532_uart:}\",\"device\":\"$native\",\"state\":\"ready\"" \
           '"stack":"pcsc","name":"Virtual PCD 00 00","device":"pcsc:Virtual PCD 00 00","state":"FeliCa card present"' \
           '"stack":"pcsc","name":"Virtual PCD 00 01","device":"pcsc:Virtual PCD 00 01","state":"empty"'; do
  if grep -q -- "$row" "$work/devices"; then pass "listed: $row"; else fail "not listed: $row in $(cat "$work/devices")"; fi
done
if timeout 10 "$felica" devices >"$work/table" 2>&1 && head -n 1 "$work/table" | grep -q "^STACK  *NAME  *DEVICE  *STATE$"; then
  pass "one table for every stack"
else
  fail "devices table: $(cat "$work/table")"
fi

echo "-- default device" >&2
timeout 30 "$felica" poll --device "virtual:$other" >"$work/other" 2>&1
rc=0
timeout 30 "$felica" poll >"$work/poll.out" 2>"$work/poll.err" || rc=$?
expected="3 readers found, using $native — pass --device to choose"
if ((rc != 0)); then
  fail "felica poll without --device: exit $rc: $(cat "$work/poll.err")"
elif [[ "$(cat "$work/poll.err")" != "$expected" ]]; then
  fail "felica poll without --device said '$(cat "$work/poll.err")', expected '$expected'"
elif ! diff -u "$work/other" "$work/poll.out" >&2; then
  fail "felica poll without --device did not read the PN532's card"
else
  pass "$expected"
fi
rc=0
FELICA_DEVICE="pcsc:Virtual PCD 00 00" timeout 30 "$felica" poll >"$work/poll.out" 2>"$work/poll.err" || rc=$?
timeout 30 "$felica" poll --device virtual:suica >"$work/suica" 2>&1
if ((rc == 0)) && [[ ! -s "$work/poll.err" ]] && diff -q "$work/suica" "$work/poll.out" >/dev/null; then
  pass "FELICA_DEVICE chooses without a word"
else
  fail "FELICA_DEVICE=pcsc:Virtual PCD 00 00: exit $rc, stderr '$(cat "$work/poll.err")'"
fi

echo "-- felica doctor" >&2
rc=0
timeout 60 "$felica" doctor >"$work/doctor" 2>&1 || rc=$?
for line in "ok       $native: a card answered (IDm " \
            "ok       pcsc:Virtual PCD 00 00: a card answered (IDm " \
            "ok       pcsc:Virtual PCD 00 01: works, no card on it" \
            "ready: 3 readers can poll"; do
  if grep -qF -- "$line" "$work/doctor"; then pass "doctor: $line"; else fail "doctor lacks '$line':"; sed 's/^/     /' "$work/doctor" >&2; fi
done
((rc == 0)) && pass "doctor exits 0" || fail "doctor exit $rc"

stage_end
