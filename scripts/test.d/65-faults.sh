#!/usr/bin/env bash
# Faults through the real stacks: `felica history` through libnfc + the PN532
# emulator and through pcscd + vpcd while the card leaves at every exchange in turn, the
# reader garbles, delays or drops a reply, the reader goes away mid-command, or the card
# wedges. Every run must end within its time limit, never by a signal, and either print
# the complete output (the same as --device virtual:<card>) with exit 0, or print nothing
# on stdout and say on stderr what failed, with a non-zero exit. After each fault the next
# command, with the card back, must work.
#
# Runs in a private mount + network namespace for pcscd (see 50-pcsc.sh).
source "$(dirname "$0")/lib.sh"
if private_pcscd; then
  pcsc_possible=1
else
  echo "65-faults: 'unshare -m -n' is not permitted here; the PC/SC part needs a private /run/pcscd" >&2
  pcsc_possible=0
fi
# Hundreds of checks: only failures and notes are printed, unless VERBOSE is set.
[[ -n "${VERBOSE:-}" ]] || QUIET_PASS=1

stage_workdir
card_pid=""
bg_pid=""
cleanup() {
  for p in $bg_pid $card_pid $pcscd_pid; do kill "$p" 2>/dev/null; done
}

# run LIMIT ARGS...: felica ARGS under a time limit; sets rc and elapsed (ms); stdout in
# $work/out, stderr in $work/err.
run() {
  local limit=$1 start
  shift
  start=$(now_ms)
  timeout -k 2 "$limit" "$felica" "$@" >"$work/out" 2>"$work/err"
  rc=$?
  elapsed=$(($(now_ms) - start))
}

# judge WHAT REFERENCE PATTERN: sets verdict to "complete" or "error" for the last run, or
# records a failure (hang, crash, partial output, an error that does not say what failed)
# and sets it to "bad".
judge() {
  local what=$1 ref=$2 pattern=$3
  if ((rc == 124 || rc == 137)); then
    fail "$what: hung (killed after its time limit)"
  elif ((rc > 128)); then
    fail "$what: died of signal $((rc - 128)): $(tail -n 3 "$work/err")"
  elif ((rc == 0)); then
    if cmp -s "$work/out" "$ref"; then
      pass "$what: complete (${elapsed} ms)"
      verdict=complete
      return
    fi
    fail "$what: exit 0 but the output is not the complete one:"
    diff "$ref" "$work/out" | head -n 10 >&2
  elif [[ -s "$work/out" ]]; then
    fail "$what: exit $rc, yet printed on stdout: $(head -n 2 "$work/out")"
  elif ! grep -q "^Error: " "$work/err" || ! grep -qiE -e "$pattern" "$work/err"; then
    fail "$what: exit $rc, but stderr does not say what failed (/$pattern/): $(cat "$work/err")"
  else
    pass "$what: exit $rc in ${elapsed} ms: $(head -n 1 "$work/err")"
    verdict=error
    return
  fi
  verdict=bad
}

# expect_complete WHAT REFERENCE ARGS...: the command must print the complete output.
expect_complete() {
  local what=$1 ref=$2
  shift 2
  run 30 "$@"
  if ((rc == 0)) && cmp -s "$work/out" "$ref"; then
    pass "$what"
  else
    fail "$what: exit $rc: $(head -c 300 "$work/err")"
    [[ $rc -eq 0 ]] && diff "$ref" "$work/out" | head -n 10 >&2
  fi
}

for card in wallet suica; do
  "$felica" history --device "virtual:$card" >"$work/$card.ref" 2>/dev/null ||
    { echo "$stage: reference 'felica history --device virtual:$card' failed" >&2; exit 1; }
done

removed="card (left|was removed|is no longer)|no card|no FeliCa card"

# The options this stage relies on refuse nonsense as usage errors.
for args in "watch --interval -1 --device virtual:suica" "watch --interval nan --device virtual:suica"; do
  # shellcheck disable=SC2086
  run 10 $args
  ((rc == 64)) && grep -q "interval" "$work/err" && pass "felica $args: usage error" || fail "felica $args: exit $rc: $(cat "$work/err")"
