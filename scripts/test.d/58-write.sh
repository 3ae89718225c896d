#!/usr/bin/env bash
# Writing, through the PN532 emulator on a pseudo-terminal, checked by an independent host:
# nfcpy 1.0.4 (scripts/nfcpy/venv.sh) with its own PN532 driver, Type 3 Tag, NDEF and
# FelicaLiteS code (scripts/nfcpy/lite-s.py). The emulated card keeps its writes for the
# emulator's lifetime, so a write by one host is read by the other.
#  - felica ndef write --uri, nfcpy reads the URI; nfcpy writes a URI, felica ndef reads it.
#  - felica write then felica read on a Lite-S (0009 writes, 000B reads).
#  - Suica: a write to the history (090F, read-only) or to an absent service is refused
#    and nothing reaches the card (its blocks read the same; the trace holds no write).
#  - A Lite-S image with a card key: nfcpy's FelicaLiteS.authenticate succeeds with the
#    key and fails with another; felica verify agrees (exit 0 / 1).
#  - The card pulled after each exchange of an ndef write in turn: the next felica ndef
#    shows the old message, the new one, or says the write was interrupted; never a cut
#    message as whole.
#  - Without libcrypto (loaded at first use), read --mac says which library and package.
#  - --save-writes keeps the card's writes in a new image; the --card file is unchanged.
source "$(dirname "$0")/lib.sh"
stage_workdir

if ! python="$(scripts/nfcpy/venv.sh)"; then
  fail "nfcpy could not be installed (see above); this stage needs PyPI once, then uses .build/nfcpy-venv"
  stage_end
fi
lites="$PWD/scripts/nfcpy/lite-s.py"
link="$work/pty"
dev="libnfc:pn532_uart:$link"

# ---- felica writes NDEF, nfcpy reads it; nfcpy writes, felica reads -------------------
start_pn532 "$link" --card lite-s || stage_end
uri="https://example.org/felica/written?by=felica"
if timeout 30 "$felica" ndef write --uri "$uri" --device "$dev" >"$work/w.out" 2>"$work/w.err"; then
  timeout 60 "$python" "$lites" "$link" read >"$work/nfcpy.read" 2>"$work/nfcpy.err"
  if [[ "$(cat "$work/nfcpy.read")" == "U $uri" ]]; then
    pass "felica ndef write --uri, nfcpy reads the URI back ($(cat "$work/w.out"))"
  else
    fail "nfcpy read $(cat "$work/nfcpy.read") after felica ndef write --uri $uri"; tail -5 "$work/nfcpy.err" >&2
  fi
else
  fail "felica ndef write --uri failed: $(cat "$work/w.err")"
fi
uri2="https://nfcpy.readthedocs.io/written-by-nfcpy"
if timeout 60 "$python" "$lites" "$link" write-uri "$uri2" >"$work/nfcpy.w" 2>"$work/nfcpy.err" &&
   timeout 30 "$felica" ndef --json --device "$dev" >"$work/n.json" 2>"$work/n.err" &&
   [[ "$(python3 -c 'import json,sys; t=json.load(open(sys.argv[1])); print(" ".join(r.get("uri","?") for r in t["records"]))' "$work/n.json")" == "$uri2" ]]; then
  pass "nfcpy writes a URI, felica ndef reads it"
else
  fail "nfcpy write-uri then felica ndef: $(cat "$work/nfcpy.w" "$work/n.err" "$work/n.json" 2>/dev/null | head -5)"; tail -5 "$work/nfcpy.err" >&2
fi

# ---- felica write, felica read ------------------------------------------------------------
data=00112233445566778899aabbccddeeff
if timeout 30 "$felica" write --service 0009 --block 13 --data "$data" --device "$dev" >"$work/wr.out" 2>"$work/wr.err" &&
   timeout 30 "$felica" read --json --service 000b --blocks 13 --device "$dev" >"$work/rd.json" 2>"$work/rd.err" &&
   grep -q "\"data\":\"$data\"" "$work/rd.json"; then
  pass "felica write on 0009 then felica read on 000B round-trip ($(cat "$work/wr.out"))"
else
  fail "felica write/read round trip: $(cat "$work/wr.err" "$work/rd.err" "$work/rd.json" 2>/dev/null | head -5)"
fi
stop_pn532

# ---- Suica: refused, nothing written -----------------------------------------------------
start_pn532 "$link" --card suica || stage_end
"$felica" read --service 090f --blocks 0-2 --device "$dev" >"$work/before" 2>/dev/null
for service in 090f 1009; do
  rm -f "$work/t.jsonl"
  timeout 30 "$felica" write --service $service --block 0 --data "$data" --trace "$work/t.jsonl" --device "$dev" >"$work/s.out" 2>"$work/s.err"
  rc=$?
  writes=0
  [[ -f "$work/t.jsonl" ]] && writes=$("$felica" trace show "$work/t.jsonl" 2>/dev/null | grep -ci "write without encryption")
  "$felica" read --service 090f --blocks 0-2 --device "$dev" >"$work/after" 2>/dev/null
  if ((rc == 1)) && [[ ! -s "$work/s.out" && "$writes" == 0 ]] && grep -q "nothing was sent" "$work/s.err" && cmp -s "$work/before" "$work/after"; then
    pass "suica: felica write --service $service refused, nothing written: $(head -c 150 "$work/s.err")"
  else
    fail "suica: felica write --service $service: exit $rc, $writes write commands in the trace: $(cat "$work/s.err")"
  fi
done
stop_pn532

