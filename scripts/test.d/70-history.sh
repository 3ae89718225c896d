#!/usr/bin/env bash
# The history database and CSV through the real felica binary and real SQLite: CSV
# parsed back by Python's csv module to the same rows; a save killed (SIGKILL) before each
# of its statements leaves a database that passes PRAGMA integrity_check with the whole
# reading or none of it; two processes saving at once both land; a card pulled away
# mid-read (real libnfc, PN532 emulator) saves nothing; a gap between two readings is
# reported; watch --save keeps each tapped card. Databases are checked with Python's sqlite3 module.
source "$(dirname "$0")/lib.sh"
unset FELICA_TEST_SAVE_STOP FELICA_TEST_SAVE_PAUSE

stage_workdir
tmp="$work"
export XDG_DATA_HOME="$tmp/xdg"


# db_state FILE: "<integrity_check> <records> <readings>"
db_state() {
  python3 - "$1" <<'EOF'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
ok = c.execute("PRAGMA integrity_check").fetchone()[0]
records = c.execute("SELECT count(*) FROM records").fetchone()[0]
readings = c.execute("SELECT count(*) FROM readings").fetchone()[0]
print(ok, records, readings)
EOF
}

# ---- the default database and idempotence ----------------------------------------------
"$felica" log add --device virtual:suica >"$tmp/add1" 2>&1 || fail "log add (default database)"
[[ -f "$XDG_DATA_HOME/felica/history.sqlite3" ]] && pass "log add creates \$XDG_DATA_HOME/felica/history.sqlite3" \
  || fail "no database at \$XDG_DATA_HOME/felica/history.sqlite3: $(cat "$tmp/add1")"
"$felica" log add --device virtual:suica >"$tmp/add2" 2>&1
grep -q "9 records read, 0 added, 9 already kept" "$tmp/add2" && pass "reading the same card twice adds nothing" \
  || fail "second log add: $(cat "$tmp/add2")"

# ---- SQLite is loaded at first use, not linked: without it, a clear error ---------------------
# FELICA_TEST_LIBSQLITE names the file the loader looks for instead of libsqlite3.so.0: a real
# dlopen of a library this machine lacks.
needed=$(readelf -d "$felica" | grep NEEDED)
[[ $needed != *libsqlite* ]] && pass "felica does not link SQLite (not in DT_NEEDED)" \
  || fail "felica links SQLite (DT_NEEDED), so every start pays for it: $needed"
out="$(FELICA_TEST_LIBSQLITE=libsqlite3-absent.so.0 "$felica" log add --device virtual:suica --db "$tmp/nosqlite.sqlite3" 2>&1)"; st=$?
if ((st != 0)) && [[ $out == *"libsqlite3-absent.so.0"* && $out == *"install the libsqlite3-0 package"* && ! -e "$tmp/nosqlite.sqlite3" ]]; then
  pass "without SQLite, log add says which library and which package (exit $st), no file made: $(head -1 <<<"$out" | head -c 200)"
else
  fail "without SQLite: log add exit $st: $out"
fi

# ---- CSV parsed back by Python's csv module -----------------------------------------------
db="$tmp/claims.sqlite3"
"$felica" log add --device virtual:wallet --db "$db" >/dev/null 2>&1 && "$felica" log add --device virtual:suica --db "$db" >/dev/null 2>&1 \
  || fail "log add into $db"
"$felica" log show --json --db "$db" >"$tmp/show.json" || fail "log show --json"
for variant in "" "--excel" "--summary" "--excel --summary"; do
  # The oldest records of each card have no known amount: a total leaving one out says
  # incomplete, and --allow-incomplete keeps the exit status 0 for this round trip.
  allow=""; [[ "$variant" == *--summary* ]] && allow="--allow-incomplete"
  # shellcheck disable=SC2086
  "$felica" log export --csv $variant $allow --db "$db" >"$tmp/export.csv" || { fail "log export --csv $variant"; continue; }
  if python3 - "$tmp/export.csv" "$tmp/show.json" "$variant" <<'EOF'
