#!/usr/bin/env bash
# Not yet a stage of scripts/test.sh (see "Status" in Docs/install.md); run by hand:
#   bash scripts/trixie/swift-6.0-stage.sh
# The second toolchain: Debian 13's own Swift (swiftlang 6.0.3), in the trixie root that
# scripts/trixie-root.sh makes (debootstrap, kept under .build/trixie). Every product and
# test target builds with it, warnings as errors, and the Swift tests pass with it, in
# that root (with its pcscd, vpcd, umockdev and libnfc). scripts/swift-6.0.sh is the same
# build and test by hand.
source "$(dirname "$0")/../test.d/lib.sh"
stage_workdir

for tool in debootstrap unshare chroot; do
  command -v "$tool" >/dev/null || { fail "$tool is missing: run scripts/bootstrap.sh"; stage_end; }
done

start=$(now_ms)
if scripts/trixie-root.sh >"$work/root.log" 2>&1; then
  pass "trixie root ready in $((($(now_ms) - start) / 1000)) s ($(du -sh .build/trixie/root 2>/dev/null | cut -f1))"
else
  fail "scripts/trixie-root.sh failed:"; tail -n 30 "$work/root.log" >&2; stage_end
fi

start=$(now_ms)
if scripts/swift-6.0.sh build >"$work/build.log" 2>&1; then
  pass "Swift 6.0.3 builds every product and test target, warnings as errors, in $((($(now_ms) - start) / 1000)) s"
else
  fail "the build with Swift 6.0.3 failed:"; grep -E "error|warning:" "$work/build.log" | grep -v "prohibited flag" | head -n 40 >&2
  stage_end
fi

start=$(now_ms)
if scripts/swift-6.0.sh test >"$work/test.log" 2>&1; then
  pass "Swift 6.0.3: swift test passes in $((($(now_ms) - start) / 1000)) s: $(grep -E "^✔ Test run|Executed [0-9]+ tests" "$work/test.log" | tail -n 2 | tr '\n' ' ')"
else
  fail "swift test with Swift 6.0.3:"
  grep -E "✘|error:|Fatal|crashed" "$work/test.log" | head -n 60 >&2
  tail -n 3 "$work/test.log" >&2
  mkdir -p .build/test-logs && cp "$work/test.log" .build/test-logs/swift-6.0-test.log
fi
stage_end
