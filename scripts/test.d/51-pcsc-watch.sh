#!/usr/bin/env bash
# `felica watch` on a PC/SC reader, and `--trace` of a reader that will not forward
# Polling, through the real pcscd with vpcd (as 50-pcsc, in a private namespace).
#
# watch: started with no card on the reader, it must keep waiting (not fail after the
# usual 3 s card wait), read a card placed on the reader, and after that card is taken
# away read the next one — including on a reader that reports the card itself (Get Data)
# instead of forwarding Polling. trace: a balance read through such a reader, recorded,
# must replay to the same output. pcscd stopped and started again under a watch: the
# reader is opened again and the next card read (--exit-on-reader-loss: the watch ends).
source "$(dirname "$0")/lib.sh"
pcsc_namespace

stage_workdir
watch_pid=""
cleanup() {
  [[ -n "$watch_pid" ]] && kill "$watch_pid" 2>/dev/null
  [[ -n "$sim_pid" ]] && kill "$sim_pid" 2>/dev/null
  [[ -n "$pcscd_pid" ]] && kill "$pcscd_pid" 2>/dev/null
}
start_card() { vpcd_card "$@"; }
stop_card() { vpcd_card_stop; }

# wait_lines FILE N SECONDS: until FILE has N lines; fails after SECONDS.
wait_lines() {
  local file=$1 n=$2 seconds=$3 i
  for i in $(seq $((seconds * 10))); do
    (($(wc -l <"$file") >= n)) && return 0
    sleep 0.1
  done
  return 1
}

# The reference lines: what watch prints for each card through the virtual device, less
# the timing.
strip_elapsed() { sed -E 's/,"elapsedMs":[0-9.]+//'; }
# A reader refusing Request System Code leaves the other systems unprobed and unlisted.
strip_not_probed() { sed -E 's/,"notProbed":\[[^]]*\]//'; }
for card in suica edy; do
  "$felica" watch --device "virtual:$card" --count 1 --json 2>/dev/null | strip_elapsed >"$work/virtual.$card"
done

start_pcscd || stage_end

# watch_two NAME [felica-sim vpcd options]: watch starts with no card, waits past the
# usual card wait, reads a suica, then (the suica taken away) an edy, and ends (--count 2).
watch_two() {
  local name=$1
  shift
  echo "-- watch, two cards one after another ($name)" >&2
  : >"$work/watch.out"
  timeout 40 "$felica" watch --device pcsc --count 2 --json "${watch_opts[@]}" >"$work/watch.out" 2>"$work/watch.err" &
  watch_pid=$!
  sleep 4
  if ! kill -0 "$watch_pid" 2>/dev/null; then
    wait "$watch_pid"
    fail "$name: watch ended with no card on the reader (exit $?): $(cat "$work/watch.err")"
    watch_pid=""
    return
  fi
  start_card suica "$@"
  if ! wait_lines "$work/watch.out" 1 15; then
    fail "$name: no reading of the first card: $(cat "$work/watch.err")"
    stop_card
    return
  fi
  stop_card
  # A person takes a moment to swap cards; pcscd looks at vpcd's reader every 400 ms.
  sleep 1
  start_card edy "$@"
  local rc=0
  wait "$watch_pid" || rc=$?
  watch_pid=""
  stop_card
  if ((rc != 0)); then
    fail "$name: watch exit $rc: $(cat "$work/watch.err")"
  elif ! diff -u <(cat "$work/virtual.suica" "$work/virtual.edy" | $filter) <(strip_elapsed <"$work/watch.out" | $filter) >"$work/diff"; then
    fail "$name: the readings differ from the virtual cards':"
    cat "$work/diff" >&2
  else
    pass "$name: both cards read, as through the virtual device"
  fi
}

watch_opts=()
filter=cat
watch_two "part3" --dialect part3
# The reader neither forwards Polling nor Request Response: the card is the one the reader
# reports, and its leaving is seen through Get Data.
watch_opts=(--dialect sony)
filter=strip_not_probed
watch_two "reader refusing Polling and Request Response" --dialect sony --refuse polling,request-response,request-system-code

echo "-- watch, a card that leaves in the middle of its read, then a whole one" >&2
timeout 40 "$felica" watch --device pcsc --count 1 --json >"$work/watch.out" 2>"$work/watch.err" &
watch_pid=$!
start_card suica --dialect part3 --remove-after 2
wait "$sim_pid" 2>/dev/null
sim_pid=""
sleep 1
start_card edy --dialect part3
rc=0
wait "$watch_pid" || rc=$?
watch_pid=""
stop_card
if ((rc != 0)); then
  fail "watch after a card left mid-read: exit $rc: $(cat "$work/watch.err")"
elif ! grep -q "card 0101120312345678 not read: it left the reader during the read; still watching" "$work/watch.err"; then
  fail "watch does not say the first card left mid-read: $(cat "$work/watch.err")"
elif ! diff -u "$work/virtual.edy" <(strip_elapsed <"$work/watch.out") >"$work/diff"; then
  fail "watch after a card left mid-read: the reading differs:"; cat "$work/diff" >&2