import csv, json, sys
path, shown, variant = sys.argv[1], sys.argv[2], sys.argv[3]
raw = open(path, "rb").read()
excel = "--excel" in variant
assert raw.startswith(b"\xef\xbb\xbf") == excel, "byte-order mark only with --excel"
body = raw[3:] if excel else raw
lines = body.split(b"\r\n" if excel else b"\n")
assert lines[-1] == b"", "output ends with a line ending"
if not excel:
    assert b"\r" not in body, "plain CSV ends lines with LF"
rows = list(csv.reader(open(path, encoding="utf-8-sig", newline="")))
header = rows[0]
expected_header = ["date", "time", "type", "from", "to", "amount", "balance", "sequence", "card", "purse", "detail"]
if "--summary" in variant:
    expected_header += ["fares", "charges", "purchases"]
assert header == expected_header, header
records = [dict(zip(header, r)) for r in rows[1:] if r[2] != "month total"]
totals = [dict(zip(header, r)) for r in rows[1:] if r[2] == "month total"]
kept = json.load(open(shown))["records"]
kept.reverse()  # log show is newest first, export oldest first
def text(v):
    return "" if v is None else str(v)
want = [[text(k[f]) for f in ["date", "time", "type", "from", "to", "amount", "balance", "sequence", "card", "purse", "detail"]] for k in kept]
got = [[r[f] for f in expected_header[:11]] for r in records]
assert got == want, (got[:3], want[:3])
assert any("," in r["detail"] for r in records), "a field holding a comma came back whole"
assert any(r["from"] == "新宿" and r["to"] == "渋谷" for r in records), "station names survive the round trip"
if "--summary" in variant:
    months = {}  # a total per month, card and purse
    for k in kept:
        m = months.setdefault((k["date"][:7], k["card"], k["purse"]), [0, 0, 0])
        a = k["amount"] or 0
        if k["type"] == "transit": m[0] -= a
        if k["type"] == "charge": m[1] += a
        if k["type"] == "purchase": m[2] -= a
    assert {(t["date"], t["card"], t["purse"]): [int(t["fares"]), int(t["charges"]), int(t["purchases"])] for t in totals} == months, totals
else:
    assert not totals
EOF
  then pass "log export --csv ${variant:-(plain)}: Python's csv module reads back the rows log show keeps"
  else fail "log export --csv $variant: rows differ (above)"; fi
done

"$felica" history --csv --device virtual:wallet >"$tmp/history.csv" || fail "history --csv"
"$felica" history --json --device virtual:wallet >"$tmp/history.json" || fail "history --json"
python3 - "$tmp/history.csv" "$tmp/history.json" <<'EOF' && pass "history --csv: Python reads back every transaction of the card" || fail "history --csv rows"
import csv, json, sys
rows = list(csv.DictReader(open(sys.argv[1], encoding="utf-8", newline="")))
card = json.load(open(sys.argv[2]))
want = sorted((p["profile"], t["sequence"], t["balance"], t["amount"]) for p in card["purses"] for t in p["transactions"])
got = sorted((r["purse"], int(r["sequence"]), int(r["balance"]), int(r["amount"]) if r["amount"] else None) for r in rows)
assert got == want, (got, want)
assert [r["date"] for r in rows] == sorted(r["date"] for r in rows), "oldest first"
EOF

out="$("$felica" history --excel --device virtual:suica 2>&1)"
[[ $? -eq 64 && "$out" == *"--excel' needs --csv"* ]] && pass "--excel without --csv is a usage error" || fail "--excel without --csv: $out"

