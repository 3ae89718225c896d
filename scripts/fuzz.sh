#!/usr/bin/env bash
# Builds the libFuzzer targets in Fuzz/ and runs them.
#   scripts/fuzz.sh                 every target, 20 s each (as many at once as cores)
#   scripts/fuzz.sh FuzzCodec 600   one target for 10 minutes
# Seeds come from Fuzz/Corpus/<target> (committed); inputs the fuzzer finds go to
# .build/fuzz/corpus/<target>; a crash leaves its input in .build/fuzz/artifacts and
# fails the run (turn it into a regression test, then add it to the seeds).
set -euo pipefail
cd "$(dirname "$0")/.."

target="${1:-all}"
seconds="${2:-20}"
export SWIFT_BACKTRACE=enable=no   # a crash report can hang under the fuzzer

(cd Fuzz && swift build -c debug -Xswiftc -warnings-as-errors -Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library \
   -Xswiftc -use-ld=lld 2>&1 | grep -E "error|warning: .*\.swift" >&2 || true)
bin="Fuzz/.build/debug"

if [[ "$target" == all ]]; then
  targets=$(sed -n 's/.*name: "\(Fuzz[A-Za-z0-9]*\)".*/\1/p' Fuzz/Package.swift | grep -v FuzzSupport)
else
  targets="$target"
fi

# Extra libFuzzer flags per target. FuzzSession and FuzzTrace run Swift concurrency, whose pools keep
# allocations from one input to the next: libFuzzer would run a leak scan after every
# input (4x slower) and find only those pools.
extra_flags() { case $1 in FuzzSession | FuzzTrace) echo "-detect_leaks=0" ;; esac; }

# One target, its line on stderr; exit status 1 when it found a crash or did not build.
fuzz_one() {
  local t=$1
  [[ -x "$bin/$t" ]] || { echo "fuzz: $t did not build" >&2; return 1; }
  mkdir -p ".build/fuzz/corpus/$t" ".build/fuzz/artifacts/$t" "Fuzz/Corpus/$t"
  local log=".build/fuzz/$t.log"
  # shellcheck disable=SC2046
  if "$bin/$t" -max_total_time="$seconds" -timeout=5 -rss_limit_mb=2048 -print_final_stats=1 $(extra_flags "$t") \
       -artifact_prefix=".build/fuzz/artifacts/$t/" ".build/fuzz/corpus/$t" "Fuzz/Corpus/$t" >"$log" 2>&1; then
    local runs cov
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
    cov=$(grep -o 'cov: [0-9]* ft: [0-9]* corp: [0-9]*' "$log" | tail -n 1)
    echo "fuzz: $t ok — $runs runs in ${seconds}s, $cov" >&2
  else
    { echo "fuzz: $t FAILED — see $log; crashing input in .build/fuzz/artifacts/$t/"
      grep -E "ERROR|Fatal error|precondition|SUMMARY" "$log" | head -n 5; } >&2
    return 1
  fi
}

# Each fuzzer is one thread: as many run at once as there are cores (FUZZ_JOBS to choose).
jobs="${FUZZ_JOBS:-$(nproc)}"
status=0
running=0
for t in $targets; do
  if ((running >= jobs)); then
    wait -n || status=1
    running=$((running - 1))
  fi
  fuzz_one "$t" &
  running=$((running + 1))
done
while ((running > 0)); do
  wait -n || status=1
  running=$((running - 1))
done
exit $status
