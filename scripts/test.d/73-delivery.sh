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
start_pn532 "$tmp/pn532-empty" --no-card
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

# ---- a slow server, a token and headers ---------------------------------------------------------
echo '{"delay": 0.7}' >"$tmp/c.control"
start_server c --record Authorization --record X-Kiosk
printf 'secret-token-123\n' >"$tmp/token"
start=$(now_ms)
"$felica" watch --json --count 4 --interval 0.05 --device "$dev" --post "http://127.0.0.1:$port/taps" --spool "$tmp/spool-c" \
  --post-token-file "$tmp/token" --post-header "X-Kiosk: desk 1" >"$tmp/c.out" 2>"$tmp/c.err"; st=$?
elapsed=$(($(now_ms) - start))
verdict=$(delivered c "$tmp/c.out")
headers=$(python3 -c 'import json,sys; print(sorted({json.dumps(json.loads(l)["headers"], sort_keys=True) for l in open(sys.argv[1])}))' "$tmp/c.log")
# The four cards are read while the first POSTs wait on the server; the watch then waits for the rest.
read_ms=$(python3 -c 'import json,sys; print(int(sum(json.loads(l)["elapsedMs"] for l in open(sys.argv[1]))))' "$tmp/c.out")
[[ $st -eq 0 && "$verdict" == ok* && "$headers" == *'"Authorization": "Bearer secret-token-123", "X-Kiosk": "desk 1"'* ]] \
  && pass "a server taking 0.7 s per POST: $verdict, the token and header sent ($elapsed ms in all, $read_ms ms reading cards)" \
  || fail "slow server: exit $st, $verdict, headers $headers: $(head -3 "$tmp/c.err")"
stop_server

# ---- HTTPS: a certificate that cannot be checked is refused, the reading kept ------------------
if openssl req -x509 -newkey rsa:2048 -nodes -keyout "$tmp/key.pem" -out "$tmp/cert.pem" -days 1 -subj /CN=127.0.0.1 \
     -addext subjectAltName=IP:127.0.0.1 >/dev/null 2>&1; then
  start_server d --cert "$tmp/cert.pem" --key "$tmp/key.pem"
  "$felica" watch --json --count 1 --device virtual:suica --post "https://127.0.0.1:$port/taps" --spool "$tmp/spool-d" \
    >"$tmp/d.out" 2>"$tmp/d.err"; st=$?
  kept=$(find "$tmp/spool-d" -name '*.msg' | wc -l)
  [[ $st -eq 0 && $kept -eq 1 && ! -s "$tmp/d.log" ]] && grep -q "certificate" "$tmp/d.err" \
    && pass "HTTPS to a self-signed server: refused on its certificate, the reading kept: $(grep -m1 certificate "$tmp/d.err")" \
    || fail "HTTPS self-signed: exit $st, $kept kept, log $(wc -c <"$tmp/d.log" 2>/dev/null): $(cat "$tmp/d.err")"
  stop_server
else
  fail "openssl could not make a certificate (scripts/bootstrap.sh installs openssl)"
fi

# ---- --exec -------------------------------------------------------------------------------------
export OUT="$tmp"
"$felica" watch --json --count 5 --interval 0.05 --device "$dev" \
  --exec 'cat >>"$OUT/exec.jsonl"; echo "$FELICA_EVENT $FELICA_IDM $FELICA_ID" >>"$OUT/exec.env"' \
  >"$tmp/e.out" 2>"$tmp/e.err" </dev/null; st=$?
check=$(python3 - "$tmp/e.out" "$tmp/exec.jsonl" "$tmp/exec.env" <<'PY'
import json, sys
out = [json.loads(l)["id"] for l in open(sys.argv[1])]
fed = [json.loads(l)["id"] for l in open(sys.argv[2])]
env = [l.split() for l in open(sys.argv[3])]
ok = out == fed == [e[2] for e in env] and all(e[0] == "card" and e[1] == "0101120312345678" for e in env) and len(out) == 5
print(("ok" if ok else "BAD") + f" {len(out)} readings, {len(fed)} runs with JSON, {len(env)} environments")
PY
)
[[ $st -eq 0 && "$check" == ok* ]] && pass "--exec ran once per reading, in order, JSON on stdin and FELICA_* set: $check" \
  || fail "--exec: exit $st, $check: $(cat "$tmp/e.err")"
