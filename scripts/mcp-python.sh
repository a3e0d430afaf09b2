#!/usr/bin/env bash
# The official MCP Python SDK (PyPI mcp) for the tests of Cairn's MCP server (/mcp), installed from
# PyPI into a venv under .cache/ (the project's own cache), never from anywhere else.
#   scripts/mcp-python.sh    create .cache/mcp-python with mcp if it is not there yet;
#                            prints the venv's python on its last line
# Afterwards MCP_PYTHON=<that path> is what test/integration/mcp-python.test.ts runs.
set -euo pipefail
# shellcheck source=scripts/pypi-venv.sh
source "$(dirname "${BASH_SOURCE[0]}")/pypi-venv.sh"
venv="$(pypi_venv mcp-python mcp "${MCP_PYTHON_CLIENT_VERSION:-1.30.0}")"
# the client the tests drive imports
"$venv/bin/python" -c 'from mcp import ClientSession; from mcp.client.streamable_http import streamablehttp_client' >&2
echo "$venv/bin/python"
