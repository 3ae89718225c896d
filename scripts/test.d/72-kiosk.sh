#!/usr/bin/env bash
# What a desk that runs `felica watch --save` for weeks needs, through the real binary and
# real SQLite: files private under umask 022 (database, -wal, -shm, directories, dumps,
# traces, captures; a rewrite keeps the file's mode); another program's SQLite file and a
# newer felica's refused byte for byte unchanged; log show/export on a path with no
# database create nothing; a write lock held by another process (Python's sqlite3) makes
# `log add` fail plainly and `watch --save` keep the reading and save it later; and a
# long watch through libnfc and the PN532 emulator with RSS and WAL flat.
source "$(dirname "$0")/lib.sh"
unset FELICA_TEST_SAVE_STOP FELICA_TEST_SAVE_PAUSE FELICA_TEST_BUSY_TIMEOUT_MS

stage_workdir
tmp="$work"
umask 022

mode() { stat -c %a "$1"; }
digest() { sha256sum "$1" | cut -d' ' -f1; }

# ---- private files ------------------------------------------------------------------------
db="$tmp/new/dir/history.sqlite3"
FELICA_TEST_SAVE_PAUSE=3:1500 "$felica" log add --device virtual:suica --db "$db" >"$tmp/add.out" 2>&1 &
adder=$!
for _ in $(seq 100); do [[ -e "$db-wal" && -e "$db-shm" ]] && break; sleep 0.05; done
modes="$(mode "$tmp/new") $(mode "$tmp/new/dir") $(mode "$db") $(mode "$db-wal" 2>/dev/null) $(mode "$db-shm" 2>/dev/null)"
wait $adder
[[ "$modes" == "700 700 600 600 600" ]] \
  && pass "under umask 022: new directories 0700, the database and its -wal and -shm 0600 ($modes)" \
  || fail "modes of the directories, database, -wal, -shm: $modes (expected 700 700 600 600 600): $(cat "$tmp/add.out")"

# A umask that would take the owner's own write bit away: still 0700 and 0600.
(umask 277; FELICA_TEST_SAVE_PAUSE=3:1500 "$felica" log add --device virtual:suica --db "$tmp/strict/h.sqlite3" >"$tmp/strict.out" 2>&1) &
adder=$!
for _ in $(seq 100); do [[ -e "$tmp/strict/h.sqlite3-wal" && -e "$tmp/strict/h.sqlite3-shm" ]] && break; sleep 0.05; done
modes="$(mode "$tmp/strict") $(mode "$tmp/strict/h.sqlite3") $(mode "$tmp/strict/h.sqlite3-wal" 2>/dev/null) $(mode "$tmp/strict/h.sqlite3-shm" 2>/dev/null)"
wait $adder; st=$?
[[ $st -eq 0 && "$modes" == "700 600 600 600" ]] && pass "under umask 277 too: 0700 and 0600 ($modes)" \
  || fail "under umask 277: exit $st, modes $modes (expected 700 600 600 600): $(cat "$tmp/strict.out")"

# write_outputs: a dump, a trace and a capture of it; their modes.
write_outputs() {
  "$felica" dump --json --device virtual:suica --output "$tmp/dump.json" >/dev/null 2>&1 || fail "dump --output"
  "$felica" balance --device virtual:suica --trace "$tmp/trace.jsonl" >/dev/null 2>&1 || fail "balance --trace"
  "$felica" trace export --pcap "$tmp/trace.pcapng" "$tmp/trace.jsonl" >/dev/null 2>&1 || fail "trace export --pcap"
  echo "$(mode "$tmp/dump.json") $(mode "$tmp/trace.jsonl") $(mode "$tmp/trace.pcapng")"
}
modes="$(write_outputs)"
[[ "$modes" == "600 600 600" ]] && pass "dump --output, --trace and trace export --pcap create 0600 files ($modes)" \
  || fail "modes of dump, trace, capture: $modes (expected 600 600 600)"
chmod 640 "$tmp/dump.json" "$tmp/trace.jsonl" "$tmp/trace.pcapng"
modes="$(write_outputs)"
[[ "$modes" == "640 640 640" ]] && pass "a rewritten dump, trace and capture keep the mode their owner gave them ($modes)" \
  || fail "modes after rewriting 0640 files: $modes (expected 640 640 640)"

