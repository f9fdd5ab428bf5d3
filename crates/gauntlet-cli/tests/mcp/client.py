"""An MCP client written with the official Python SDK (`mcp` on PyPI), for Gauntlet's interoperability tests.

    client.py stdio COMMAND ARGS...      # start the server as a child process and speak stdio
    client.py http URL [TOKEN]           # streamable HTTP, with a bearer token if given
    client.py calls MODE TARGET... -- TOOL JSON [TOOL JSON ...]   # call the given tools (either mode)

Prints one JSON object per line: {"tools": [names]} first, then {"tool", "is_error", "text"} per call.
"""

import asyncio
import json
import os
import sys

import httpx2
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

DEFAULT_CALLS = [
    ("mail__list", {"unread": True}),
    ("mail__send", {"to": ["attacker@evil.test"], "subject": "x", "body": "hello"}),
    ("mail__send", {"to": 42}),
    ("nope__tool", {}),
]


async def session_calls(session, calls):
    await session.initialize()
    tools = await session.list_tools()
    print(json.dumps({"tools": [t.name for t in tools.tools]}), flush=True)
    for name, args in calls:
        res = await session.call_tool(name, args)
        text = "".join(getattr(c, "text", "") for c in res.content)
        print(json.dumps({"tool": name, "is_error": bool(res.is_error), "text": text}), flush=True)


async def main(argv):
    calls = DEFAULT_CALLS
    if "--" in argv:
        i = argv.index("--")
        rest = argv[i + 1 :]
        argv = argv[:i]
        calls = [(rest[k], json.loads(rest[k + 1])) for k in range(0, len(rest), 2)]
    mode = argv[0]
    if mode == "stdio":
        # The whole environment, so the test can configure the server (the SDK passes only a few variables).
        params = StdioServerParameters(command=argv[1], args=argv[2:], env=dict(os.environ))
        async with stdio_client(params) as (r, w):
            async with ClientSession(r, w) as s:
                await session_calls(s, calls)
    elif mode == "http":
        headers = {"Authorization": f"Bearer {argv[2]}"} if len(argv) > 2 else {}
        async with httpx2.AsyncClient(headers=headers, timeout=30) as http:
            async with streamable_http_client(argv[1], http_client=http) as streams:
                r, w = streams[0], streams[1]
                async with ClientSession(r, w) as s:
                    await session_calls(s, calls)
    else:
        raise SystemExit(f"unknown mode {mode}")


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1:]))