done
for args in "pn532 --card suica --taps 0:3" "pn532 --card suica --taps 5" "pn532 --no-card --taps 5:3" "vpcd --card suica --stall-after -1"; do
  # shellcheck disable=SC2086
  timeout 10 "$sim" $args >/dev/null 2>"$work/err"
  rc=$?
  ((rc == 64)) && pass "felica-sim $args: usage error" || fail "felica-sim $args: exit $rc: $(cat "$work/err")"
done

# ============================ libnfc + the PN532 emulator ==============================


dev="libnfc:pn532_uart:$work/pty"
echo "-- libnfc: card removed after each exchange in turn" >&2
for card in wallet suica; do
  complete=0 errors=0 total=""
  for n in $(seq 0 40); do
    start_pn532 "$work/pty" --card "$card" --remove-after "$n" || break
    run 20 history --device "$dev"
    judge "$card, removed after $n" "$work/$card.ref" "$removed"
    case $verdict in
      complete) complete=$((complete + 1)); [[ -z "$total" ]] && total=$n ;;
      error)
        errors=$((errors + 1))
        [[ -n "$total" ]] && fail "$card: removal after $n failed although removal after $total gave the complete output"
        ;;
    esac
    # The card put back (SIGUSR1): the next command on the same reader works.
    kill -USR1 "$pn532_pid"
    sleep 0.05
    expect_complete "$card, removed after $n: the next command once the card is back" "$work/$card.ref" history --device "$dev"
    stop_pn532
    [[ -n "$total" && $n -ge $((total + 1)) ]] && break
  done
  if [[ -z "$total" ]]; then
    fail "$card: no removal point gave the complete output"
  else
    note "$card: $((complete + errors)) runs (removal after 0..$n): $errors clear errors, $complete complete; a history read takes $total card exchanges"
  fi
  eval "libnfc_total_$card=${total:-0}"
done

echo "-- libnfc: a late, garbled or unacknowledged reply at each exchange in turn" >&2
for card in wallet suica; do
  eval "total=\$libnfc_total_$card"
  exchanges=$(seq 1 "$total")
  [[ $card == suica ]] && exchanges="1 $total"  # sampled: the first Polling and the last read
  for fault in corrupt drop-ack late; do
    complete=0 errors=0
    for n in $exchanges; do
      spec="$fault@$n"
      [[ $fault == late ]] && spec="$fault@$n:400"
      start_pn532 "$work/pty" --card "$card" --fault "$spec" || break
      run 20 history --device "$dev"
      judge "$card, $spec" "$work/$card.ref" "reader|card"
      [[ $verdict == complete ]] && complete=$((complete + 1))
      [[ $verdict == error ]] && errors=$((errors + 1))
      expect_complete "$card, $spec: the next command" "$work/$card.ref" history --device "$dev"
      stop_pn532
    done
    note "$card, $fault at exchanges $(echo $exchanges | tr ' ' ','): $complete complete (the session polled or read again), $errors clear errors"
  done
done

echo "-- libnfc: the reader goes away mid-command" >&2
# The reply to exchange N is held back 3 s, so the command is still running when the
# emulator goes: SIGTERM (the pty closes, the link goes: unplugged) or SIGKILL.
for how in TERM KILL; do
  for n in 1 3; do
    start_pn532 "$work/pty" --card wallet --fault "late@$n:3000" || break
    start=$(now_ms)
    timeout -k 2 20 "$felica" history --device "$dev" >"$work/out" 2>"$work/err" &
    bg_pid=$!
    sleep 0.15
    kill -"$how" "$pn532_pid"
    wait "$pn532_pid" 2>/dev/null
    pn532_pid=""
    wait "$bg_pid"
    rc=$?
    bg_pid=""
    elapsed=$(($(now_ms) - start))
    judge "wallet, emulator killed (SIG$how) while exchange $n waits" "$work/wallet.ref" "reader|does not exist"
    [[ $verdict == error ]] && note "reader gone (SIG$how) during exchange $n: exit $rc in ${elapsed} ms: $(head -n 1 "$work/err")"
    [[ $verdict == complete ]] && fail "reader gone (SIG$how) during exchange $n: the command completed, so the fault missed it"
    # Plugged back in (a new emulator at the same path).
    start_pn532 "$work/pty" --card wallet || break
    expect_complete "wallet, after the reader came back (SIG$how, exchange $n)" "$work/wallet.ref" history --device "$dev"
    stop_pn532
  done
done