start=$(now_ms)
"$felica" watch --json --count 3 --interval 0.05 --device "$dev" --exec 'exit 3' >"$tmp/f.out" 2>"$tmp/f.err"; st=$?
[[ $st -eq 0 && $(wc -l <"$tmp/f.out") -eq 3 && $(grep -c "exited with status 3" "$tmp/f.err") -eq 3 ]] \
  && pass "a failing --exec command is said for each card and watching goes on: $(grep -m1 "status 3" "$tmp/f.err")" \
  || fail "failing --exec: exit $st, $(wc -l <"$tmp/f.out") cards: $(cat "$tmp/f.err")"
start=$(now_ms)
"$felica" watch --json --count 3 --interval 0.05 --device "$dev" --exec 'sleep 30' --exec-timeout 0.5 >"$tmp/g.out" 2>"$tmp/g.err" &
watcher=$!
for _ in $(seq 200); do [[ $(wc -l <"$tmp/g.out") -ge 3 ]] && break; sleep 0.05; done
cards_ms=$(($(now_ms) - start))
wait $watcher; st=$?
total_ms=$(($(now_ms) - start))
[[ $st -eq 0 && $(wc -l <"$tmp/g.out") -eq 3 && $cards_ms -lt 5000 && $(grep -c "ran longer than 0.5 seconds and was ended" "$tmp/g.err") -eq 3 ]] \
  && ! pgrep -f "sleep 30" >/dev/null \
  && pass "a slow --exec command (sleep 30, limit 0.5 s) is ended and said each time; the 3 cards were read in $cards_ms ms, all done in $total_ms ms" \
  || fail "slow --exec: exit $st, $(wc -l <"$tmp/g.out") cards in $cards_ms ms: $(cat "$tmp/g.err")"
unset OUT

