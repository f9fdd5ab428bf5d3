#!/usr/bin/env python3
"""Export the AgentDojo benchmark for `gauntlet privilege --suite agentdojo:FILE`.

Writes one JSON document: per suite, its tools (name, description, JSON-Schema parameters), its default
environment, its user tasks (id, prompt, ground-truth calls) and its injection tasks (id, goal, ground-truth calls).

    python3 -m venv .venv && .venv/bin/pip install agentdojo==0.1.35
    .venv/bin/python adapters/agentdojo/export.py --out agentdojo.json      # benchmark v1.2.2 by default
"""
import argparse
import json
import sys


def calls(function_calls):
    out = []
    for c in function_calls:
        args = c.args if isinstance(c.args, dict) else dict(c.args)
        out.append({"tool": c.function, "args": args})
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True, help="where to write the export (JSON)")
    ap.add_argument("--benchmark", default="v1.2.2", help="AgentDojo benchmark version (default v1.2.2)")
    a = ap.parse_args()
    try:
        import agentdojo
        from agentdojo.task_suite.load_suites import get_suites
    except ImportError:
        print("error: the agentdojo package is not installed: pip install agentdojo==0.1.35", file=sys.stderr)
        return 2
    try:
        version = __import__("importlib.metadata").metadata.version("agentdojo")
    except Exception:  # noqa: BLE001 - the version is informative only
        version = getattr(agentdojo, "__version__", "unknown")
    suites = []
    for name, suite in sorted(get_suites(a.benchmark).items()):
        env = suite.load_and_inject_default_environment({})
        tools = []
        for t in suite.tools:
            schema = t.parameters.model_json_schema()
            tools.append({"name": t.name, "description": t.description, "parameters": schema})
        user_tasks = []
        for tid, task in sorted(suite.user_tasks.items(), key=lambda kv: int(kv[0].rsplit("_", 1)[1])):
            user_tasks.append({"id": tid, "prompt": task.PROMPT, "ground_truth": calls(task.ground_truth(env))})
        injection_tasks = []
        for tid, task in sorted(suite.injection_tasks.items(), key=lambda kv: int(kv[0].rsplit("_", 1)[1])):
            injection_tasks.append({"id": tid, "goal": task.GOAL, "ground_truth": calls(task.ground_truth(env))})
        suites.append({
            "name": name,
            "tools": tools,
            "environment": env.model_dump(mode="json"),
            "user_tasks": user_tasks,
            "injection_tasks": injection_tasks,
        })
    doc = {"benchmark": "agentdojo", "version": a.benchmark, "package": version, "suites": suites}
    with open(a.out, "w", encoding="utf-8") as f:
        json.dump(doc, f, sort_keys=True, default=str)
    n = lambda k: sum(len(s[k]) for s in suites)  # noqa: E731
    print(f"wrote {a.out}: {len(suites)} suites, {n('tools')} tools, {n('user_tasks')} user tasks, "
          f"{n('injection_tasks')} injection tasks", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
