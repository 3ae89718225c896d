#!/usr/bin/env bash
# Traces end to end, through the built `felica` executable:
#   - golden: a command recorded with --trace on a virtual card, replayed with
#     --device replay:, prints byte-identical stdout (every sample card, every command);
#   - the committed traces in Tests/Traces replay to the same output as a live run;
#   - a dump trace replayed for `balance` fails with the divergence error, exit 1;
#   - damaged traces: strict replay names the line, ?lenient replays what is left;
#   - tshark decodes every exported frame as FeliCa and reports none malformed.
# Needs $FELICA_BIN (scripts/test.sh sets it); tshark checks are skipped without tshark.
set -uo pipefail
cd "$(dirname "$0")/../.."

bin="${FELICA_BIN:-$(swift build --show-bin-path)}"
felica="$bin/felica"
[[ -x "$felica" ]] || { echo "30-trace: $felica is missing: build first" >&2; exit 1; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

failures=0
pass() { :; }
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }

cards=(suica edy nanaco waon wallet)
commands=(poll dump balance history)
have_command() { "$felica" help "$1" >/dev/null 2>&1; }
have_card() { "$felica" poll --device "virtual:$1" >/dev/null 2>&1; }

# Runs felica with args; stores stdout in $work/out, stderr in $work/err, exit in $rc.
run() { "$felica" "$@" >"$work/out" 2>"$work/err"; rc=$?; }

# --- golden: record, then replay -------------------------------------------------------
for cmd in "${commands[@]}"; do
  have_command "$cmd" || { echo "30-trace: no 'felica $cmd' in this build; golden skipped" >&2; continue; }
  for card in "${cards[@]}"; do
    have_card "$card" || continue
    for json in "" "--json"; do
      trace="$work/$card-$cmd.jsonl"
      run "$cmd" --device "virtual:$card" --trace "$trace" $json
      live_rc=$rc; cp "$work/out" "$work/live"
      [[ -s "$trace" ]] || { fail "$cmd $json on $card: --trace wrote nothing"; continue; }
      run "$cmd" --device "replay:$trace" $json
      if [[ $rc -ne $live_rc ]]; then
        fail "$cmd $json on $card: replay exit $rc, live exit $live_rc: $(cat "$work/err")"
      elif ! cmp -s "$work/live" "$work/out"; then
        fail "$cmd $json on $card: replayed stdout differs from the live run"
        diff "$work/live" "$work/out" | head -5 >&2
      fi
      # The replay uses the whole trace: recording the replay gives the same packets.
      run "$cmd" --device "replay:$trace" --trace "$work/again.jsonl" $json
      if ! diff <(grep -o '"tx":"[0-9a-f]*"' "$trace") <(grep -o '"tx":"[0-9a-f]*"' "$work/again.jsonl") >/dev/null; then
        fail "$cmd $json on $card: re-recording the replay sent other commands"
      fi
    done
  done
done