# ---- kill -9 before every statement of a save ---------------------------------------------
base="$tmp/base.sqlite3"
"$felica" log add --device virtual:wallet --db "$base" >/dev/null 2>&1 || fail "base database"
before="$(db_state "$base")"
n=1; none=0; whole=0
while ((n < 200)); do
  rm -f "$tmp/k.sqlite3"*
  python3 -c "import sqlite3,sys; s=sqlite3.connect(sys.argv[1]); d=sqlite3.connect(sys.argv[2]); s.backup(d)" "$base" "$tmp/k.sqlite3"
  # Inside its own bash, so the shell's "Killed" notice does not land in the test log.
  bash -c 'FELICA_TEST_SAVE_STOP=$0 "$1" log add --device virtual:suica --db "$2" >/dev/null 2>"$3"; exit $?' \
    "$n" "$felica" "$tmp/k.sqlite3" "$tmp/k.err" 2>/dev/null
  st=$?
  state="$(db_state "$tmp/k.sqlite3")"
  if [[ $st -eq 0 ]]; then
    [[ "$state" == "ok 23 2" ]] && whole=1 || fail "save that ran to the end left: $state"
    break
  fi
  if [[ $st -ne 137 ]]; then fail "statement $n: exit $st, expected SIGKILL (137): $(cat "$tmp/k.err")"; break; fi
  if [[ "$state" == "$before" ]]; then none=$((none + 1)); else fail "killed before statement $n: $state (expected $before)"; fi
  n=$((n + 1))
done
((whole == 1 && none == n - 1 && n > 10)) \
  && pass "kill -9 before each of the $((n - 1)) statements of a save: integrity_check ok and nothing saved each time; uninterrupted, the whole reading" \
  || fail "kill -9 run: $none of $((n - 1)) kills left the database as it was"

# ---- two processes saving at once -----------------------------------------------------------
db2="$tmp/concurrent.sqlite3"
FELICA_TEST_SAVE_PAUSE=2:1500 "$felica" log add --device virtual:suica --db "$db2" >"$tmp/a.out" 2>&1 &
a=$!
sleep 0.4
"$felica" log add --device virtual:wallet --db "$db2" >"$tmp/b.out" 2>&1
sb=$?
wait $a; sa=$?
state="$(db_state "$db2")"
[[ $sa -eq 0 && $sb -eq 0 && "$state" == "ok 23 2" ]] \
  && pass "two processes saving at once (one holding the write lock 1.5 s): both land ($state)" \
  || fail "concurrent saves: exit $sa/$sb, state $state: $(cat "$tmp/a.out" "$tmp/b.out")"

FELICA_TEST_SAVE_PAUSE=3:800 "$felica" log add --device virtual:suica --db "$tmp/same.sqlite3" >"$tmp/a.out" 2>&1 &
a=$!
sleep 0.3
"$felica" log add --device virtual:suica --db "$tmp/same.sqlite3" >"$tmp/b.out" 2>&1; sb=$?
wait $a; sa=$?
state="$(db_state "$tmp/same.sqlite3")"
# The second finds every record kept once it has the lock, and writes nothing (no readings row).
[[ $sa -eq 0 && $sb -eq 0 && "$state" == "ok 9 1" ]] \
  && pass "the same card saved by two processes at once: kept once, one reading ($state)" \
  || fail "same card concurrently: exit $sa/$sb, state $state: $(cat "$tmp/a.out" "$tmp/b.out")"

# ---- a card pulled away mid-read saves nothing ----------------------------------------------
# The history takes three exchanges (Polling, two reads): the card leaves before the last.
start_pn532 "$tmp/pulled" --card suica --remove-after 2
cp "$base" "$tmp/pulled.sqlite3"
"$felica" log add --device "libnfc:pn532_uart:$tmp/pulled" --db "$tmp/pulled.sqlite3" >"$tmp/p.out" 2>&1
st=$?
state="$(db_state "$tmp/pulled.sqlite3")"
[[ $st -ne 0 && "$state" == "$before" ]] && grep -q "left the reader" "$tmp/p.out" \
  && pass "card pulled mid-read through libnfc: exit $st, nothing saved ($(head -c 90 "$tmp/p.out"))" \
  || fail "pulled card: exit $st, state $state (expected $before): $(cat "$tmp/p.out")"

# ---- a gap between two readings --------------------------------------------------------------
"$felica" dump --json --device virtual:suica >"$tmp/suica.json"
python3 - "$tmp/suica.json" "$tmp/later.json" <<'EOF'
import json, sys
card = json.load(open(sys.argv[1]))
for s in card["systems"][0]["services"]:
    if s["code"] == "090f":
        blocks = [bytearray.fromhex(b) for b in s["blocks"]]
        for b in blocks:
            if any(b):
                seq = (b[13] << 8 | b[14]) + 30
                b[13], b[14] = seq >> 8, seq & 0xFF
        s["blocks"] = [b.hex() for b in blocks]
