#!/usr/bin/env bash
# Where a kiosk sends its taps, through the real binary, libnfc and the PN532 emulator:
# `watch --post` to a real HTTP server on 127.0.0.1 (Python's http.server, our handler in
# scripts/kiosk/receiver.py) through its faults — 503 for the first seconds, down while
# the watch is SIGKILLed and started again, slow — with every reading arriving once by its
# id and in order; HTTPS refused on a certificate it cannot check; `--mqtt` to a real
# mosquitto broker (QoS 1, the retained status, the last will, the broker restarted);
# `--exec` once per reading, a failing and a slow command reported without stalling the
# watch; `--ignore-repeat`; and a watch started with no reader waiting for one.
source "$(dirname "$0")/lib.sh"
stage_workdir
tmp="$work"
receiver="scripts/kiosk/receiver.py"
server_pid=""
broker_pid=""
sub_pid=""
cleanup() {
  for p in $server_pid $broker_pid $sub_pid; do kill "$p" 2>/dev/null; done
}

# start_server NAME [receiver options]: the receiver, port in $port, pid in $server_pid.
start_server() {
  local name=$1
  shift
  rm -f "$tmp/$name.port"
  python3 "$receiver" --portfile "$tmp/$name.port" --log "$tmp/$name.log" --control "$tmp/$name.control" "$@" 2>>"$tmp/$name.err" &
  server_pid=$!
  for _ in $(seq 200); do [[ -s "$tmp/$name.port" ]] && break; sleep 0.025; done
  port=$(cat "$tmp/$name.port" 2>/dev/null)
  [[ -n "$port" ]] || fail "the receiver $name did not start: $(cat "$tmp/$name.err")"
}
stop_server() { [[ -n "$server_pid" ]] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null; server_pid=""; }

# delivered NAME OUT: checks that the ids of the JSON lines of OUT (a watch's stdout) were
# each accepted (2xx) by the receiver NAME exactly once, in the same order; prints a summary.
delivered() {
  python3 - "$tmp/$1.log" "$2" <<'PY'
import json, sys
log = [json.loads(l) for l in open(sys.argv[1])] if __import__("os").path.exists(sys.argv[1]) else []
ids = [json.loads(l)["id"] for l in open(sys.argv[2]) if l.strip() and "id" in json.loads(l)]
accepted = [e["id"] for e in log if e["status"] < 300]
refused = sum(1 for e in log if e["status"] >= 300)
ok = accepted == ids and len(set(ids)) == len(ids) and len(ids) > 0
print(("ok" if ok else "BAD") + f" {len(ids)} readings, {len(accepted)} accepted, {len(set(accepted))} distinct ids, {refused} refused")
PY
}

start_pn532 "$tmp/pn532" --card suica --taps 6:3 || { stage_end; }
dev="libnfc:pn532_uart:$tmp/pn532"

# ---- 503 for the first seconds ---------------------------------------------------------------
echo "{\"fail_until\": $(python3 -c 'import time; print(time.time() + 3)')}" >"$tmp/a.control"
start_server a
"$felica" watch --json --count 12 --interval 0.05 --device "$dev" --post "http://127.0.0.1:$port/taps" --spool "$tmp/spool-a" \
  >"$tmp/a.out" 2>"$tmp/a.err"; st=$?
verdict=$(delivered a "$tmp/a.out")
[[ $st -eq 0 && "$verdict" == ok* && "$verdict" != *" 0 refused" ]] && grep -q "HTTP 503" "$tmp/a.err" \
  && pass "12 readings posted while the server answered 503 for 3 s: $verdict" \
  || fail "503 at first: exit $st, $verdict: $(head -5 "$tmp/a.err")"
left=$(find "$tmp/spool-a" -name '*.msg' | wc -l)
[[ $left -eq 0 ]] && pass "the spool is empty once everything is acknowledged" || fail "$left messages left in the spool"
stop_server

# ---- the watch SIGKILLed while the server is down ----------------------------------------------
# Nothing listens on the port: the readings stay in the spool, on disk, private.
start_server b; stop_server
"$felica" watch --json --interval 0.05 --device "$dev" --post "http://127.0.0.1:$port/taps" --spool "$tmp/spool-b" \
  >"$tmp/b.out" 2>"$tmp/b.err" &
watcher=$!
for _ in $(seq 400); do [[ $(wc -l <"$tmp/b.out") -ge 5 ]] && break; sleep 0.05; done
kill -KILL $watcher; wait $watcher 2>/dev/null
spooled=$(find "$tmp/spool-b/http" -name '*.msg' | wc -l)
modes=$(stat -c %a "$tmp/spool-b" "$tmp/spool-b/http" $(find "$tmp/spool-b/http" -name '*.msg') | sort -u | tr '\n' ' ')
[[ $spooled -eq $(wc -l <"$tmp/b.out") && $spooled -ge 5 && "$modes" == "600 700 " ]] \
  && pass "watch SIGKILLed with the server down: its $spooled readings are in the spool (modes $modes)" \
  || fail "after SIGKILL: $spooled spooled for $(wc -l <"$tmp/b.out") printed, modes $modes"
# The server comes back; a new watch (on an empty reader) delivers them.
stop_pn532
start_pn532 "$tmp/pn532-empty"
start_server b --port "$port"
"$felica" watch --json --device "libnfc:pn532_uart:$tmp/pn532-empty" --post "http://127.0.0.1:$port/taps" --spool "$tmp/spool-b" \
  >"$tmp/b2.out" 2>"$tmp/b2.err" &
watcher=$!
for _ in $(seq 300); do [[ $(grep -c '"status": 200' "$tmp/b.log" 2>/dev/null) -ge $spooled ]] && break; sleep 0.05; done
kill -TERM $watcher; wait $watcher 2>/dev/null
verdict=$(delivered b "$tmp/b.out")
[[ "$verdict" == ok* ]] && grep -q "left by an earlier watch" "$tmp/b2.err" \
  && pass "the next watch delivered what the killed one left: $verdict" \
  || fail "after restart: $verdict: $(cat "$tmp/b2.err")"
stop_server
stop_pn532
start_pn532 "$tmp/pn532" --card suica --taps 6:3

stage_end
