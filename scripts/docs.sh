#!/usr/bin/env bash
# Builds the DocC catalog of every library module (Sources/<Module>/<Module>.docc) with
# warnings as errors: a broken symbol link or a malformed doc comment fails the build.
# Archives land in .build/docs/<Module>.doccarchive.
#
#   scripts/docs.sh              every module
#   scripts/docs.sh FeliCa ...   only these
set -euo pipefail
cd "$(dirname "$0")/.."

modules=("$@")
if ((${#modules[@]} == 0)); then
  modules=(FeliCa FeliCaReaderCodecs FeliCaTransportSupport FeliCaFiles FeliCaJSON FeliCaSimulation FeliCaEmulators FeliCaCards FeliCaNDEF FeliCaSecurity FeliCaTrace FeliCaScheduling FeliCaLibNFC FeliCaPN532 FeliCaPCSC FeliCaUSB FeliCaDevices FeliCaDiagnosis FeliCaLog FeliCaDelivery FeliCaCLI FeliCaSimCommands)
fi

docc=$(dirname "$(readlink -f "$(command -v swift)")")/docc
[[ -x "$docc" ]] || docc=$(command -v docc) || { echo "docs: no docc beside swift or on PATH" >&2; exit 1; }

out=.build/docs
mkdir -p "$out"

# Symbol graphs of the public API, from the normal debug build (no extra compiler flags,
# so this reuses the build test.sh made instead of rebuilding).
echo "docs: dumping symbol graphs" >&2
if ! swift package dump-symbol-graph --minimum-access-level public >"$out/symbol-graph.log" 2>&1; then
  grep -v "prohibited flag" "$out/symbol-graph.log" >&2
  echo "docs: FAILED: swift package dump-symbol-graph" >&2
  exit 1
fi
graphs=$(sed -n 's/^Files written to //p' "$out/symbol-graph.log" | tail -n 1)
[[ -d "$graphs" ]] || { echo "docs: symbol graphs not found (see $out/symbol-graph.log)" >&2; exit 1; }

status=0
for m in "${modules[@]}"; do
  catalog="Sources/$m/$m.docc"
  if [[ ! -d "$catalog" ]]; then
    echo "docs: FAILED: $m has no catalog at $catalog" >&2
    status=1
    continue
  fi
  # Only this module's graphs (its own and its extensions of other modules' types).
  sg="$out/graphs/$m"
  rm -rf "$sg" && mkdir -p "$sg"
  cp "$graphs/$m.symbols.json" "$sg/"
  for f in "$graphs/$m@"*.symbols.json; do [[ -e "$f" ]] && cp "$f" "$sg/"; done
  if "$docc" convert "$catalog" \
      --additional-symbol-graph-dir "$sg" \
      --fallback-display-name "$m" --fallback-bundle-identifier "felica.$m" \
      --output-path "$out/$m.doccarchive" \
      --warnings-as-errors >"$out/$m.log" 2>&1; then
    echo "docs: $m ok" >&2
  else
    grep -E "warning|error" -A3 "$out/$m.log" | head -n 60 >&2
    echo "docs: FAILED: $m (full log: $out/$m.log)" >&2
    status=1
  fi
done
exit $status
