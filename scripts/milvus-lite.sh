#!/usr/bin/env bash
# Milvus Lite for tests and local development, installed from PyPI into .cache/ (the project's own
# cache), never from anywhere else.
#   scripts/milvus-lite.sh install         create .cache/milvus-venv with pymilvus[milvus-lite]
#   scripts/milvus-lite.sh start [PORT]    install if needed, start on 127.0.0.1:PORT (default 19530), wait until it answers
#   scripts/milvus-lite.sh stop [PORT]     stop the server started by `start`
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cache="$root/.cache"
venv="$cache/milvus-venv"
version="${MILVUS_LITE_VERSION:-3.2.2}"
port="${2:-19530}"

install() {
  if [ -x "$venv/bin/milvus-lite" ] && "$venv/bin/pip" show milvus-lite 2>/dev/null | grep "^Version: $version$" >/dev/null; then
    return 0
  fi
  python="${PYTHON:-python3}"
  "$python" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 10) else 1)' \
    || { echo "Milvus Lite needs Python >= 3.10; set PYTHON to one" >&2; return 1; }
  mkdir -p "$cache"
  "$python" -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check "milvus-lite==$version" "pymilvus[milvus-lite]"
}

listening() { (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; }

start() {
  install
  if listening; then echo "Milvus Lite already answering on 127.0.0.1:$port"; return 0; fi
  data="$cache/milvus-data-$port"
  rm -rf "$data" && mkdir -p "$data"
  nohup "$venv/bin/milvus-lite" server --data-dir "$data" --host 127.0.0.1 --port "$port" \
    >"$cache/milvus-lite-$port.log" 2>&1 &
  echo $! >"$cache/milvus-lite-$port.pid"
  for _ in $(seq 1 120); do
    if listening; then echo "Milvus Lite started on 127.0.0.1:$port"; return 0; fi
    sleep 0.5
  done
  echo "Milvus Lite did not start; its log:" >&2
  tail -n 50 "$cache/milvus-lite-$port.log" >&2
  return 1
}

stop() {
  pidfile="$cache/milvus-lite-$port.pid"
  [ -f "$pidfile" ] || return 0
  kill "$(cat "$pidfile")" 2>/dev/null || true
  rm -f "$pidfile"
}

case "${1:-}" in
  install) install ;;
  start) start ;;
  stop) stop ;;
  *) echo "usage: $0 install|start [PORT]|stop [PORT]" >&2; exit 2 ;;
esac