# --- committed traces replay like the live card ---------------------------------------
shopt -s nullglob
committed=(Tests/Traces/*.jsonl)
((${#committed[@]})) || fail "no committed traces in Tests/Traces (run scripts/record-traces.sh)"
for trace in "${committed[@]}"; do
  base="$(basename "$trace" .jsonl)"
  card="${base%-*}"; cmd="${base##*-}"
  have_command "$cmd" || { fail "$trace: this build has no 'felica $cmd'"; continue; }
  run trace show "$trace"
  [[ $rc -eq 0 ]] || fail "trace show $trace: exit $rc: $(cat "$work/err")"
  grep -q "undecodable" "$work/out" && fail "trace show $trace: a packet does not decode"
  run "$cmd" --device "virtual:$card"
  live_rc=$rc; cp "$work/out" "$work/live"
  run "$cmd" --device "replay:$trace"
  if [[ $rc -ne $live_rc ]] || ! cmp -s "$work/live" "$work/out"; then
    fail "$trace: replay (exit $rc) differs from live virtual:$card (exit $live_rc) — if the session changed on purpose, run scripts/record-traces.sh. $(head -3 "$work/err")"
  fi
done

# --- a trace replayed for another command diverges -------------------------------------
for source in history dump; do
  have_command "$source" || continue
  trace="$work/cross-$source.jsonl"
  "$felica" "$source" --device virtual:suica --trace "$trace" >/dev/null 2>&1
  run balance --device "replay:$trace"
  [[ $rc -eq 1 ]] || fail "balance on a $source trace: exit $rc, expected 1"
  grep -q "exchange [0-9]* (line [0-9]*) differs from the recording" "$work/err" || fail "balance on a $source trace: no divergence error: $(cat "$work/err")"
  grep -q "\^\^ first difference at byte" "$work/err" || fail "balance on a $source trace: no marked byte"
  [[ -s "$work/out" ]] && fail "balance on a $source trace printed to stdout"
  break
done

# --- damaged traces ----------------------------------------------------------------------
good="$work/suica-dump-good.jsonl"
"$felica" dump --device virtual:suica --trace "$good" >/dev/null 2>&1
lines=$(wc -l <"$good")
cut="$work/cut.jsonl"
head -c $(($(head -n 4 "$good" | wc -c) + 20)) "$good" >"$cut"   # header, 3 exchanges, part of the 4th
run dump --device "replay:$cut"
[[ $rc -eq 1 ]] || fail "cut trace: exit $rc, expected 1"
grep -q "cut.jsonl line 5, column .*cut off" "$work/err" || fail "cut trace: error does not name line 5: $(cat "$work/err")"
run dump --device "replay:$cut?lenient"
[[ $rc -eq 1 ]] || fail "lenient cut trace: exit $rc, expected 1 (it runs out)"
grep -q "warning: .*line 5" "$work/err" || fail "lenient cut trace: no warning naming the damage"
grep -q "replaying the 3 exchanges before the damage" "$work/err" || fail "lenient cut trace: warning does not count the usable exchanges"
grep -q "the trace ends after 3 exchanges; the lenient replay stopped at the damage" "$work/err" || fail "lenient cut trace: no exhausted error: $(cat "$work/err")"
run trace show "$cut"
[[ $rc -eq 1 && $(grep -c '→' "$work/out") -eq 3 ]] || fail "trace show of a cut trace: exit $rc, $(grep -c '→' "$work/out") commands listed, expected exit 1 and 3"
run trace show "$work/missing.jsonl"
[[ $rc -eq 1 ]] && grep -q "cannot open trace .*missing.jsonl: No such file" "$work/err" || fail "trace show of a missing file: exit $rc: $(cat "$work/err")"
run trace export "$good"
[[ $rc -eq 64 ]] || fail "trace export without --pcap: exit $rc, expected 64"
[[ $lines -gt 5 ]] || fail "the dump trace has only $lines lines"

# --- tshark: every frame is FeliCa, none malformed --------------------------------------
if ! command -v tshark >/dev/null; then
  echo "30-trace: tshark not installed; pcap checks skipped (scripts/bootstrap.sh installs it)" >&2
else
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
  for trace in "${committed[@]}" "$good"; do
    pcap="$work/$(basename "$trace" .jsonl).pcap"
    run trace export "$trace" --pcap "$pcap"
    [[ $rc -eq 0 ]] || { fail "export $trace: exit $rc: $(cat "$work/err")"; continue; }
    frames=$(sed -n 's/^wrote \([0-9]*\) frames\{0,1\} to .*/\1/p' "$work/err")
    packets=$(( $(grep -c '"tx"' "$trace") + $(grep -c '"rx":"' "$trace") ))
    [[ "$frames" == "$packets" ]] || fail "export $trace: wrote $frames frames for $packets packets"
    check_pcap "$pcap" "$packets" "${user0[@]}" >&2 || fail "tshark: $pcap has frames not decoded as FeliCa or malformed"
  done
  # The check can fail: without the preference nothing is FeliCa, and a cut response is malformed.
  check_pcap "$work/suica-dump-good.pcap" "$packets" >/dev/null && fail "tshark check passes without the USER0 preference"
  printf '%s\n' '{"format":"felica-trace/1"}' '{"tx":"0600ffff0100","rx":"1401010112031234"}' >"$work/malformed.jsonl"
  "$felica" trace export "$work/malformed.jsonl" --pcap "$work/malformed.pcap" 2>/dev/null
  check_pcap "$work/malformed.pcap" 2 "${user0[@]}" >/dev/null && fail "tshark check passes a truncated Polling response"
fi

if ((failures)); then
  echo "30-trace: $failures failure(s)" >&2
  exit 1
fi
echo "30-trace: ok (${#committed[@]} committed traces)" >&2
