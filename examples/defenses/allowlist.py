#!/usr/bin/env python3
"""An external Gauntlet defense: JSON lines on stdin/stdout (protocol: docs/defenses.md).

Policy: allow only the tools of the task's solution, and refuse any call whose arguments mention an email address
outside the domains the solution itself uses. Standard library only.
"""
import json
import re
import sys

EMAIL = re.compile(r"[\w.+-]+@([\w-]+\.)+[\w-]+")
policies = {}


def domains(value):
    """Email domains mentioned anywhere in a JSON value."""
    text = json.dumps(value)
    return {m.group(0).split("@", 1)[1].lower() for m in EMAIL.finditer(text)}


def handle(msg):
    """The answer to one request, carrying the request's id (protocol 2: answers are matched by id)."""
    reply = answer(msg)
    reply["id"] = msg.get("id")
    return reply


def answer(msg):
    kind = msg.get("type")
    if kind == "hello":
        return {"protocol": 2, "name": "python-allowlist", "axes": ["tool", "parameter"]}
    if kind == "prepare":
        task = msg["task"]
        tools = {c["tool"] for c in task["solution"]}
        allowed = set().union(*(domains(c["args"]) for c in task["solution"])) | {"acme.test"}
        policies[task["id"]] = (tools, allowed)
        return {"policy": task["id"]}
    if kind == "decide":
        tools, allowed = policies.get(msg["policy"], (set(), set()))
        call = msg["call"]
        if call["tool"] not in tools:
            return {"decision": "deny", "reason": f"{call['tool']} is not needed for this task"}
        outside = domains(call["args"]) - allowed
        if outside:
            return {"decision": "deny", "reason": "addresses outside the task: " + ", ".join(sorted(outside))}
        return {"decision": "allow"}
    return {"error": f"unknown message type {kind!r}"}


def main():
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        sys.stdout.write(json.dumps(handle(json.loads(line))) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
