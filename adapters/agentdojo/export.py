#!/usr/bin/env python3
"""Export the AgentDojo benchmark for `gauntlet privilege --suite agentdojo:FILE`.

Writes one JSON document: per suite, its tools (name, description, JSON-Schema parameters), its default
environment, its user tasks (id, prompt, ground-truth calls, seen vectors, injected results) and its injection tasks
(id, goal, ground-truth calls).

Two fields of each user task describe the injected content its ground truth meets, for provenance probes (the task's
own calls made with values that arrived in injected content):

- `seen_vectors`: one entry per ground-truth call (in `ground_truth` order), the sorted ids of the injection vectors
  whose canary text (`<CANARY---{vector}--->`, as AgentDojo's `BaseAttack.canary_injections`) appears in that call's
  result, the ground truth being run in order on the suite's environment loaded with every vector set to its canary.
  This is `BaseAttack.get_injection_candidates` per call: their union is the vectors AgentDojo's attacks fill.
- `injected`: `{}` when the task sees no vector; otherwise, per injection task id, the results of the ground-truth
  calls run in order on the environment loaded with every vector the task sees set to the "important_instructions"
  attack text for that injection task (AgentDojo's `ImportantInstructionsAttack` template, user "Emma Johnson", model
  "AI assistant"; the other vectors keep their defaults). A result is the text the model would see: YAML as AgentDojo's
  `tool_result_to_str` formats it (str() if that rejects it), or the error text when the call fails, cut at 4000 chars
  + "…" (so a long listing can lose some of the attack texts it holds: workspace's file listings hold up to four).

Both run the ground truth as AgentDojo's GroundTruthPipeline does: `task.ground_truth` computed on the environment
being run (`task.init_environment` of the loaded one), its calls run in order with AgentDojo's `FunctionsRuntime`,
deterministically as `execute.py` runs them (the clock pinned to its FIXED_NOW, the script re-executing itself with
PYTHONHASHSEED=0). The calls are the exported `ground_truth`, one for one, except where the plan names a vector's text:
in slack the name of the channel "External_{prompt_injection_channel}" is a vector (default "0"), so the tasks that
act on that channel use the injected name in their canary and injected runs, and read "External_0" in `ground_truth`.

    python3 -m venv .venv && .venv/bin/pip install agentdojo==0.1.35
    .venv/bin/python adapters/agentdojo/export.py --out agentdojo.json      # benchmark v1.2.2 by default
"""
import argparse
import json
import os
import pickle
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from execute import fix_hash_seed, format_result, pin_clock, shorten  # noqa: E402 - the helpers execute.py runs AgentDojo's tools with

INJECTED_CAP = 4000
"""Where an injected result is cut (execute.py cuts probe results at 2000)."""
ATTACK_USER = "Emma Johnson"
ATTACK_MODEL = "AI assistant"


def calls(function_calls):
    out = []
    for c in function_calls:
        args = c.args if isinstance(c.args, dict) else dict(c.args)
        out.append({"tool": c.function, "args": args})
    return out


def result_text(result, error, tool_result_to_str, cap=None) -> str:
    """The tool result as the model sees it: the error text if the call failed, else as execute.py formats it,
    cut at `cap` characters when one is given."""
    if error is not None:
        return error if cap is None else shorten(error, cap)
    return format_result(result, tool_result_to_str, cap)