# ---- another program's database, a newer felica's -------------------------------------------
python3 - "$tmp/places.sqlite" "$tmp/rollback.sqlite" "$tmp/newer.sqlite3" "$tmp/clash.sqlite" <<'EOF'
import sqlite3, sys
places, rollback, newer, clash = sys.argv[1:]
# A browser's history: WAL mode, its own schema version, its own tables.
c = sqlite3.connect(places)
c.execute("PRAGMA journal_mode=WAL"); c.execute("PRAGMA user_version=74")
c.execute("CREATE TABLE moz_places(id INTEGER PRIMARY KEY, url TEXT)")
c.execute("INSERT INTO moz_places(url) VALUES('https://example.org/')"); c.commit(); c.close()
# Another program's file in the default rollback-journal mode, no schema version.
c = sqlite3.connect(rollback)
c.execute("CREATE TABLE notes(body TEXT)"); c.execute("INSERT INTO notes VALUES('hello')"); c.commit(); c.close()
# A felica history of a newer schema, in rollback-journal mode: a WAL switch would show.
c = sqlite3.connect(newer)
c.execute("PRAGMA application_id=1181043817"); c.execute("PRAGMA user_version=3")
c.execute("CREATE TABLE records(card TEXT)"); c.execute("CREATE TABLE readings(id INTEGER)"); c.commit(); c.close()
# A table of ours among others': not ours either.
c = sqlite3.connect(clash)
c.execute("CREATE TABLE readings(meter TEXT, value REAL)"); c.commit(); c.close()
EOF
for f in places.sqlite rollback.sqlite newer.sqlite3 clash.sqlite; do
  path="$tmp/$f"
  before="$(digest "$path")"
  for cmd in "log add --device virtual:suica" "log show" "log export --csv" "watch --save --count 1 --device virtual:suica"; do
    # shellcheck disable=SC2086
    out="$("$felica" $cmd --db "$path" 2>&1)"; st=$?
    if [[ "$f" == newer.sqlite3 ]]; then want="schema version 3, written by a newer felica"; else want="is an SQLite database of another program"; fi
    if [[ $st -eq 1 && "$out" == *"$path"* && "$out" == *"$want"* && "$out" != *"CREATE"* && "$out" != *"SELECT"* \
          && "$(digest "$path")" == "$before" && ! -e "$path-wal" && ! -e "$path-shm" && ! -e "$path-journal" ]]; then
      pass "$f, felica $cmd: refused (exit 1), not a byte changed, no companion file: ${out:0:150}"
    else
      fail "$f, felica $cmd: exit $st, digest $( [[ "$(digest "$path")" == "$before" ]] && echo same || echo CHANGED), files: $(ls "$tmp" | grep -F "$f" | tr '\n' ' '): $out"
    fi
  done
done
# The WAL-mode browser file while its program has it open (-wal present): still untouched.
python3 - "$tmp/places.sqlite" "$tmp/places.lock" <<'EOF' &
import sqlite3, sys, time, os
c = sqlite3.connect(sys.argv[1], isolation_level=None)
c.execute("INSERT INTO moz_places(url) VALUES('https://example.org/2')")   # left in the WAL
open(sys.argv[2], "w").close()
while os.path.exists(sys.argv[2]): time.sleep(0.05)
EOF
holder=$!
for _ in $(seq 100); do [[ -e "$tmp/places.lock" ]] && break; sleep 0.05; done
before="$(digest "$tmp/places.sqlite") $(digest "$tmp/places.sqlite-wal")"
out="$("$felica" log add --device virtual:suica --db "$tmp/places.sqlite" 2>&1)"; st=$?
after="$(digest "$tmp/places.sqlite") $(digest "$tmp/places.sqlite-wal")"
rm -f "$tmp/places.lock"; wait $holder
[[ $st -eq 1 && "$before" == "$after" && "$out" == *"another program"* ]] \
  && pass "a WAL-mode file its program holds open: refused, the file and its -wal unchanged" \
  || fail "places.sqlite held open: exit $st, $([[ "$before" == "$after" ]] && echo unchanged || echo CHANGED): $out"

