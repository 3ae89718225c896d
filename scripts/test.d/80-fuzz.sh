#!/usr/bin/env bash
# Every fuzz target briefly (FUZZ_SECONDS each, default 15), so regressions show in CI.
set -euo pipefail
cd "$(dirname "$0")/../.."
scripts/fuzz.sh all "${FUZZ_SECONDS:-15}"
