#!/usr/bin/env bash
# Exported traces through tshark: every committed trace (Tests/Traces) and a fresh
# recording are exported with `felica trace export --pcap`; tshark, with USER0 mapped to
# its FeliCa dissector, must decode every frame as FeliCa and report none malformed.
# (The record/replay goldens of the CLI are Swift tests: Tests/FeliCaTraceTests.)
# Needs $FELICA_BIN (scripts/test.sh sets it). Skipped, with a note, without tshark.
set -uo pipefail
cd "$(dirname "$0")/../.."

bin="${FELICA_BIN:-$(swift build --show-bin-path)}"
felica="$bin/felica"
[[ -x "$felica" ]] || { echo "30-trace: $felica is missing: build first" >&2; exit 1; }
if ! command -v tshark >/dev/null; then
  echo "30-trace: tshark not installed; pcap checks skipped (scripts/bootstrap.sh installs it)" >&2
  exit 0
fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }

shopt -s nullglob
committed=(Tests/Traces/*.jsonl)
((${#committed[@]})) || fail "no committed traces in Tests/Traces (run scripts/record-traces.sh)"
fresh="$work/fresh-dump.jsonl"
"$felica" dump --device 'virtual:suica?timing=212' --trace "$fresh" >/dev/null 2>&1 || fail "recording a dump of virtual:suica failed"

user0=(-o 'uat:user_dlts:"User 0 (DLT=147)","felica","0","","0",""')
# Prints the frames of $1 that are not FeliCa or are malformed; fails when there are any
# or when the number of frames is not $2.
check_pcap() {
  local pcap="$1" expected="$2"; shift 2
  local fields
  fields="$(tshark "$@" -r "$pcap" -T fields -E separator='|' -e frame.number -e frame.protocols -e felica.opcode -e _ws.malformed -e _ws.expert.severity 2>/dev/null)" || return 1
  local frames bad
  frames=$(grep -c . <<<"$fields")
  bad="$(awk -F'|' '$2 !~ /(^|:)felica(:|$)/ || $3 == "" || $4 != "" || ($5 != "" && $5 >= 6291456)' <<<"$fields")"
  [[ -z "$bad" && "$frames" -eq "$expected" ]] || { echo "$bad" | head -5; return 1; }
}
for trace in "${committed[@]}" "$fresh"; do
  pcap="$work/$(basename "$trace" .jsonl).pcap"
  if ! "$felica" trace export "$trace" --pcap "$pcap" 2>"$work/err"; then
    fail "export $trace: $(cat "$work/err")"; continue
  fi
  frames=$(sed -n 's/^wrote \([0-9]*\) frames\{0,1\} to .*/\1/p' "$work/err")
  packets=$(( $(grep -c '"tx"' "$trace") + $(grep -c '"rx":"' "$trace") ))
  [[ "$frames" == "$packets" ]] || fail "export $trace: wrote $frames frames for $packets packets"
  check_pcap "$pcap" "$packets" "${user0[@]}" >&2 || fail "tshark: $pcap has frames not decoded as FeliCa or malformed"
done
# The check can fail: without the preference nothing is FeliCa, and a cut response is malformed.
check_pcap "$work/fresh-dump.pcap" "$packets" >/dev/null && fail "tshark check passes without the USER0 preference"
printf '%s\n' '{"format":"felica-trace/1"}' '{"tx":"0600ffff0100","rx":"1401010112031234"}' >"$work/malformed.jsonl"
"$felica" trace export "$work/malformed.jsonl" --pcap "$work/malformed.pcap" 2>/dev/null
check_pcap "$work/malformed.pcap" 2 "${user0[@]}" >/dev/null && fail "tshark check passes a truncated Polling response"

if ((failures)); then
  echo "30-trace: $failures failure(s)" >&2
  exit 1
fi
echo "30-trace: ok (${#committed[@]} committed traces and a fresh one, every frame decoded as FeliCa)" >&2
