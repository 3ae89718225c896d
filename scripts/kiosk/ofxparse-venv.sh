#!/usr/bin/env bash
# Makes the virtual environment with ofxparse (an OFX reader that is not ours, from PyPI)
# that the tests read felica's OFX statements back with (.build/ofxparse-venv), and prints
# its python. Exits 3 with a message when it cannot be made (PyPI unreachable).
set -euo pipefail
cd "$(dirname "$0")/../.."
venv=.build/ofxparse-venv
version=0.21
python="$venv/bin/python"
if [[ -x $python ]] && "$python" -c "import ofxparse" 2>/dev/null; then
  echo "$PWD/$python"
  exit 0
fi
if ! python3 -m venv "$venv" >/dev/null 2>&1; then
  echo "ofxparse: python3 cannot make a virtual environment (Debian: apt-get install python3-venv)" >&2
  exit 3
fi
if ! "$venv/bin/pip" install --quiet --disable-pip-version-check --timeout 20 "ofxparse==$version" >"$venv/pip.log" 2>&1; then
  echo "ofxparse: could not install ofxparse $version from PyPI (offline?); see $venv/pip.log" >&2
  exit 3
fi
echo "$PWD/$python"
