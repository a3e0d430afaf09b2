# Sourced by the scripts that install a Python client from PyPI into a venv under .cache/.
# pypi_venv NAME PACKAGE VERSION: makes .cache/NAME a venv holding PACKAGE==VERSION (from PyPI,
# nothing else) unless it already does, and prints its folder; needs Python >= 3.10 (PYTHON,
# default python3).
pypi_venv() {
  local venv name=$1 package=$2 version=$3
  venv="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/.cache/$name"
  if ! "$venv/bin/python" -m pip show "$package" 2>/dev/null | grep "^Version: $version$" >/dev/null; then
    local python="${PYTHON:-python3}"
    "$python" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 10) else 1)' \
      || { echo "$package $version needs Python >= 3.10; set PYTHON to one" >&2; return 1; }
    # each step returns on failure itself: a command substitution, where this runs, does not inherit `set -e`
    mkdir -p "$(dirname "$venv")" || return 1
    "$python" -m venv "$venv" || return 1
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "$package==$version" >&2 || return 1
  fi
  echo "$venv"
}
