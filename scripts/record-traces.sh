#!/usr/bin/env bash
# Re-records the committed traces in Tests/Traces: every built-in sample card, every
# command that talks to a card, through the virtual card answering at real-card speed
# (212 kbit/s), so the timings in the traces are realistic. Run it after a change to the
# commands a card session sends (the replay tests then fail with a divergence error).
#   scripts/record-traces.sh            build, then record
#   FELICA_BIN=<bin dir> scripts/record-traces.sh    use an existing build
set -euo pipefail
cd "$(dirname "$0")/.."

if [[ -z "${FELICA_BIN:-}" ]]; then
  swift build --product felica 2>&1 | grep -v "prohibited flag" >&2
  FELICA_BIN="$(swift build --show-bin-path)"
fi
felica="$FELICA_BIN/felica"
out=Tests/Traces
mkdir -p "$out"

cards=(suica edy nanaco waon wallet octopus octopus-shenzhen univ-coop lite-s aime okica ryuto kmt mrtj fcf ntasu)
# What each card is read with: the purse cards by their profiles, the Lite-S tags (no
# purse) by their NDEF message.
commands_of() {
  case $1 in
    lite-s) echo poll dump ndef ;;
    aime | ntasu) echo poll dump ;;
    *) echo poll dump balance history ;;
  esac
}

for card in "${cards[@]}"; do
  if ! "$felica" poll --device "virtual:$card" >/dev/null 2>&1; then
    echo "record-traces: this build has no sample card '$card'; skipped" >&2
    continue
  fi
  for cmd in $(commands_of "$card"); do
    if ! "$felica" help "$cmd" >/dev/null 2>&1; then
      echo "record-traces: this build has no 'felica $cmd'; skipped" >&2
      continue
    fi
    file="$out/$card-$cmd.jsonl"
    tmp="$file.tmp"
    # A command may fail on a card (balance on a card without a purse): the trace of that
    # session is still a valid recording, so it is kept either way.
    status=0
    "$felica" "$cmd" --device "virtual:$card?timing=212" --trace "$tmp" >/dev/null 2>&1 || status=$?
    if [[ ! -s "$tmp" ]]; then
      echo "record-traces: felica $cmd --device virtual:$card wrote no trace (exit $status)" >&2
      exit 1
    fi
    mv "$tmp" "$file"
    echo "record-traces: $file ($(($(wc -l <"$file") - 1)) exchanges, exit $status)" >&2
  done
done
