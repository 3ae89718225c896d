#!/usr/bin/env bash
# Debian 13 (trixie): the Swift tests with Debian's Swift 6.0.3, and the trixie packages for
# amd64 and arm64 proven in a trixie root and under qemu-user: scripts/trixie-check.sh,
# whose root and builds scripts/test.sh prepared in the background while the stages before
# this one ran.
exec bash "$(dirname "$0")/../trixie-check.sh"