echo "-- libnfc: dump --output FILE cut short: the previous file or a complete new one" >&2
"$felica" dump --json --device virtual:wallet >"$work/dump.ref" 2>/dev/null
previous='{"previous": "dump"}'
complete=0 errors=0 total=""
for n in $(seq 0 80); do
  echo "$previous" >"$work/card.json"
  rm -f "$work/card.json.partial"
  start_pn532 "$work/pty" --card wallet --remove-after "$n" || break
  run 20 dump --json --output "$work/card.json" --device "$dev"
  stop_pn532
  if ((rc == 124 || rc > 128)); then
    fail "dump, removed after $n: hung or crashed (exit $rc)"
  elif ((rc == 0)); then
    if cmp -s "$work/card.json" "$work/dump.ref" && [[ ! -e "$work/card.json.partial" ]]; then
      complete=$((complete + 1)); total=$n
    else
      fail "dump, removed after $n: exit 0 but the file is not the complete dump"
    fi
  elif [[ "$(cat "$work/card.json")" != "$previous" ]]; then
    fail "dump, removed after $n: exit $rc and the previous file was replaced: $(head -c 200 "$work/card.json")"
  elif ! grep -qiE "$removed|did not answer Polling" "$work/err"; then
    fail "dump, removed after $n: exit $rc without saying why: $(cat "$work/err")"
  elif [[ -e "$work/card.json.partial" ]] && ! grep -q '"partial"' "$work/card.json.partial"; then
    fail "dump, removed after $n: FILE.partial is not marked partial"
  else
    errors=$((errors + 1))
    pass "dump, removed after $n: previous file kept"
  fi
  [[ -n "$total" ]] && break
done
[[ -n "$total" ]] && note "dump --output: $((errors + complete)) runs (removal after 0..$total): previous file kept $errors times, complete file once" \
  || fail "dump --output: no removal point gave the complete dump"

# Killed (SIGKILL) at points through a dump that takes real-card time.
start_pn532 "$work/pty" --card wallet --timing rf || true
kept=0 replaced=0
for delay in 0.05 0.15 0.3 0.45 0.6 0.75 0.9 1.05 1.2 1.5 2.5; do
  echo "$previous" >"$work/card.json"
  # (Not under timeout: the kill must reach felica itself.)
  "$felica" dump --json --output "$work/card.json" --device "$dev" >/dev/null 2>&1 &
  bg_pid=$!
  sleep "$delay"
  kill -KILL "$bg_pid" 2>/dev/null
  wait "$bg_pid" 2>/dev/null
  bg_pid=""
  if [[ "$(cat "$work/card.json")" == "$previous" ]]; then
    kept=$((kept + 1)); pass "dump killed after ${delay}s: previous file"
  elif cmp -s "$work/card.json" "$work/dump.ref"; then
    replaced=$((replaced + 1)); pass "dump killed after ${delay}s: complete file"
  else
    fail "dump killed after ${delay}s: the file is neither the previous nor the complete one: $(head -c 200 "$work/card.json")"
  fi
  # The reader recovers from a host killed mid-exchange.
  expect_complete "dump killed after ${delay}s: the next command" "$work/wallet.ref" history --device "$dev"
done
stop_pn532
note "dump killed (SIGKILL) at 11 points: previous file $kept times, complete new file $replaced times, never anything else"

echo "-- libnfc: felica watch over card taps" >&2
# In the field for 8 packets (a whole wallet read), away for 3: every tap is printed whole.
start_pn532 "$work/pty" --card wallet --taps 8:3 || true
run 60 watch --json --count 200 --interval 0 --device "$dev"
lines=$(wc -l <"$work/out")
whole=$(grep -c '"transit-ic".*"edy".*"nanaco".*"waon"' "$work/out")
if ((rc == 0 && lines == 200 && whole == 200)); then
  note "watch: 200 taps, 200 complete cards in ${elapsed} ms"
  pass "watch over 200 taps"
else
  fail "watch over 200 taps: exit $rc, $lines cards printed, $whole complete: $(head -c 300 "$work/err")"
