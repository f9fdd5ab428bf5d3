"""An MCP server written with the official Python SDK (`mcp` on PyPI), for Gauntlet's proxy tests.

    server.py                  # stdio
    server.py --http PORT      # streamable HTTP on 127.0.0.1:PORT/mcp (sessions, SSE responses)
    server.py --http-json PORT # the same without sessions, with plain JSON responses

Tools: `read_note(id)` returns a note's text, `echo(text)` returns its input, `delete_all()` "deletes" and
reports how many notes it removed. Every call is also appended to the file named by $NOTES_LOG, so a test
can see what reached the server.
"""

import os
import sys

from mcp.server.mcpserver import MCPServer

NOTES = {"n1": "Quarterly numbers are in the shared drive.", "n2": "Dentist on Friday."}

server = MCPServer("notes")


def _seen(line):
    path = os.environ.get("NOTES_LOG")
    if path:
        with open(path, "a") as f:
            f.write(line + "\n")


@server.tool()
def read_note(id: str) -> str:
    """Read one note by id."""
    _seen(f"read_note {id}")
    return NOTES.get(id, f"no note {id}")


@server.tool()
def echo(text: str) -> str:
    """Return the text."""
    _seen(f"echo {text}")
    return text


@server.tool()
def delete_all() -> str:
    """Delete every note."""
    _seen("delete_all")
    n = len(NOTES)
    NOTES.clear()
    return f"deleted {n} notes"


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--http":
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    elif len(sys.argv) > 2 and sys.argv[1] == "--http-json":
        server.run(
            "streamable-http",
            host="127.0.0.1",
            port=int(sys.argv[2]),
            stateless_http=True,
            json_response=True,
        )
    else:
        server.run("stdio")
