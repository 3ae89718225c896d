#!/usr/bin/env bash
# Traces from a real stack, and exported traces through tshark.
#  1. Capture through real libnfc (felica-sim pn532 serving a card on a pty, at PN532
#     speed): the replay prints what the capture printed; a card pulled mid-dump leaves a
#     trace that ends with the failure and replays to the same exit; a `felica` killed
#     (SIGKILL) mid-recording leaves only whole lines.
#  2. The captures and a fresh recording are exported with `felica trace export`; tshark
#     with the project's dissector (Wireshark/felica.lua) must decode every frame as
#     `felica trace show --json` does (scripts/check-dissector.py).
# (The virtual-card record/replay goldens are Swift tests: Tests/FeliCaTraceTests.)
# Needs $FELICA_BIN (scripts/test.sh sets it). tshark checks are skipped without tshark.
source "$(dirname "$0")/lib.sh"
[[ -x "$felica" ]] || { echo "30-trace: $felica is missing: build first" >&2; exit 1; }
stage_workdir


shopt -s nullglob
fresh="$work/fresh-dump.jsonl"
"$felica" dump --device 'virtual:suica?timing=212' --trace "$fresh" >/dev/null 2>&1 || fail "recording a dump of virtual:suica failed"

# trace_lines FILE: exchange lines in a trace.
exchanges() { echo $(( $(wc -l <"$1") - 1 )); }

captures=()
# The phone carrying every purse, when this build has it.
card=wallet
"$felica" poll --device virtual:wallet >/dev/null 2>&1 || card=suica
if [[ -x "$sim" ]] && start_pn532 "$work/reader" --card "$card" --timing rf; then
  dev="libnfc:pn532_uart:$work/reader"
  for cmd in poll dump balance; do
    "$felica" help "$cmd" >/dev/null 2>&1 || continue
    capture="$work/libnfc-$cmd.jsonl"
    "$felica" "$cmd" --device "$dev" --trace "$capture" >"$work/live" 2>"$work/err"; live=$?
    "$felica" "$cmd" --device "replay:$capture" >"$work/replayed" 2>"$work/err2"; replayed=$?
    if [[ $live -ne $replayed ]] || ! cmp -s "$work/live" "$work/replayed"; then
      fail "libnfc $cmd: replay (exit $replayed) differs from the capture (exit $live): $(cat "$work/err" "$work/err2")"
    fi
    grep -q "\"device\":\"$dev\"" "$capture" || fail "libnfc $cmd: the header does not name $dev"
    captures+=("$capture")
  done

  # A card pulled mid-dump: the trace holds every exchange up to the failure.
  start_pn532 "$work/pulled" --card suica --remove-after 6
  pulled="$work/libnfc-pulled.jsonl"
  "$felica" dump --device "libnfc:pn532_uart:$work/pulled" --trace "$pulled" >/dev/null 2>"$work/err"; live=$?
  [[ $live -eq 1 ]] || fail "pulled card: dump exit $live, expected 1"
  tail -n 1 "$pulled" | grep -q '"rx":null,"error":"' || fail "pulled card: the trace does not end with the failed exchange: $(tail -n 1 "$pulled")"
  "$felica" dump --device "replay:$pulled" >/dev/null 2>"$work/err2"; replayed=$?
  [[ $replayed -eq $live ]] || fail "pulled card: replay exit $replayed, capture exit $live"
  grep -qE "differs from the recording|trace ends after" "$work/err2" && fail "pulled card: the replay diverged: $(cat "$work/err2")"
  grep -q "(recorded)" "$work/err2" || fail "pulled card: the replayed error is not the recorded one: $(cat "$work/err2")"
  captures+=("$pulled")

  # Killed mid-recording: whatever moment the kill lands, the file holds whole lines.
  killed="$work/libnfc-killed.jsonl"
  "$felica" dump --device "$dev" --trace "$killed" >/dev/null 2>&1 &
  victim=$!
  for _ in $(seq 200); do
    [[ -s "$killed" && $(exchanges "$killed") -ge 5 ]] && break
    sleep 0.01
  done
  kill -9 "$victim" 2>/dev/null; wait "$victim" 2>/dev/null
  n=$(exchanges "$killed")
  if ! "$felica" trace show "$killed" >"$work/out" 2>"$work/err"; then
    fail "killed recording: the trace does not parse: $(cat "$work/err")"
  elif [[ $n -lt 5 ]] || [[ $(grep -c '→' "$work/out") -ne $n ]]; then
    fail "killed recording: $n exchanges on disk, $(grep -c '→' "$work/out") listed"
  fi
elif [[ ! -x "$sim" ]]; then
  fail "no felica-sim next to felica: no capture through libnfc"
fi

if ! command -v tshark >/dev/null; then
  echo "30-trace: tshark not installed; pcap checks skipped (scripts/bootstrap.sh installs it)" >&2
  ((failures)) && exit 1
  exit 0
fi

# Each capture and a fresh recording through the project's dissector: every frame decoded,
# none malformed, fields equal to `felica trace show --json` (the committed traces are
# checked by 35-wireshark.sh).
for trace in "$fresh" "${captures[@]}"; do
  if ! "$felica" trace export "$trace" --pcap "$work/export.pcapng" --lenient 2>"$work/err"; then
    fail "export $trace: $(cat "$work/err")"; continue
  fi
  frames=$(sed -n 's/^wrote \([0-9]*\) frames\{0,1\} to .*/\1/p' "$work/err")
  packets=$(( $(grep -c '"tx"' "$trace") + $(grep -c '"rx":"' "$trace") ))
  [[ "$frames" == "$packets" ]] || fail "export $trace: wrote $frames frames for $packets packets"
done
python3 scripts/check-dissector.py --felica "$felica" --lua Wireshark/felica.lua "$fresh" "${captures[@]}" \
  || fail "tshark with Wireshark/felica.lua: the captures do not decode as trace show does (above)"

if ((failures)); then
  echo "30-trace: $failures failure(s)" >&2
  exit 1
fi
echo "30-trace: ok (captures through libnfc replay; a fresh trace and ${#captures[@]} libnfc captures decoded by the dissector)" >&2
