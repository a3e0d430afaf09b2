#!/usr/bin/env bash
# mem0's official Python client (PyPI mem0ai) for the compatibility tests, installed from PyPI
# into a venv under .cache/ (the project's own cache), never from anywhere else.
#   scripts/mem0-python.sh    create .cache/mem0-python with mem0ai if it is not there yet;
#                             prints the venv's python on its last line
# Afterwards MEM0_PYTHON=<that path> is what test/integration/mem0-python.test.ts runs.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="$root/.cache/mem0-python"
version="${MEM0_PYTHON_CLIENT_VERSION:-2.2.1}"

if ! "$venv/bin/python" -m pip show mem0ai 2>/dev/null | grep -q "^Version: $version$"; then
  python="${PYTHON:-python3}"
  "$python" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 10) else 1)' \
    || { echo "mem0ai $version needs Python >= 3.10; set PYTHON to one" >&2; exit 1; }
  mkdir -p "$root/.cache"
  "$python" -m venv "$venv"
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "mem0ai==$version" >&2
fi
# the client imports (its telemetry off, the config file it writes kept out of $HOME)
config="$(mktemp -d)"
trap 'rm -rf "$config"' EXIT
MEM0_TELEMETRY=False MEM0_DIR="$config" "$venv/bin/python" -c 'from mem0 import AsyncMemoryClient, MemoryClient' >&2
echo "$venv/bin/python"
