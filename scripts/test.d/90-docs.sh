#!/usr/bin/env bash
# Every module's DocC catalog builds with warnings as errors.
set -euo pipefail
exec "$(dirname "$0")/../docs.sh"