# ---- read-only commands on a path with no database ----------------------------------------
for cmd in "log show" "log export --csv"; do
  # shellcheck disable=SC2086
  out="$("$felica" $cmd --db "$tmp/typo/history.sqlite3" 2>&1)"; st=$?
  [[ $st -eq 1 && "$out" == *"no history database at $tmp/typo/history.sqlite3"* && "$out" == *"felica log add"* && ! -e "$tmp/typo" ]] \
    && pass "felica $cmd on a path with no database: exit 1, the path named with a hint, nothing created" \
    || fail "felica $cmd --db (missing): exit $st, $([[ -e "$tmp/typo" ]] && echo "created $tmp/typo" || echo "nothing created"): $out"
done
: >"$tmp/empty.sqlite3"
out="$(XDG_DATA_HOME="$tmp/xdg-none" "$felica" log show 2>&1)"; st=$?
[[ $st -eq 1 && "$out" == *"$tmp/xdg-none/felica/history.sqlite3"* && ! -e "$tmp/xdg-none" ]] \
  && pass "log show with no default database: exit 1, nothing created" || fail "log show (default, missing): exit $st: $out"
out="$("$felica" log show --db "$tmp/empty.sqlite3" 2>&1)"; st=$?
[[ $st -eq 1 && "$out" == *"no history database"* && ! -s "$tmp/empty.sqlite3" ]] \
  && pass "log show of an empty file: no history database there (exit 1), the file left empty" || fail "log show (empty file): exit $st: $out"
cp "$db" "$tmp/ours.sqlite3"
before="$(digest "$tmp/ours.sqlite3")"
"$felica" log show --db "$tmp/ours.sqlite3" >"$tmp/show.out" 2>&1; st=$?
[[ $st -eq 0 && "$(digest "$tmp/ours.sqlite3")" == "$before" ]] && grep -q "新宿" "$tmp/show.out" \
  && pass "log show reads a history without changing it" || fail "log show of a history: exit $st: $(cat "$tmp/show.out")"

# ---- a write lock held by another process ---------------------------------------------------
# hold_lock DB READY [RELEASE_WHEN_FILE_SAYS]: Python holds the write lock on DB (READY
# appears when it does) until the file names "not saved", or until killed.
hold_lock() {
  python3 - "$@" <<'EOF' &
import sqlite3, sys, time, os
c = sqlite3.connect(sys.argv[1], isolation_level=None)
c.execute("BEGIN IMMEDIATE")
open(sys.argv[2], "w").close()
watch = sys.argv[3] if len(sys.argv) > 3 else None
while True:
    time.sleep(0.02)
    if watch and os.path.exists(watch) and "not saved" in open(watch, errors="replace").read():
        break
c.execute("COMMIT")
EOF
  locker=$!
  for _ in $(seq 200); do [[ -e "$2" ]] && break; sleep 0.05; done
}
export FELICA_TEST_BUSY_TIMEOUT_MS=1000
lockdb="$tmp/locked.sqlite3"
"$felica" log add --device virtual:wallet --db "$lockdb" >/dev/null 2>&1 || fail "log add (wallet) into $lockdb"

hold_lock "$lockdb" "$tmp/ready1"
out="$("$felica" log add --device virtual:suica --db "$lockdb" 2>&1)"; st=$?
kill $locker; wait $locker 2>/dev/null
[[ $st -eq 1 && "$out" == "Error: the history database $lockdb stayed locked by another process for 1 s while saving a reading of card 0101120312345678" ]] \
  && pass "log add under another process's write lock: exit 1, the plain reason ($out)" || fail "log add under a lock: exit $st: $out"
out="$("$felica" log add --device virtual:wallet --db "$lockdb" 2>&1)" 
hold_lock "$lockdb" "$tmp/ready2"
out="$("$felica" log add --device virtual:wallet --db "$lockdb" 2>&1)"; st=$?
kill $locker; wait $locker 2>/dev/null
[[ $st -eq 0 && "$out" == *"0 added, 14 already kept"* ]] \
  && pass "log add of a card already kept does not wait for the lock (nothing to write)" || fail "log add (nothing new) under a lock: exit $st: $out"