# ---- The card key: nfcpy's authenticate and felica verify agree ------------------------------
key=0123456789abcdef0123456789abcdef
other=ffeeddccbbaa99887766554433221100
"$felica" dump --json --device virtual:lite-s >"$work/lite.json" 2>/dev/null
python3 - "$work/lite.json" "$key" <<'EOS'
import json, sys
image = json.load(open(sys.argv[1]))
image["cardKey"] = sys.argv[2]
json.dump(image, open(sys.argv[1], "w"), indent=2)
EOS
cp "$work/lite.json" "$work/lite.orig.json"
start_pn532 "$link" --card "$work/lite.json" --save-writes "$work/saved.json" || stage_end
for k in $key $other; do
  nfcpy_says=$(timeout 60 "$python" "$lites" "$link" authenticate "$k" 2>"$work/a.err")
  timeout 30 "$felica" verify --card-key "$k" --device "$dev" >"$work/v.out" 2>"$work/v.err"
  rc=$?
  want=authenticated; wrc=0
  [[ $k == "$other" ]] && { want="not authenticated"; wrc=1; }
  if [[ "$nfcpy_says" == "$want" && $rc == "$wrc" ]]; then
    pass "card key $k: nfcpy $nfcpy_says, felica verify exit $rc ($(cat "$work/v.out" "$work/v.err" | head -1))"
  else
    fail "card key $k: nfcpy '$nfcpy_says' (want '$want'), felica verify exit $rc (want $wrc): $(cat "$work/v.out" "$work/v.err")"; tail -3 "$work/a.err" >&2
  fi
done
timeout 30 "$felica" read --mac --card-key "$key" --service 000b --blocks 0-4 --device "$dev" >"$work/mac.out" 2>"$work/mac.err"
rc1=$?
timeout 30 "$felica" read --mac --card-key "$other" --service 000b --blocks 0-4 --device "$dev" >/dev/null 2>"$work/mac2.err"
rc2=$?
if ((rc1 == 0 && rc2 == 1)) && [[ $(wc -l <"$work/mac.out") == 5 ]] && grep -q "MAC_A" "$work/mac2.err"; then
  pass "felica read --mac: checked with the card's key, refused with another ($(head -c 100 "$work/mac2.err"))"
else
  fail "felica read --mac: exit $rc1 with the key, $rc2 with another: $(cat "$work/mac.err" "$work/mac2.err")"
fi
# libcrypto is loaded at first use (the card key), not linked. FELICA_TEST_LIBCRYPTO names the
# file the loader looks for instead of libcrypto.so.3: a real dlopen of a library this machine
# lacks (the emulator, already running, keeps its own libcrypto).
needed=$(readelf -d "$felica" | grep NEEDED)
[[ $needed != *libcrypto* ]] && pass "felica does not link libcrypto (not in DT_NEEDED)" \
  || fail "felica links libcrypto (DT_NEEDED), so every start pays for it: $needed"
FELICA_TEST_LIBCRYPTO=libcrypto-absent.so.3 timeout 30 "$felica" read --mac --card-key "$key" --service 000b --blocks 0-4 \
  --device "$dev" >"$work/nocrypto.out" 2>"$work/nocrypto.err"
rc=$?
if ((rc != 0)) && [[ ! -s "$work/nocrypto.out" ]] && grep -q "libcrypto-absent.so.3" "$work/nocrypto.err" \
  && grep -q "install the libssl3 package" "$work/nocrypto.err"; then
  pass "without libcrypto, read --mac says which library and which package (exit $rc): $(head -1 "$work/nocrypto.err" | head -c 200)"
else
  fail "without libcrypto: read --mac exit $rc: $(cat "$work/nocrypto.out" "$work/nocrypto.err")"
fi
stop_pn532
if cmp -s "$work/lite.json" "$work/lite.orig.json" && python3 -c 'import json,sys; sys.exit(json.load(open(sys.argv[1])).get("cardKey") != sys.argv[2])' "$work/saved.json" "$key"; then
  pass "--save-writes: the card saved to a new image (with its key); the --card image is unchanged"
else
  fail "--save-writes: the card image changed, or the saved image lacks the card or its key"
fi

# ---- The card pulled during ndef write ------------------------------------------------------
"$felica" ndef --device virtual:lite-s >"$work/old.txt" 2>/dev/null
new="https://example.org/a/long/enough/uri/to/take/several/blocks/of/the/tag/when/written/out"
interrupted=0 old=0 complete=0 other=0
for n in $(seq 2 14); do
  start_pn532 "$link" --card lite-s --remove-after "$n" || break
  timeout 30 "$felica" ndef write --uri "$new" --device "$dev" >/dev/null 2>"$work/pw.err"
  kill -USR1 "$pn532_pid"; sleep 0.05
  timeout 30 "$felica" ndef --device "$dev" >"$work/after.txt" 2>"$work/after.err"
  rc=$?
  if ((rc == 0)) && cmp -s "$work/after.txt" "$work/old.txt"; then old=$((old + 1))
  elif ((rc == 0)) && grep -qF "URI   $new" "$work/after.txt"; then complete=$((complete + 1))
  elif ((rc == 1)) && grep -q "WriteF (byte 9) is 0F: a write of the message was interrupted" "$work/after.err"; then interrupted=$((interrupted + 1))
  else other=$((other + 1)); fail "pulled after $n exchanges: next felica ndef exit $rc: $(cat "$work/after.err" "$work/after.txt" | head -3)"
  fi
  stop_pn532
done
if ((interrupted > 0 && other == 0)); then
  pass "card pulled during ndef write: $old times the old message, $interrupted times 'write interrupted', $complete times the new message"
else
  fail "card pulled during ndef write: old $old, interrupted $interrupted, complete $complete, other $other"
fi

stage_end
