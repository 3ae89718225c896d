#!/usr/bin/env bash
# `felica bench order` through real libnfc: `felica-sim pn532 --timing rf` serves a
# two-system card (8B61, FE00) on a pseudo-terminal; the benchmark must detect FE00 at
# every position, see the cost of each code the card lacks grow the detection time, and
# list both systems with wildcard Polling + Request System Code in two exchanges.
set -uo pipefail
cd "$(dirname "$0")/../.."

bin="${FELICA_BIN:-$(swift build --show-bin-path)}"
felica="$bin/felica"
sim="$bin/felica-sim"
export LIBNFC_AUTO_SCAN=false
export LIBNFC_LOG_LEVEL=0
unset LIBNFC_DEVICE FELICA_DEVICE

tmp="$(mktemp -d)"
pid=""
cleanup() {
  [[ -n "$pid" ]] && { kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; }
  rm -rf "$tmp"
}
trap cleanup EXIT

cat >"$tmp/edy.json" <<'CARD'
{"format":"felica-card/1","pmm":"100b4b428485d0ff","systems":[{"code":"8b61","services":[]},{"code":"fe00","services":[]}]}
CARD

"$sim" pn532 --card "$tmp/edy.json" --link "$tmp/pty" --timing rf >"$tmp/sim.out" 2>"$tmp/sim.err" &
pid=$!
for _ in $(seq 100); do
  [[ -L "$tmp/pty" && -s "$tmp/sim.out" ]] && break
  sleep 0.05
done
if [[ ! -L "$tmp/pty" ]]; then
  echo "FAIL emulator did not start:" >&2; cat "$tmp/sim.err" >&2; exit 1
fi

if ! "$felica" bench order --device "libnfc:pn532_uart:$tmp/pty" --positions 0-4,12 --repeat 2 --json \
    --plot "$tmp/plot.svg" >"$tmp/bench.json" 2>"$tmp/bench.err"; then
  echo "FAIL felica bench order via libnfc:" >&2; cat "$tmp/bench.err" >&2; exit 1
fi

python3 - "$tmp/bench.json" "$tmp/plot.svg" <<'PY'
import json, sys, xml.dom.minidom
report = json.load(open(sys.argv[1]))
problems = []
rows = report["rows"]
if [r["position"] for r in rows] != [0, 1, 2, 3, 4, 12]:
    problems.append("positions %r" % [r["position"] for r in rows])
if not all(r["detected"] for r in rows):
    problems.append("not every position detected: %r" % report["neverDetected"])
means = [r["mean"] for r in rows]
if any(b <= a for a, b in zip(means, means[1:])):
    problems.append("detection time does not grow with position: %r" % means)
fit = report["fit"]
# Each code the card lacks costs at least a Polling window on the air (~3.6 ms).
if not fit or fit["perCode"] < 0.0036 or fit["r2"] < 0.95:
    problems.append("fit %r" % fit)
w = report["wildcard"]
if w.get("exchanges") != 2 or w.get("systems") != ["8b61", "fe00"]:
    problems.append("wildcard listing %r" % w)
if report["system"] != "fe00" or not report["device"].startswith("libnfc:pn532_uart:"):
    problems.append("header %r %r" % (report["system"], report["device"]))
xml.dom.minidom.parse(sys.argv[2])
if problems:
    print("FAIL bench order via libnfc: " + "; ".join(problems), file=sys.stderr)
    sys.exit(1)
print("ok   bench order via libnfc + PN532 emulator: %.2f ms per code, wildcard + RSC %.2f ms"
      % (fit["perCode"] * 1000, w["time"] * 1000), file=sys.stderr)
PY