# ---- MQTT: a real mosquitto broker ------------------------------------------------------------------
mqport=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
mkdir -p "$tmp/mq"
printf 'listener %s 127.0.0.1\nallow_anonymous true\npersistence true\npersistence_location %s/\n' "$mqport" "$tmp/mq" >"$tmp/mq/mosquitto.conf"
start_broker() {
  mosquitto -c "$tmp/mq/mosquitto.conf" >>"$tmp/mq/broker.log" 2>&1 &
  broker_pid=$!
  for _ in $(seq 100); do mosquitto_pub -h 127.0.0.1 -p "$mqport" -t probe -n 2>/dev/null && return 0; sleep 0.05; done
  fail "mosquitto did not start: $(tail -3 "$tmp/mq/broker.log")"
}
stop_broker() { kill "$broker_pid" 2>/dev/null; wait "$broker_pid" 2>/dev/null; broker_pid=""; }
status() { mosquitto_sub -h 127.0.0.1 -p "$mqport" -t felica/taps/status -C 1 -W 3 2>/dev/null; }
# mqtt_delivered OUT: the ids of OUT's readings against those the subscriber got, each once, in order.
mqtt_delivered() {
  python3 - "$1" "$tmp/mq/sub.out" <<'PY'
import json, sys
ids = [json.loads(l)["id"] for l in open(sys.argv[1]) if '"id"' in l]
got = [json.loads(l)["id"] for l in open(sys.argv[2]) if l.strip()]
ok = got == ids and len(set(got)) == len(got) and len(ids) > 0
print(("ok" if ok else "BAD") + f" {len(ids)} readings, {len(got)} received, {len(set(got))} distinct ids")
PY
}
if command -v mosquitto >/dev/null && command -v mosquitto_sub >/dev/null; then
  start_broker
  # A subscriber with a session the broker keeps (QoS 1, fixed id, no clean start): it
  # misses nothing published while it reconnects.
  mosquitto_sub -h 127.0.0.1 -p "$mqport" -t felica/taps -q 1 -c -i felica-test-sub >"$tmp/mq/sub.out" 2>"$tmp/mq/sub.err" &
  sub_pid=$!
  sleep 0.5
  "$felica" watch --json --count 5 --interval 0.05 --device "$dev" --mqtt "mqtt://127.0.0.1:$mqport/felica/taps" --spool "$tmp/spool-m" \
    >"$tmp/m.out" 2>"$tmp/m.err"; st=$?
  sleep 0.3
  verdict=$(mqtt_delivered "$tmp/m.out")
  [[ $st -eq 0 && "$verdict" == ok* && "$(status)" == offline ]] \
    && pass "5 readings published to a real broker: $verdict; status offline (retained) after the watch ended" \
    || fail "mqtt: exit $st, $verdict, status $(status): $(cat "$tmp/m.err")"

  # The broker restarted while the watch runs: the readings of the outage are delivered after.
  : >"$tmp/m2.out"
  "$felica" watch --json --interval 0.05 --device "$dev" --mqtt "mqtt://127.0.0.1:$mqport/felica/taps" --spool "$tmp/spool-m" \
    >"$tmp/m2.out" 2>"$tmp/m2.err" &
  watcher=$!
  for _ in $(seq 200); do [[ $(wc -l <"$tmp/m2.out") -ge 3 ]] && break; sleep 0.05; done
  online=$(status)
  stop_broker
  n=$(wc -l <"$tmp/m2.out")
  # Down for 3 s at least, longer than the watch waits for a connection to come back.
  sleep 3
  for _ in $(seq 200); do [[ $(wc -l <"$tmp/m2.out") -ge $((n + 4)) ]] && break; sleep 0.05; done
  start_broker
  for _ in $(seq 300); do [[ $(wc -l <"$tmp/mq/sub.out") -ge $((5 + $(grep -c '"id"' "$tmp/m2.out"))) ]] && break; sleep 0.05; done
  kill -TERM $watcher; wait $watcher 2>/dev/null
  sleep 0.3
  cat "$tmp/m.out" "$tmp/m2.out" >"$tmp/m-all.out"
  verdict=$(mqtt_delivered "$tmp/m-all.out")
  [[ "$online" == online && "$verdict" == ok* ]] && grep -q "not delivered" "$tmp/m2.err" \
    && pass "broker restarted mid-watch (status was $online): $verdict, the outage said on stderr" \
    || fail "broker restart: status $online, $verdict: $(cat "$tmp/m2.err")"

  # SIGKILL: the broker publishes the last will.
  "$felica" watch --json --interval 0.05 --device "$dev" --mqtt "mqtt://127.0.0.1:$mqport/felica/taps" --spool "$tmp/spool-m" \
    >"$tmp/m3.out" 2>"$tmp/m3.err" &
  watcher=$!
  for _ in $(seq 200); do [[ $(wc -l <"$tmp/m3.out") -ge 1 ]] && break; sleep 0.05; done
  online=$(status)
  kill -KILL $watcher; wait $watcher 2>/dev/null
  sleep 0.5
  [[ "$online" == online && "$(status)" == offline ]] \
    && pass "status online while watching, offline (the last will) once the watch was SIGKILLed" \
    || fail "last will: while watching $online, after SIGKILL $(status)"
  # The reader lost: readerLost on the status topic until it is back.
  "$felica" watch --json --interval 0.05 --device "$dev" --mqtt "mqtt://127.0.0.1:$mqport/felica/taps" --spool "$tmp/spool-m" \
    >"$tmp/m4.out" 2>"$tmp/m4.err" &
  watcher=$!
  for _ in $(seq 200); do [[ $(wc -l <"$tmp/m4.out") -ge 1 ]] && break; sleep 0.05; done
  stop_pn532
  for _ in $(seq 200); do grep -q readerLost "$tmp/m4.out" && break; sleep 0.05; done
  sleep 0.3
  lost=$(status)
  start_pn532 "$tmp/pn532" --card suica --taps 6:3
  for _ in $(seq 200); do grep -q readerBack "$tmp/m4.out" && break; sleep 0.05; done
  sleep 0.3
  back=$(status)
  kill -TERM $watcher; wait $watcher 2>/dev/null
  [[ "$lost" == readerLost && "$back" == online ]] \
    && pass "the reader unplugged: status readerLost, online again once it is back" \
    || fail "reader loss on the status topic: $lost, then $back: $(cat "$tmp/m4.err")"
  kill "$sub_pid" 2>/dev/null; wait "$sub_pid" 2>/dev/null; sub_pid=""
  stop_broker
else
  fail "mosquitto and mosquitto_sub are missing (scripts/bootstrap.sh installs them)"
fi