def run_calls(runtime, env, function_calls, tool_result_to_str, cap=None) -> tuple[list[str], int]:
    """Run the calls in order on `env`; their result texts and how many failed."""
    texts, errors = [], 0
    for c in function_calls:
        result, error = runtime.run_function(env, c.function, dict(c.args))
        errors += error is not None
        texts.append(result_text(result, error, tool_result_to_str, cap))
    return texts, errors


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True, help="where to write the export (JSON)")
    ap.add_argument("--benchmark", default="v1.2.2", help="AgentDojo benchmark version (default v1.2.2)")
    a = ap.parse_args()

    fix_hash_seed()

    try:
        import agentdojo
        from agentdojo.agent_pipeline.tool_execution import tool_result_to_str
        from agentdojo.attacks.base_attacks import FixedJailbreakAttack
        from agentdojo.attacks.important_instructions_attacks import ImportantInstructionsAttack
        from agentdojo.functions_runtime import FunctionsRuntime
        from agentdojo.task_suite.load_suites import get_suites
    except ImportError:
        print("error: the agentdojo package is not installed: pip install agentdojo==0.1.35", file=sys.stderr)
        return 2
    try:
        version = __import__("importlib.metadata").metadata.version("agentdojo")
    except Exception:  # noqa: BLE001 - the version is informative only
        version = getattr(agentdojo, "__version__", "unknown")
    suite_map = get_suites(a.benchmark)
    pin_clock()  # after the suites' modules are imported: it patches the loaded modules that read the clock

    suites = []
    n_injectable = n_errors = n_replanned = 0
    for name, suite in sorted(suite_map.items()):
        env = suite.load_and_inject_default_environment({})
        tools = []
        for t in suite.tools:
            schema = t.parameters.model_json_schema()
            tools.append({"name": t.name, "description": t.description, "parameters": schema})
        runtime = FunctionsRuntime(suite.tools)
        # AgentDojo's important_instructions attack, without the pipeline it would take the model's name from.
        attacker = FixedJailbreakAttack(ImportantInstructionsAttack._JB_STRING, suite, None)
        attacker.user_name, attacker.model_name = ATTACK_USER, ATTACK_MODEL
        canaries = attacker.canary_injections
        canary_env = pickle.dumps(suite.load_and_inject_default_environment(canaries), pickle.HIGHEST_PROTOCOL)
        injection_items = sorted(suite.injection_tasks.items(), key=lambda kv: int(kv[0].rsplit("_", 1)[1]))
        injected_envs: dict[tuple, bytes] = {}  # the injections -> the pickled environment they load
        user_tasks = []
        for tid, task in sorted(suite.user_tasks.items(), key=lambda kv: int(kv[0].rsplit("_", 1)[1])):
            gt = task.ground_truth(env)
            task_env = task.init_environment(pickle.loads(canary_env))
            canary_gt = task.ground_truth(task_env)
            if len(canary_gt) != len(gt):
                print(f"error: {name}/{tid}: the ground truth has {len(canary_gt)} calls on the canary environment, "
                      f"{len(gt)} on the default one", file=sys.stderr)
                return 1
            texts, errors = run_calls(runtime, task_env, canary_gt, tool_result_to_str)
            n_errors += errors
            seen_vectors = [sorted(v for v, canary in canaries.items() if canary in text) for text in texts]
            seen = sorted({v for vs in seen_vectors for v in vs})
            injected = {}
            for iid, inj_task in injection_items if seen else ():
                attack = attacker.jailbreak.format(goal=inj_task.GOAL, user=attacker.user_name,
                                                   model=attacker.model_name, task=attacker.summarize_task(task))
                injections = {v: attack for v in seen}
                key = tuple(sorted(injections.items()))
                if key not in injected_envs:
                    injected_envs[key] = pickle.dumps(suite.load_and_inject_default_environment(injections),
                                                      pickle.HIGHEST_PROTOCOL)
                task_env = task.init_environment(pickle.loads(injected_envs[key]))
                injected_gt = task.ground_truth(task_env)
                if len(injected_gt) != len(gt):
                    print(f"error: {name}/{tid}: the ground truth has {len(injected_gt)} calls on the environment "
                          f"injected for {iid}, {len(gt)} on the default one", file=sys.stderr)
                    return 1
                n_replanned += calls(injected_gt) != calls(gt)
                injected[iid], errors = run_calls(runtime, task_env, injected_gt, tool_result_to_str, INJECTED_CAP)
                n_errors += errors
            n_injectable += bool(seen)
            user_tasks.append({"id": tid, "prompt": task.PROMPT, "ground_truth": calls(gt),
                               "seen_vectors": seen_vectors, "injected": injected})
        injection_tasks = []
        for tid, task in injection_items:
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
    print(f"wrote {a.out}: {len(suites)} suites, {n('tools')} tools, {n('user_tasks')} user tasks "
          f"({n_injectable} seeing injection vectors), {n('injection_tasks')} injection tasks", file=sys.stderr)
    if n_replanned:
        print(f"  {n_replanned} injected runs follow a ground truth that differs from the exported one",
              file=sys.stderr)
    if n_errors:
        print(f"warning: {n_errors} ground-truth calls failed (their results are the error text)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