json.dump(card, open(sys.argv[2], "w"))
EOF
db3="$tmp/gap.sqlite3"
"$felica" log add --device virtual:suica --db "$db3" >/dev/null 2>&1
"$felica" log add --device "virtual:$tmp/later.json" --db "$db3" >"$tmp/gap.out" 2>"$tmp/gap.err"
grep -q "21 records between sequence 161 and 183 rolled off" "$tmp/gap.err" \
  && "$felica" log show --db "$db3" | grep -q "^gap: card 0101120312345678 transit-ic: 21 records" \
  && pass "a gap between two readings is reported by log add and kept for log show" \
  || fail "gap: $(cat "$tmp/gap.out" "$tmp/gap.err")"

# ---- OFX read back by a reader that is not ours ----------------------------------------------
# ofxparse (PyPI, in .build/ofxparse-venv) and a strict XML parse of the body: the same
# amounts as the CSV for every record, the FITIDs the same in a second export, the purse's
# currency; a gap makes the statement incomplete (exit 1, said), --allow-incomplete 0.
if ofxpy="$(scripts/kiosk/ofxparse-venv.sh)"; then
  odb="$tmp/ofx.sqlite3"
  for c in suica wallet; do "$felica" log add --device "virtual:$c" --db "$odb" >/dev/null 2>&1; done
  "$felica" log export --ofx --db "$odb" >"$tmp/a.ofx" 2>"$tmp/a.ofx.err"; st=$?
  "$felica" log export --csv --db "$odb" >"$tmp/a.csv"
  sleep 1
  "$felica" log export --ofx --db "$odb" >"$tmp/b.ofx" 2>/dev/null
  "$felica" history --ofx --device virtual:wallet >"$tmp/h.ofx" 2>"$tmp/h.ofx.err"; hst=$?
  "$felica" history --csv --device virtual:wallet >"$tmp/h.csv" 2>/dev/null
  check=$("$ofxpy" - "$tmp/a.ofx" "$tmp/a.csv" "$tmp/b.ofx" "$tmp/h.ofx" "$tmp/h.csv" <<'EOF'
import csv, sys, xml.etree.ElementTree as ET
from decimal import Decimal
import ofxparse

def body(path):
    text = open(path, encoding="utf-8").read()
    return text[text.index("<OFX>"):]

def read(path):
    ET.fromstring(body(path))          # strict: every element closed, well-formed
    o = ofxparse.OfxParser.parse(open(path, "rb"))
    got, currencies = {}, set()
    for a in o.accounts:
        currencies.add(a.statement.currency)
        for t in a.statement.transactions:
            got[t.id] = t.amount
    return got, currencies

def csv_amounts(path):
    out = {}
    for r in csv.DictReader(open(path, encoding="utf-8", newline="")):
        if r["amount"]:
            out[f'{r["card"]}-{r["purse"]}-{r["sequence"]}-{r["date"].replace("-", "")}'] = Decimal(r["amount"])
    return out

a, cur = read(sys.argv[1])
b, _ = read(sys.argv[3])
want = csv_amounts(sys.argv[2])
h, hcur = read(sys.argv[4])
hwant = csv_amounts(sys.argv[5])
ok = a == want and sorted(a) == sorted(b) and cur == {"jpy"} and h == hwant and len(a) > 10
print(("ok" if ok else "BAD") + f" {len(a)} transactions (CSV {len(want)} with amounts), second export same FITIDs: {sorted(a) == sorted(b)}, currencies {sorted(cur)}; history --ofx {len(h)} (CSV {len(hwant)})")
if not ok:
    print(sorted(set(a.items()) ^ set(want.items()))[:6])
EOF
)
  [[ $st -eq 0 && $hst -eq 0 && "$check" == ok* ]] \
    && pass "log export --ofx and history --ofx read back by ofxparse and a strict XML parse: $check" \
    || fail "OFX: exit $st/$hst, $check: $(cat "$tmp/a.ofx.err" "$tmp/h.ofx.err")"
  "$felica" log export --ofx --db "$db3" >"$tmp/gap.ofx" 2>"$tmp/gap.ofx.err"; st=$?
  "$felica" log export --ofx --allow-incomplete --db "$db3" >/dev/null 2>&1; st2=$?
  [[ $st -eq 1 && $st2 -eq 0 ]] && grep -q "21 records missing between sequence 161 and 183" "$tmp/gap.ofx.err" \
    && grep -q "<!-- incomplete: 21 records missing" "$tmp/gap.ofx" \
    && pass "an OFX statement with a gap: said on stderr and in the file, exit 1 (0 with --allow-incomplete)" \
    || fail "OFX with a gap: exit $st, $st2: $(cat "$tmp/gap.ofx.err")"