# ---- --ignore-repeat ------------------------------------------------------------------------------
# The emulated card goes in and out of the field (6 packets in, 3 out) for 8 s: a hand that
# hesitates over the reader. Without --ignore-repeat each return is a reading.
timeout -s INT 8 "$felica" watch --json --interval 0.05 --device "$dev" --ignore-repeat 60 -v >"$tmp/h.out" 2>"$tmp/h.err"
ignored=$(grep -c "not reported (--ignore-repeat)" "$tmp/h.err")
timeout -s INT 3 "$felica" watch --json --interval 0.05 --device "$dev" >"$tmp/h2.out" 2>/dev/null
[[ $(wc -l <"$tmp/h.out") -eq 1 && $ignored -ge 2 && $(wc -l <"$tmp/h2.out") -ge 2 ]] \
  && pass "the same card for 8 s with --ignore-repeat 60: one reading, $ignored repeats said with -v (without it: $(wc -l <"$tmp/h2.out") readings in 3 s)" \
  || fail "--ignore-repeat: $(wc -l <"$tmp/h.out") readings, $ignored said, $(wc -l <"$tmp/h2.out") without: $(tail -3 "$tmp/h.err")"
# ---- libcurl and libmosquitto are loaded at first use, not linked: without them, a clear error ----
# FELICA_TEST_LIBCURL / FELICA_TEST_LIBMOSQUITTO name the file the loader looks for instead of
# libcurl.so.4 / libmosquitto.so.1: a real dlopen of a library this machine does not have.
needed=$(readelf -d "$felica" | grep NEEDED)
if [[ $needed == *libcurl* || $needed == *libmosquitto* ]]; then
  fail "felica links libcurl or libmosquitto (DT_NEEDED), so every start pays for them: $needed"
else
  pass "felica links neither libcurl nor libmosquitto (not in DT_NEEDED)"
fi
out=$(FELICA_TEST_LIBCURL=libcurl-absent.so.4 timeout 10 "$felica" watch --json --count 1 --device virtual:suica \
  --post "http://127.0.0.1:9/taps" --spool "$tmp/spool-nocurl" 2>&1); st=$?
[[ $st -ne 0 && $out == *"libcurl-absent.so.4"* && $out == *"install the libcurl4 package"* && ! -e "$tmp/spool-nocurl" ]] \
  && pass "without libcurl, --post says which library and which package: $(head -1 <<<"$out" | head -c 200)" \
  || fail "without libcurl: exit $st: $out"
out=$(FELICA_TEST_LIBMOSQUITTO=libmosquitto-absent.so.1 timeout 10 "$felica" watch --json --count 1 --device virtual:suica \
  --mqtt "mqtt://127.0.0.1:9/felica" --spool "$tmp/spool-nomosq" 2>&1); st=$?
[[ $st -ne 0 && $out == *"libmosquitto-absent.so.1"* && $out == *"install the libmosquitto1 package"* ]] \
  && pass "without libmosquitto, --mqtt says which library and which package: $(head -1 <<<"$out" | head -c 200)" \
  || fail "without libmosquitto: exit $st: $out"

stop_pn532

# ---- no reader yet --------------------------------------------------------------------------------
"$felica" watch --json --count 1 --device "libnfc:pn532_uart:$tmp/later" >"$tmp/i.out" 2>"$tmp/i.err" &
watcher=$!
sleep 2
if kill -0 $watcher 2>/dev/null; then
  start_pn532 "$tmp/later" --card suica
  for _ in $(seq 200); do kill -0 $watcher 2>/dev/null || break; sleep 0.05; done
fi
kill $watcher 2>/dev/null; wait $watcher; st=$?
[[ $st -eq 0 && $(wc -l <"$tmp/i.out") -eq 1 && $(grep -c "waiting for one" "$tmp/i.err") -eq 1 ]] \
  && pass "watch with no reader waits (said once), and reads once the reader is there: $(head -c 100 "$tmp/i.err")" \
  || fail "watch with no reader: exit $st, $(wc -l <"$tmp/i.out") cards: $(cat "$tmp/i.err")"
stop_pn532
out=$(timeout 10 "$felica" watch --device "libnfc:pn532_uart:$tmp/never" --exit-on-reader-loss 2>&1); st=$?
[[ $st -eq 69 ]] && pass "with --exit-on-reader-loss, no reader is exit 69 at once" || fail "--exit-on-reader-loss, no reader: exit $st: $out"

stage_end
