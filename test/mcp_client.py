"""The official MCP Python SDK (PyPI mcp) driving Cairn's /mcp, for test/integration/mcp-python.test.ts.

Reads its target from the environment (CAIRN_MCP_URL, CAIRN_KEY, CAIRN_OTHER_KEY and the names
CAIRN_SCHEMA, CAIRN_KB, CAIRN_INDEX, CAIRN_AGENT, CAIRN_USER), calls every tool through
streamablehttp_client + ClientSession, and prints one JSON line per step:
{"step", "is_error", "result"} (the structured content, else the text), then {"done": true}.
"""

import asyncio
import json
import os
import sys
import time

from mcp import ClientSession
from mcp.client.streamable_http import streamablehttp_client

URL = os.environ["CAIRN_MCP_URL"]
USER = os.environ["CAIRN_USER"]
# how long memories may take to be indexed (searchable)
INDEXED_WITHIN_S = 60


def emit(step, is_error, result):
    print(json.dumps({"step": step, "is_error": is_error, "result": result}), flush=True)


async def call(session, step, tool, arguments):
    result = await session.call_tool(tool, arguments)
    text = result.content[0].text if result.content else None
    emit(step, bool(result.isError), result.structuredContent if result.structuredContent is not None else text)
    return result


async def searched(session, query, want):
    """Searches until `want` memories are found (they are indexed in the background)."""
    deadline = time.monotonic() + INDEXED_WITHIN_S
    while True:
        result = await session.call_tool("search_memories", {"query": query, "user_id": USER})
        found = (result.structuredContent or {}).get("results", [])
        if len(found) >= want or time.monotonic() > deadline:
            emit("search_memories", bool(result.isError), result.structuredContent)
            return found
        await asyncio.sleep(0.1)


async def as_project_a(session):
    tools = await session.list_tools()
    emit("list_tools", False, [{"name": t.name, "description": t.description, "inputSchema": t.inputSchema} for t in tools.tools])
    added = await call(session, "add_memory", "add_memory", {"text": "I drink green tea every morning.", "user_id": USER, "infer": False})
    memory_id = added.structuredContent["results"][0]["id"]
    await call(session, "add_memory_messages", "add_memory", {"messages": [{"role": "user", "content": "My sister lives in Lisbon."}], "user_id": USER, "infer": False})
    await searched(session, "what does the user drink in the morning?", 2)
    await call(session, "list_memories", "list_memories", {"user_id": USER})
    await call(session, "get_memory", "get_memory", {"memory_id": memory_id})
    await call(session, "update_memory", "update_memory", {"memory_id": memory_id, "text": "I drink oolong tea every morning."})
    await call(session, "search_knowledge", "search_knowledge", {"knowledge_bases": [os.environ["CAIRN_KB"]], "query": "who gives out food for the goats?", "top_k": 2})
    schema = os.environ["CAIRN_SCHEMA"]
    await call(session, "store_record", "store_record", {"schema": schema, "record": {"name": "Ana Lopez", "email": "ana@example.com"}, "user_id": USER})
    await call(session, "extract_record", "extract_record", {"schema": schema, "text": "Hi, I'm Jane Doe. Reach me at jane@acme.com.", "user_id": USER})
    await call(session, "query_index", "query_index", {"index": os.environ["CAIRN_INDEX"], "text": "a kitten by the window", "top_k": 2, "include_metadata": True})
    await call(session, "chat_agent", "chat_agent", {"agent": os.environ["CAIRN_AGENT"], "message": "Who do I ask before feeding the goats?"})
    await call(session, "bad_arguments", "add_memory", {"text": "hello", "user_id": 5})
    resources = await session.list_resources()
    emit("list_resources", False, [str(r.uri) for r in resources.resources])
    await call(session, "delete_memory", "delete_memory", {"memory_id": memory_id})
    await call(session, "get_deleted", "get_memory", {"memory_id": memory_id})
    return memory_id


async def main():
    async with streamablehttp_client(URL, headers={"Authorization": f"Token {os.environ['CAIRN_KEY']}"}) as (read, write, _):
        async with ClientSession(read, write) as session:
            info = await session.initialize()
            emit("initialize", False, {"name": info.serverInfo.name, "protocolVersion": info.protocolVersion})
            await as_project_a(session)
            kept = await session.call_tool("add_memory", {"text": "My PIN is in the blue notebook.", "user_id": USER, "infer": False})
            kept_id = kept.structuredContent["results"][0]["id"]
    async with streamablehttp_client(URL, headers={"Authorization": f"Bearer {os.environ['CAIRN_OTHER_KEY']}"}) as (read, write, _):
        async with ClientSession(read, write) as session:
            await session.initialize()
            await call(session, "other_project_get", "get_memory", {"memory_id": kept_id})
            await call(session, "other_project_agent", "chat_agent", {"agent": os.environ["CAIRN_AGENT"], "message": "hello"})
    try:
        async with streamablehttp_client(URL, headers={"Authorization": "Token cairn_not_a_real_key"}) as (read, write, _):
            async with ClientSession(read, write) as session:
                await asyncio.wait_for(session.initialize(), 10)
        emit("wrong_key", False, "connected")
    except BaseException as err:  # the client raises an ExceptionGroup from its task group
        emit("wrong_key", True, describe(err))
    print(json.dumps({"done": True}), flush=True)


def describe(err):
    """The HTTP status an error (or the first in an exception group) carries, else its text."""
    while isinstance(err, BaseExceptionGroup) and err.exceptions:
        err = err.exceptions[0]
    response = getattr(err, "response", None)
    return {"type": type(err).__name__, "status": getattr(response, "status_code", None), "message": str(err)[:300]}


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except Exception as err:  # a failure the test reports with the driver's output
        print(json.dumps({"fatal": repr(err)[:2000]}), flush=True)
        sys.exit(1)
