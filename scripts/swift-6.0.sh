#!/usr/bin/env bash
# Builds and tests felica with Debian 13's own Swift (swiftlang 6.0.3), the oldest compiler
# the package supports, in the trixie root of scripts/trixie-root.sh (made on first use):
#   scripts/swift-6.0.sh build            every product and test target, warnings as errors
#   scripts/swift-6.0.sh test [ARG…]      then swift test (ARG… go to it, e.g. --filter X)
# The build goes to .build/trixie/amd64, apart from the main toolchain's .build.
set -euo pipefail
cd "$(dirname "$0")/.."

flags=(--scratch-path .build/trixie/amd64 -Xswiftc -warnings-as-errors)
env=(env LIBNFC_AUTO_SCAN=false SWIFT_BACKTRACE=enable=no)
case "${1:-}" in
  build) scripts/trixie-root.sh run "${env[@]}" swift build --build-tests "${flags[@]}" ;;
  test)
    shift
    scripts/trixie-root.sh run "${env[@]}" swift build --build-tests "${flags[@]}"
    scripts/trixie-root.sh run "${env[@]}" swift test --skip-build "${flags[@]}" "$@"
    ;;
  *) echo "swift-6.0: say build or test" >&2; exit 64 ;;
esac
