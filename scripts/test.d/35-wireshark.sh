#!/usr/bin/env bash
# The project's Wireshark dissector (Wireshark/felica.lua), through real tshark:
#  1. every trace in Tests/Traces and the hand-made trace of every command the codec knows
#     (Tests/Dissector/every-command.jsonl), exported as pcapng and as classic pcap, decode
#     with no malformed frame and no expert warning, and the fields tshark shows (codes,
#     IDm, services, nodes, block numbers and data, key versions, status flags, system
#     codes, direction, device) equal what `felica trace show --json` prints;
#  2. deliberately damaged frames (truncated, LEN disagreeing, trailing bytes, unknown
#     code, bad counts, wrong direction) carry the matching expert info;
#  3. the check fails without the dissector; installed in the personal plugin folder, tshark
#     loads it without -X; and the transit balance the dissector reads
#     from a Suica trace is the one `felica balance` reports for it.
# Needs $FELICA_BIN (scripts/test.sh sets it) and tshark built with Lua.
source "$(dirname "$0")/lib.sh"
[[ -x "$felica" ]] || { echo "35-wireshark: $felica is missing: build first" >&2; exit 1; }
if ! command -v tshark >/dev/null; then
  echo "35-wireshark: tshark not installed; skipped (scripts/bootstrap.sh installs it)" >&2
  exit 0
fi
tshark -v 2>/dev/null | grep -q "with Lua" || { echo "35-wireshark: this tshark is built without Lua; the dissector cannot load" >&2; exit 1; }
lua=Wireshark/felica.lua
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

shopt -s nullglob
traces=(Tests/Traces/*.jsonl Tests/Dissector/*.jsonl)
((${#traces[@]} > 1)) || fail "no traces to decode in Tests/Traces"
python3 scripts/check-dissector.py --felica "$felica" --lua "$lua" --damaged "${traces[@]}" || fail "the dissector disagrees with felica trace show (above)"

# Without the dissector the same check must fail: nothing is decoded as FeliCa.
: >"$work/empty.lua"
python3 scripts/check-dissector.py --felica "$felica" --lua "$work/empty.lua" Tests/Dissector/every-command.jsonl 2>/dev/null \
  && fail "the check passes without the dissector"

# Installed as Docs/traces.md says (the personal plugin folder), tshark loads it unasked.
mkdir -p "$work/home/.local/lib/wireshark/plugins"
cp "$lua" "$work/home/.local/lib/wireshark/plugins/"
"$felica" trace export Tests/Dissector/every-command.jsonl --pcap "$work/every.pcapng" 2>/dev/null || fail "export every-command.jsonl"
n=$(HOME="$work/home" tshark -r "$work/every.pcapng" -Y 'felica.service == 0x090f' 2>/dev/null | grep -c .)
[[ "$n" -ge 2 ]] || fail "installed in ~/.local/lib/wireshark/plugins, the dissector does not filter felica.service == 0x090f ($n frames)"

# The transit bonus: the balance in a Suica read reply is the one felica balance reports.
for trace in Tests/Traces/suica-balance.jsonl; do
  [[ -e "$trace" ]] || continue
  "$felica" trace export "$trace" --pcap "$work/balance.pcapng" 2>/dev/null || { fail "export $trace"; continue; }
  seen=$(tshark -X "lua_script:$lua" -r "$work/balance.pcapng" -Y 'felica.code == 0x07 && felica.block.service == 0x008b' -T fields -E occurrence=f -e felica.transit.balance 2>/dev/null | head -n 1)
  reported=$("$felica" balance --device "replay:$trace" --json 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)["purses"][0]["balance"])' 2>/dev/null)
  [[ -n "$seen" && "$seen" == "$reported" ]] || fail "$trace: the dissector reads balance '$seen', felica balance reports '$reported'"
done

if ((failures)); then
  echo "35-wireshark: $failures failure(s)" >&2
  exit 1
fi
echo "35-wireshark: ok (${#traces[@]} traces decoded by Wireshark/felica.lua as pcapng and pcap, fields equal to trace show --json; damaged frames flagged)" >&2
