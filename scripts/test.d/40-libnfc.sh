#!/usr/bin/env bash
# End to end through real libnfc: `felica-sim pn532` serves a virtual card on a
# pseudo-terminal, libnfc's own pn532_uart driver opens it, and both nfc-list and
# `felica --device libnfc:pn532_uart:<pty>` must see exactly what `--device virtual:<card>`
# sees. Then the failure paths: no card, card removed mid-read, late reply, corrupt frame,
# dropped ACK, no reader, reader gone — each a clear error, and the next command works.
source "$(dirname "$0")/lib.sh"
stage_workdir
tmp="$work"

# expect_exit CODE DESCRIPTION PATTERN -- COMMAND...: exit status and a stderr pattern.
expect_exit() {
  local code="$1" what="$2" pattern="$3"; shift 4
  "$@" >"$tmp/out" 2>"$tmp/err"
  local got=$?
  if [[ $got -ne $code ]]; then
    fail "$what: exit $got, expected $code"; sed 's/^/     /' "$tmp/err" >&2; return
  fi
  if [[ -n "$pattern" ]] && ! grep -qiE -e "$pattern" "$tmp/err"; then
    fail "$what: stderr lacks /$pattern/"; sed 's/^/     /' "$tmp/err" >&2; return
  fi
  pass "$what (exit $code)"
}

# ---- usage errors --------------------------------------------------------------------------
expect_exit 64 "felica-sim pn532 without a card" "--card" -- "$sim" pn532
expect_exit 64 "felica-sim pn532 with a bad fault" "is not a fault kind" -- "$sim" pn532 --card suica --fault melt@1
expect_exit 64 "felica-sim pn532 with an unknown timing model" "is not one of rf" -- "$sim" pn532 --card suica --timing fast