fi
stop_pn532
# Away after 4 packets: every tap leaves mid-read; nothing half-read may be printed, and
# no failed tap counts as a card, so --count 1 is never reached: watch goes on until
# stopped (SIGTERM after 6 s ends it cleanly), saying once per tap what failed.
start_pn532 "$work/pty" --card wallet --taps 4:3 || true
run 6 watch --json --count 1 --interval 0 --device "$dev"
left=$(grep -c "not read: it left the reader during the read; still watching" "$work/err")
again=$(grep -c "run the command again" "$work/err")
if ((rc == 124)) && [[ ! -s "$work/out" ]] && ((left >= 5 && again == 0)); then
  pass "watch over taps that each end mid-read"
  note "watch: $left taps that end mid-read in 6 s: none counted, nothing on stdout, one notice each on stderr"
else
  fail "watch over taps that end mid-read: exit $rc (expected 124, still watching), stdout $(wc -l <"$work/out") lines, $left notices, $again 'run the command again': $(head -c 300 "$work/err")"
fi
stop_pn532

# =================================== pcscd + vpcd ======================================

if ((pcsc_possible)); then
  start_card() {
    "$sim" vpcd "$@" 2>"$work/card.err" &
    card_pid=$!
  }
  stop_card() {
    [[ -n "$card_pid" ]] && kill "$card_pid" 2>/dev/null
    wait "$card_pid" 2>/dev/null
    card_pid=""
  }
  # A fresh card in the same pcscd: the next command works.
  next_command() {
    start_card --card "$1"
    expect_complete "$1, $2: the next command with a fresh card" "$work/$1.ref" history --device "pcsc?wait=5"
    stop_card
  }

  start_pcscd || exit 1
  echo "-- pcscd + vpcd: card removed (vpcd connection closed) after each exchange in turn" >&2
  for card in wallet suica; do
    complete=0 errors=0 total=""
    points=$(seq 0 40)
    [[ $card == suica ]] && points="1 3 40"  # sampled
    for n in $points; do
      start_card --card "$card" --remove-after "$n"
      run 20 history --device "pcsc?wait=2"
      judge "$card over PC/SC, removed after $n" "$work/$card.ref" "$removed"
      case $verdict in
        complete) complete=$((complete + 1)); [[ -z "$total" ]] && total=$n ;;
        error)
          errors=$((errors + 1))
          [[ -n "$total" ]] && fail "$card over PC/SC: removal after $n failed although removal after $total gave the complete output"
          ;;
      esac
      stop_card
      next_command "$card" "removed after $n"
      [[ -n "$total" ]] && break
    done
    if [[ -z "$total" ]]; then
      fail "$card over PC/SC: no removal point gave the complete output"
    else
      note "$card over PC/SC: $((complete + errors)) runs (removal after $(echo $points | sed 's/ .*//')..$n): $errors clear errors, $complete complete"
    fi
  done

  echo "-- pcscd + vpcd: a wedged card, and pcscd stopped mid-read" >&2
  start_card --card wallet --stall-after 4
  run 30 history --device "pcsc?wait=5"
  judge "wallet over PC/SC, card wedged after 4 exchanges" "$work/wallet.ref" "did not answer"
  [[ $verdict == error ]] && note "wedged card: exit $rc in ${elapsed} ms: $(head -n 1 "$work/err")"
  [[ $verdict == complete ]] && fail "wedged card: the command completed, so the stall missed it"
  stop_card
  next_command wallet "after a wedged card"

  start_card --card wallet --stall-after 4
  start=$(now_ms)
  timeout -k 2 20 "$felica" history --device "pcsc?wait=5" >"$work/out" 2>"$work/err" &
  bg_pid=$!
  # Wait until the card has stalled, i.e. felica is inside SCardTransmit, then stop pcscd.
  for _ in $(seq 500); do grep -q "stalled" "$work/card.err" && break; sleep 0.01; done
  grep -q "stalled" "$work/card.err" || fail "the vpcd card never stalled: $(cat "$work/card.err")"
  stop_pcscd
  wait "$bg_pid"
  rc=$?
  bg_pid=""
  elapsed=$(($(now_ms) - start))
  judge "wallet over PC/SC, pcscd stopped mid-read" "$work/wallet.ref" "PC/SC daemon|pcscd"
  [[ $verdict == error ]] && note "pcscd stopped mid-read: exit $rc in ${elapsed} ms: $(head -n 1 "$work/err")"
  stop_card
  run 20 history --device "pcsc?wait=1"
  judge "pcscd gone: the next command" "$work/wallet.ref" "no PC/SC daemon"
  start_pcscd || exit 1
  next_command wallet "after pcscd was restarted"
  stop_pcscd
fi

stage_end