else
  pass "a card leaving mid-read is reported and not counted; the next card is read"
fi

echo "-- watch with no card at all" >&2
timeout 40 "$felica" watch --device pcsc >"$work/watch.out" 2>"$work/watch.err" &
watch_pid=$!
sleep 5
if ! kill -0 "$watch_pid" 2>/dev/null; then
  wait "$watch_pid"
  fail "watch with no card ended by itself (exit $?): $(cat "$work/watch.err")"
else
  kill -INT "$watch_pid"
  rc=0
  wait "$watch_pid" || rc=$?
  if ((rc != 130)); then
    fail "watch with no card: exit $rc after Ctrl-C (expected 130, as every command): $(cat "$work/watch.err")"
  else
    pass "watch with no card keeps waiting, and Ctrl-C ends it (exit 130, as every command)"
  fi
fi
watch_pid=""

echo "-- watch while pcscd is stopped and started again" >&2
# The daemon goes away under a watch that has read a card: watch says the reader is gone
# (once), opens it again when pcscd is back, says so (once) and reads the next card.
timeout 40 "$felica" watch --device pcsc --count 2 --json >"$work/loss.out" 2>"$work/loss.err" &
watch_pid=$!
start_card suica --dialect part3
wait_lines "$work/loss.out" 1 15 || fail "pcscd restart: no first reading: $(cat "$work/loss.err")"
stop_card
stop_pcscd
sleep 2
start_pcscd || stage_end
start_card suica --dialect part3
rc=0
wait "$watch_pid" || rc=$?
watch_pid=""
stop_card
if ((rc != 0)); then
  fail "watch across a pcscd restart: exit $rc: $(cat "$work/loss.err")"
else
  reader_loss_watched "pcscd stopped and started again" pcsc "$work/loss.out" "$work/loss.err" 2
fi
# --exit-on-reader-loss: the daemon's going ends watch with its error, exit 1.
timeout 40 "$felica" watch --device pcsc --json --exit-on-reader-loss >"$work/lossx.out" 2>"$work/lossx.err" &
watch_pid=$!
start_card suica --dialect part3
wait_lines "$work/lossx.out" 1 15 || fail "--exit-on-reader-loss: no first reading: $(cat "$work/lossx.err")"
stop_card
stop_pcscd
rc=0
wait "$watch_pid" || rc=$?
watch_pid=""
if ((rc == 1)) && grep -q "no PC/SC daemon is running" "$work/lossx.err" && ! grep -q "is gone" "$work/lossx.err"; then
  pass "watch --exit-on-reader-loss ends with the daemon's error (exit 1) when pcscd stops"
else
  fail "watch --exit-on-reader-loss with pcscd stopping: exit $rc: $(cat "$work/lossx.err")"
fi
start_pcscd || stage_end

echo "-- balance with no card still fails after its wait" >&2
rc=0
timeout 30 "$felica" balance --device pcsc --wait 1 >/dev/null 2>"$work/err" || rc=$?
if ((rc == 69)) && grep -q "no FeliCa card.*place a card on the reader" "$work/err"; then
  pass "balance with no card: exit 69, $(head -n 1 "$work/err")"
else
  fail "balance with no card: exit $rc: $(cat "$work/err")"
fi

echo "-- trace of a reader refusing Polling, replayed" >&2
start_card suica --dialect sony --refuse polling,request-system-code
rc=0
timeout 30 "$felica" balance --device pcsc --dialect sony --trace "$work/refusing.jsonl" >"$work/pcsc.out" 2>"$work/pcsc.err" || rc=$?
stop_card
if ((rc != 0)); then
  fail "balance through the refusing reader: exit $rc: $(cat "$work/pcsc.err")"
else
  rc=0
  timeout 30 "$felica" balance --device "replay:$work/refusing.jsonl" >"$work/replay.out" 2>"$work/replay.err" || rc=$?
  if ((rc != 0)); then
    fail "replay of the refusing reader's trace: exit $rc: $(cat "$work/replay.err")"
  elif ! diff -u "$work/pcsc.out" "$work/replay.out" >"$work/diff"; then
    fail "replay of the refusing reader's trace differs:"; cat "$work/diff" >&2
  else
    pass "a trace of a reader refusing Polling replays to the same balance"
  fi
  if timeout 30 "$felica" trace show "$work/refusing.jsonl" >"$work/show" 2>&1 && grep -q "reader reports IDm 0101120312345678" "$work/show"; then
    pass "trace show lists the identity the reader reported"
  else
    fail "trace show: $(cat "$work/show")"
  fi
  if timeout 30 "$felica" trace export --pcap "$work/refusing.pcap" "$work/refusing.jsonl" 2>"$work/err"; then
    pass "the trace exports to pcap"
  else
    fail "trace export: $(cat "$work/err")"
  fi
fi

stop_pcscd
if ((failures > 0)); then
  echo "51-pcsc-watch: pcscd's log ends:" >&2
  tail -n 40 "$work/pcscd.log" >&2
fi
stage_end
