#!/usr/bin/env bash
# A package that depends on this one builds without warnings from our C modules: SwiftPM
# refuses, with `warning: prohibited flag(s)`, any pkg-config flag of a dependency's system
# library other than include paths, library paths, libraries and defines (pcsc-lite's
# Cflags carry -pthread). A tiny dependent package in a temporary directory builds the C
# module that read such flags (CPCSCLite), with the rest of our package graph planned; and
# each system library that is still found through pkg-config gives only flags SwiftPM takes.
source "$(dirname "$0")/lib.sh"
stage_workdir

root="$(pwd)"
dep="$work/dependent"
mkdir -p "$dep/Sources/Reader"
cat >"$dep/Package.swift" <<MANIFEST
// swift-tools-version: 6.0
import PackageDescription
let package = Package(
    name: "dependent",
    dependencies: [.package(path: "$root")],
    targets: [
        .executableTarget(name: "Reader", dependencies: [
            .product(name: "FeliCaDevices", package: "$(basename "$root")"),
            .product(name: "FeliCaLog", package: "$(basename "$root")"),
        ]),
    ]
)
MANIFEST
echo 'import FeliCaDevices' >"$dep/Sources/Reader/main.swift"

start=$(now_ms)
if (cd "$dep" && swift build --target CPCSCLite) >"$work/build.log" 2>&1; then
  pass "a dependent package builds our CPCSCLite in $((($(now_ms) - start) / 1000)) s"
else
  fail "a dependent package cannot build CPCSCLite:"; tail -n 20 "$work/build.log" >&2
fi
if grep -i 'warning' "$work/build.log" >"$work/warnings"; then
  fail "the dependent's build warns:"; cat "$work/warnings" >&2
else
  pass "the dependent's build prints no warning (no prohibited pkg-config flag)"
fi

# The system libraries still found through pkg-config: every flag must be one SwiftPM
# passes on for a dependency (-I, -L, -l, -D).
while read -r pc; do
  flags="$(pkg-config --cflags --libs "$pc" 2>&1)" || { fail "pkg-config $pc: $flags"; continue; }
  bad="$(tr ' ' '\n' <<<"$flags" | grep -vE '^$|^-[ILlD]' | tr '\n' ' ')"
  if [[ -z "$bad" ]]; then
    pass "pkg-config $pc gives only flags a dependent may take: $flags"
  else
    fail "pkg-config $pc gives $bad, which SwiftPM refuses in a dependency: drop pkgConfig for that module (see CPCSCLite)"
  fi
done < <(grep -oE 'pkgConfig: "[^"]+"' Package.swift | cut -d'"' -f2)
stage_end