else
  fail "ofxparse could not be installed (see above); this stage needs PyPI once, then uses .build/ofxparse-venv"
fi

echo "plain text" >"$tmp/notadb.txt"; for _ in $(seq 12); do cat "$tmp/notadb.txt" "$tmp/notadb.txt" >"$tmp/x" && mv "$tmp/x" "$tmp/notadb.txt"; done
out="$("$felica" log show --db "$tmp/notadb.txt" 2>&1)"; st=$?
[[ $st -eq 1 && "$out" == *"is not a history database"* ]] && pass "a file that is no database is named (exit 1)" || fail "not a database: exit $st: $out"

# ---- watch --save ------------------------------------------------------------------------------
"$felica" watch --save --count 1 --json --device virtual:suica --db "$tmp/watch.sqlite3" >"$tmp/watch.out" 2>"$tmp/watch.err"
st=$?
state="$(db_state "$tmp/watch.sqlite3")"
[[ $st -eq 0 && "$state" == "ok 9 1" ]] && grep -q '"saved":{"read":9,"added":9,"alreadyKept":0' "$tmp/watch.out" \
  && pass "watch --save keeps the tapped card's records ($state)" \
  || fail "watch --save: exit $st, state $state: $(cat "$tmp/watch.out" "$tmp/watch.err")"
out="$("$felica" watch --db "$tmp/w.sqlite3" --device virtual:suica 2>&1)"; st=$?
[[ $st -eq 64 && "$out" == *"'--db' needs --save"* ]] && pass "watch --db without --save is a usage error" || fail "watch --db alone: exit $st: $out"

# ---- a full disk: "no space left", and no database left behind -------------------------
# A 64 KiB tmpfs in a private mount namespace, filled to two sizes: too full to make the
# file's -shm (the reported "disk I/O error (SQLite code 4874)"), and too full to save.
full_disk() {
  local flags
  for flags in "-m" "-r -m"; do
    # shellcheck disable=SC2086
    if unshare $flags true 2>/dev/null; then
      # shellcheck disable=SC2086,SC2016
      unshare $flags bash -c '
        mount -t tmpfs -o size=64k tmpfs "$1" || exit 3
        dd if=/dev/zero of="$1/fill" bs=1k count="$2" 2>/dev/null
        "$3" log add --device virtual:suica --db "$1/h.sqlite3" >/dev/null 2>"$4"
        echo "status=$?"; cat "$4"; ls "$1"' _ "$full" "$1" "$felica" "$tmp/full-err"
      return
    fi
  done
  echo "no mount namespace"
}
full="$tmp/full"
mkdir -p "$full"
for fill in 64 40; do
  out="$(full_disk "$fill")"
  if [[ "$out" == "no mount namespace" ]]; then note "skipped: a full disk needs 'unshare -m' or 'unshare -r -m'"; break; fi
  left="$(grep -v -e '^status=' -e '^Error' <<<"$out" | grep -v -x fill)"
  if grep -q "^status=1" <<<"$out" && grep -q "Error: no space left on the device holding the history database $full/h.sqlite3" <<<"$out" \
     && [[ -z "$left" ]]; then
    pass "a full disk ($fill KiB filled) says no space left and leaves no database behind"
  else
    fail "a full disk ($fill KiB filled): $out"
  fi
done

if ((failures)); then echo "70-history: $failures failure(s)" >&2; exit 1; fi
echo "70-history: ok" >&2
