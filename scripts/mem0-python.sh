#!/usr/bin/env bash
# mem0's official Python client (PyPI mem0ai) for the compatibility tests, installed from PyPI
# into a venv under .cache/ (the project's own cache), never from anywhere else.
#   scripts/mem0-python.sh    create .cache/mem0-python with mem0ai if it is not there yet;
#                             prints the venv's python on its last line
# Afterwards MEM0_PYTHON=<that path> is what test/integration/mem0-python.test.ts runs.
set -euo pipefail
# shellcheck source=scripts/pypi-venv.sh
source "$(dirname "${BASH_SOURCE[0]}")/pypi-venv.sh"
venv="$(pypi_venv mem0-python mem0ai "${MEM0_PYTHON_CLIENT_VERSION:-2.2.1}")"
# the client imports (its telemetry off, the config file it writes kept out of $HOME)
config="$(mktemp -d)"
trap 'rm -rf "$config"' EXIT
MEM0_TELEMETRY=False MEM0_DIR="$config" "$venv/bin/python" -c 'from mem0 import AsyncMemoryClient, MemoryClient' >&2
echo "$venv/bin/python"
