#!/usr/bin/env bash
# Every shell example of README.md and Docs/ that can run here (virtual cards, recorded
# traces, the USB emulators, tshark) runs, and shows the output its page shows.
source "$(dirname "$0")/lib.sh"
PATH="$bin:$PATH" python3 scripts/doc-examples.py . || fail "the doc examples above"
if ((failures)); then echo "$stage: failed" >&2; exit 1; fi
echo "$stage: ok" >&2