# ---- the real stack sees the card ---------------------------------------------------------
start_pn532 "$tmp/main" --card suica || exit 1
dev="libnfc:pn532_uart:$tmp/main"
connstring="$(head -n 1 "$tmp/main.out")"
[[ "$connstring" == pn532_uart:/dev/pts/* ]] && pass "felica-sim prints the connection string ($connstring)" \
  || fail "felica-sim printed '$connstring', expected pn532_uart:/dev/pts/N"

"$felica" poll --device virtual:suica --json >"$tmp/poll.json"
idm="$(sed -E 's/.*"idm":"([0-9a-f]+)".*/\1/' "$tmp/poll.json")"
pmm="$(sed -E 's/.*"pmm":"([0-9a-f]+)".*/\1/' "$tmp/poll.json")"
sc="$(sed -E 's/.*"systemCode":"([0-9a-f]+)".*/\1/' "$tmp/poll.json")"
spaced() { echo "$1" | sed -E 's/(..)/\1  /g; s/ +$//'; }
for types in 2 4; do
  LIBNFC_DEVICE="$connstring" nfc-list -t "$types" >"$tmp/nfc-list" 2>&1
  if grep -q "ID (NFCID2): $(spaced "$idm")" "$tmp/nfc-list" &&
     grep -q "Parameter (PAD): $(spaced "$pmm")" "$tmp/nfc-list" &&
     grep -q "System Code (SC): $(spaced "$sc")" "$tmp/nfc-list"; then
    pass "nfc-list -t $types sees IDm $idm, PMm $pmm, system $sc"
  else
    fail "nfc-list -t $types output:"; sed 's/^/     /' "$tmp/nfc-list" >&2
  fi
done

# libnfc finds the reader; a PN532 on a serial line is listed by its native path.
LIBNFC_DEVICE="$connstring" "$felica" devices >"$tmp/devices" 2>&1
grep -q "pn532:${connstring#pn532_uart:}" "$tmp/devices" && pass "felica devices lists the emulated reader (as pn532:)" \
  || { fail "felica devices:"; cat "$tmp/devices" >&2; }

# ---- same results as the virtual card ---------------------------------------------------
compare() {
  local what="$1"; shift
  "$felica" "$@" --device virtual:suica >"$tmp/virtual.out" 2>"$tmp/virtual.err"; local vs=$?
  "$felica" "$@" --device "$dev" >"$tmp/libnfc.out" 2>"$tmp/libnfc.err"; local ls=$?
  if [[ $vs -ne 0 || $ls -ne 0 ]]; then
    fail "$what: exit virtual $vs, libnfc $ls"; cat "$tmp/libnfc.err" >&2
  elif ! cmp -s "$tmp/virtual.out" "$tmp/libnfc.out"; then
    fail "$what: output differs"; diff "$tmp/virtual.out" "$tmp/libnfc.out" | head -20 >&2
  else
    pass "$what: libnfc output equals virtual output"
  fi
}
compare "poll" poll
compare "poll --json" poll --json
compare "poll --system-code 0003" poll --system-code 0003
compare "dump" dump
compare "dump --json" dump --json
compare "read --service 090f" read --service 090f
compare "read --service 090f --blocks 0-4 --json" read --service 090f --blocks 0-4 --json
compare "balance" balance
compare "balance --json" balance --json

expect_exit 1 "poll for a system the card lacks" "has no system 1234 matching the Polling: its systems are" -- \
  "$felica" poll --device "$dev" --system-code 1234
compare "the next poll after a failed one" poll --json
stop_pn532

# ---- a card without the optional commands ------------------------------------------------
# The image of the suica sample, marked as ignoring Request Block Information and Search
# Service Code: the dump completes without that information and says so, as through the
# virtual device.
"$felica" dump --json --device virtual:suica | sed 's/^{$/{\n  "ignores": ["request-block-information", "search-service-code"],/' >"$tmp/ignoring.json"
start_pn532 "$tmp/ignoring" --card "$tmp/ignoring.json" || exit 1
dev="libnfc:pn532_uart:$tmp/ignoring"
"$felica" dump --device "virtual:$tmp/ignoring.json" >"$tmp/virtual.out" 2>"$tmp/virtual.err"; vs=$?
"$felica" dump --device "$dev" >"$tmp/libnfc.out" 2>"$tmp/libnfc.err"; ls=$?
if [[ $vs -ne 0 || $ls -ne 0 ]]; then
  fail "dump of a card ignoring optional commands: exit virtual $vs, libnfc $ls: $(cat "$tmp/libnfc.err")"
elif ! cmp -s "$tmp/virtual.out" "$tmp/libnfc.out"; then
  fail "dump of a card ignoring optional commands: output differs"; diff "$tmp/virtual.out" "$tmp/libnfc.out" | head -20 >&2
elif ! grep -q "note: system 0003: the card did not answer Request Block Information" "$tmp/libnfc.err" ||
     ! grep -q "did not answer Search Service Code" "$tmp/libnfc.err" ||
     ! grep -q "Service 090F .* 20 blocks" "$tmp/libnfc.out"; then
  fail "dump of a card ignoring optional commands does not say what is missing, or lost blocks: $(cat "$tmp/libnfc.err")"
else
  pass "dump of a card ignoring Request Block Information and Search Service Code completes with notes"
fi
stop_pn532

# ---- failure paths ------------------------------------------------------------------------
start_pn532 "$tmp/empty" --no-card || exit 1
expect_exit 69 "no card" "no card" -- "$felica" poll --device "libnfc:pn532_uart:$tmp/empty"
expect_exit 69 "no card, again (the reader still answers)" "no card|answered" -- "$felica" balance --device "libnfc:pn532_uart:$tmp/empty"
stop_pn532

# The card answers the polls and the first reads of a dump, then leaves.
start_pn532 "$tmp/removal" --card suica --remove-after 6 || exit 1
expect_exit 1 "card removed mid-dump" "card (left|is no longer)" -- "$felica" dump --device "libnfc:pn532_uart:$tmp/removal"
expect_exit 69 "the next command after removal says no card" "no card" -- "$felica" poll --device "libnfc:pn532_uart:$tmp/removal"
stop_pn532

for fault in late@3:700 corrupt@3 drop-ack@3; do
  name="fault_${fault%%@*}"; name="${name//-/_}"
  start_pn532 "$tmp/$name" --card suica --fault "$fault" || exit 1
  "$felica" dump --json --device "libnfc:pn532_uart:$tmp/$name" >"$tmp/$name.json" 2>"$tmp/$name.stderr"
  st=$?
  "$felica" dump --json --device virtual:suica >"$tmp/expected.json"
  if [[ $st -eq 0 ]] && cmp -s "$tmp/$name.json" "$tmp/expected.json"; then
    pass "$fault during a dump: the session's retry after the device reset gives the full dump"
  else
    fail "$fault during a dump: exit $st"; sed 's/^/     /' "$tmp/$name.stderr" >&2
  fi
  "$felica" poll --json --device "libnfc:pn532_uart:$tmp/$name" >"$tmp/after" 2>&1 && cmp -s "$tmp/after" "$tmp/poll.json" \
    && pass "the next command after $fault works" || { fail "next command after $fault"; cat "$tmp/after" >&2; }
  stop_pn532
done

expect_exit 69 "no reader at a path" "does not exist" -- \
  "$felica" poll --device "libnfc:pn532_uart:$tmp/no-such-tty"

# Unplugging: the device node disappears (the link goes with the emulator). The
# mid-session case (reader gone during an exchange) is in the Swift tests.
start_pn532 "$tmp/gone" --card suica || exit 1
stop_pn532
[[ ! -e "$tmp/gone" ]] && pass "the --link symlink is removed on exit" || fail "--link symlink left behind"
expect_exit 69 "reader unplugged" "does not exist" -- "$felica" poll --device "libnfc:pn532_uart:$tmp/gone"

# The port taken away for 3 s under a running watch (the pty closes and its link goes, then a
# new pty comes up at the same link), through libnfc and through the native transport:
# watch says so once each way, opens the same link again and reads the next cards.
for dev in "libnfc:pn532_uart:$tmp/away" "pn532:$tmp/away"; do
  start_pn532 "$tmp/away" --card suica --taps 6:6 --fault away@14:3000 || exit 1
  timeout 30 "$felica" watch --device "$dev" --count 3 --json --interval 0.1 >"$tmp/loss.out" 2>"$tmp/loss.err"
  stop_pn532
  reader_loss_watched "PN532 port away for 3 s" "$dev" "$tmp/loss.out" "$tmp/loss.err"
done
start_pn532 "$tmp/away" --card suica --taps 6:6 --fault away@14:3000 || exit 1
expect_exit 1 "watch --exit-on-reader-loss ends when the port goes away" "serial port (closed|hung up)" -- \
  timeout 30 "$felica" watch --device "pn532:$tmp/away" --count 3 --interval 0.1 --exit-on-reader-loss
stop_pn532

stage_end
