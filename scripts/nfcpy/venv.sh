#!/usr/bin/env bash
# Makes the virtual environment with nfcpy that the benchmarks compare felica against
# (.build/nfcpy-venv; nfcpy is used only as the comparison, never by felica), and prints
# its python. Exits 3 with a message when PyPI cannot be reached, so the caller can skip
# the comparison cleanly.
#   scripts/nfcpy/venv.sh    prints the path of the environment's python
set -euo pipefail
cd "$(dirname "$0")/../.."
venv=.build/nfcpy-venv
version=1.0.4
python="$venv/bin/python"
if [[ -x $python ]] && "$python" -c "import nfc, sys; sys.exit(nfc.__version__ != '$version')" 2>/dev/null; then
  echo "$PWD/$python"
  exit 0
fi
if ! command -v python3 >/dev/null; then
  echo "nfcpy comparison skipped: python3 is not installed" >&2
  exit 3
fi
if ! python3 -m venv "$venv" >/dev/null 2>&1; then
  echo "nfcpy comparison skipped: python3 cannot make a virtual environment (Debian: apt-get install python3-venv)" >&2
  exit 3
fi
if ! "$venv/bin/pip" install --quiet --disable-pip-version-check --timeout 20 "nfcpy==$version" >"$venv/pip.log" 2>&1; then
  echo "nfcpy comparison skipped: could not install nfcpy $version from PyPI (offline?); see $venv/pip.log" >&2
  exit 3
fi
echo "$PWD/$python"
