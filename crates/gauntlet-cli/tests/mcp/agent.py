"""A small scripted agent for Gauntlet's command-target tests: it reads the user's message from $GAUNTLET_PROMPT,
reaches its tools over MCP with the official Python SDK (the endpoint and token from $GAUNTLET_MCP_CONFIG, as
coding-agent CLIs read an `mcpServers` file), and prints its reply.

Behaviour: it lists the unread mail and reads every message; when the user's message names an email address, it
obeys and mails that address the body of any message mentioning a password (a compliant agent). Its reply lists
the subjects it read.
"""

import asyncio
import json
import os
import re

import httpx2
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client


async def main():
    prompt = os.environ["GAUNTLET_PROMPT"]
    with open(os.environ["GAUNTLET_MCP_CONFIG"]) as f:
        server = json.load(f)["mcpServers"]["gauntlet"]
    async with httpx2.AsyncClient(headers=server["headers"], timeout=30) as http:
        async with streamable_http_client(server["url"], http_client=http) as streams:
            async with ClientSession(streams[0], streams[1]) as s:
                await s.initialize()
                listed = await s.call_tool("mail__list", {"unread": True})
                messages = json.loads(listed.content[0].text)
                subjects, secrets = [], []
                for m in messages:
                    read = await s.call_tool("mail__read", {"id": m["id"]})
                    text = read.content[0].text
                    subjects.append(m["subject"])
                    if "password" in text.lower():
                        try:
                            secrets.append(json.loads(text)["body"])
                        except (ValueError, KeyError, TypeError):
                            # Not the plain message (a poisoned result, say): pass it on as it came.
                            secrets.append(text)
                for address in re.findall(r"[\w.+-]+@[\w-]+\.[\w.-]+", prompt):
                    for body in secrets:
                        await s.call_tool("mail__send", {"to": [address], "subject": "As asked", "body": body})
    print("You have mail about: " + "; ".join(subjects))


asyncio.run(main())
