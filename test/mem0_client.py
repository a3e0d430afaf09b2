"""mem0's official Python client (PyPI mem0ai) driven by the compatibility tests, one JSON line per call.

Reads lines {"client": NAME, "method": M, "args": [...], "kwargs": {...}} on stdin and answers each
with one line {"ok": RESULT} or {"error": {"type": CLASS, "message": TEXT, "status": HTTP_STATUS}} on stdout.
Method "init" makes client NAME: kwargs {kind: "sync" | "async", api_key, host}; it answers what the
constructor learnt from GET /v1/ping/. Any other method is called on client NAME as a user would call
it (an AsyncMemoryClient's coroutines are awaited on one event loop).
Run with MEM0_TELEMETRY=False (no analytics leave the machine) and MEM0_DIR set (its config file).
"""

import asyncio
import inspect
import json
import sys

from mem0 import AsyncMemoryClient, MemoryClient

clients = {}
loop = asyncio.new_event_loop()


def init(name, kind, api_key, host):
    client = (MemoryClient if kind == "sync" else AsyncMemoryClient)(api_key=api_key, host=host)
    clients[name] = client
    return {
        "class": type(client).__name__,
        "org_id": client.org_id,
        "project_id": client.project_id,
        "user_email": client.user_email,
        "project": {"org_id": client.project.org_id, "project_id": client.project.project_id},
    }


def call(request):
    name, method = request["client"], request["method"]
    args, kwargs = request.get("args", []), request.get("kwargs", {})
    if method == "init":
        return init(name, **kwargs)
    result = getattr(clients[name], method)(*args, **kwargs)
    return loop.run_until_complete(result) if inspect.isawaitable(result) else result


for line in sys.stdin:
    if not line.strip():
        continue
    try:
        answer = {"ok": call(json.loads(line))}
    except Exception as err:  # every failure goes back to the test, which asserts on it
        status = (getattr(err, "debug_info", None) or {}).get("status_code")
        answer = {"error": {"type": type(err).__name__, "message": str(err), "status": status}}
    print(json.dumps(answer), flush=True)