# watch: the first tap cannot be saved; the lock goes once that is said; a later tap saves it.
hold_lock "$lockdb" "$tmp/ready3" "$tmp/watch.err"
"$felica" watch --save --json --count 4 --device virtual:suica --db "$lockdb" >"$tmp/watch.out" 2>"$tmp/watch.err"; st=$?
wait $locker
records="$(python3 -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute("SELECT count(*) FROM records").fetchone()[0])' "$lockdb")"
if [[ $st -eq 0 && $(wc -l <"$tmp/watch.out") -eq 4 && "$records" == 23 ]] \
   && grep -q "^card 0101120312345678 not saved: the history database $lockdb stayed locked by another process for 1 s while saving a reading of card 0101120312345678; its reading is kept and saved with the next card read$" "$tmp/watch.err" \
   && grep -q "^card 0101120312345678: the reading of .* that could not be saved is saved now$" "$tmp/watch.err"; then
  pass "watch --save under a lock: the tap is reported (card, reason), watching goes on, and the reading is saved with a later tap (23 records)"
else
  fail "watch --save under a lock: exit $st, $(wc -l <"$tmp/watch.out") cards, $records records: $(cat "$tmp/watch.err")"
fi

# Locked for the whole watch: each reading is named at the end, exit 1.
lock2="$tmp/locked2.sqlite3"
cp "$tmp/ours.sqlite3" "$lock2"
hold_lock "$lock2" "$tmp/ready4"
"$felica" watch --save --json --count 2 --device virtual:wallet --db "$lock2" >"$tmp/watch2.out" 2>"$tmp/watch2.err"; st=$?
kill $locker; wait $locker 2>/dev/null
[[ $st -eq 1 && $(wc -l <"$tmp/watch2.out") -eq 2 ]] && grep -q "was still locked by another process when watch ended" "$tmp/watch2.err" \
  && [[ $(grep -c "not saved" "$tmp/watch2.err") -eq 3 ]] \
  && pass "watch --save locked out to the end: both taps printed, the kept reading named, exit 1" \
  || fail "watch --save locked to the end: exit $st: $(cat "$tmp/watch2.err")"
unset FELICA_TEST_BUSY_TIMEOUT_MS

# ---- a long watch --save: memory and WAL flat ----------------------------------------------
taps=${KIOSK_TAPS:-2000}
start_pn532 "$tmp/pn532" --card suica --taps 6:3
soak="$tmp/soak.sqlite3"
"$felica" watch --save --json --count "$taps" --interval 0 --device "libnfc:pn532_uart:$tmp/pn532" --db "$soak" >"$tmp/soak.out" 2>"$tmp/soak.err" &
watcher=$!
: >"$tmp/samples"
while kill -0 $watcher 2>/dev/null; do
  rss=$(awk '/^VmRSS:/ {print $2}' /proc/$watcher/status 2>/dev/null)
  [[ -n "$rss" ]] && echo "$(wc -l <"$tmp/soak.out") $rss $(stat -c %s "$soak-wal" 2>/dev/null || echo 0)" >>"$tmp/samples"
  sleep 0.5
done
wait $watcher; st=$?
stop_pn532
state="$(python3 -c 'import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); print(c.execute("PRAGMA integrity_check").fetchone()[0], c.execute("SELECT count(*) FROM records").fetchone()[0], c.execute("SELECT count(*) FROM readings").fetchone()[0])' "$soak")"
# RSS after a tenth of the taps (warm) against the end; the largest WAL seen.
verdict="$(python3 - "$tmp/samples" "$taps" <<'EOF'
import sys
rows = [tuple(map(int, l.split())) for l in open(sys.argv[1]) if len(l.split()) == 3]
taps = int(sys.argv[2])
warm = [r for r in rows if r[0] >= taps // 10]
if len(warm) < 4:
    print(f"too few samples ({len(rows)})"); sys.exit()
growth = warm[-1][1] - warm[0][1]
wal = max(r[2] for r in rows)
ok = growth <= 1024 and wal <= 4 << 20
print(("ok" if ok else "BAD") + f" RSS {warm[0][1]} kB at {warm[0][0]} taps, {warm[-1][1]} kB at {warm[-1][0]} ({growth:+d} kB); largest WAL {wal} bytes; {len(rows)} samples")
EOF
)"
[[ $st -eq 0 && $(wc -l <"$tmp/soak.out") -eq $taps && "$state" == "ok 9 1" && "$verdict" == ok* ]] \
  && pass "watch --save, $taps taps through libnfc + PN532: $verdict; database: 9 records, 1 reading" \
  || fail "watch --save soak: exit $st, $(wc -l <"$tmp/soak.out") cards, state $state, $verdict: $(tail -3 "$tmp/soak.err")"

stage_end
