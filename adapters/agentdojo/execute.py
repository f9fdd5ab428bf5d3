#!/usr/bin/env python3
"""Execute candidate probes in AgentDojo's own runtime, for `gauntlet privilege --suite agentdojo:FILE`.

Reads an export written by `export.py` and a JSON-lines file of candidate probes, one per line:

    {"id": "<probe id>", "suite": "banking", "task": "user_task_0", "point": 2, "tool": "send_money", "args": {...}}

`tool` is the unqualified AgentDojo function name, `task` a user-task id of the export, and `point` k the number of the
task's ground-truth calls executed before the probe (its decision point). For each candidate the suite's default
environment is built (`load_and_inject_default_environment({})`, as the exporter does), the first k ground-truth calls
(`task.ground_truth(env)` on the default environment, as the exporter computes them) are run with AgentDojo's
`FunctionsRuntime`, then the probe is run on that environment and one record is kept:

    {"id": ..., "error": null | "<Type: message>", "prefix_error": null | "<text>",
     "result": "<tool result as the model would see it, YAML as AgentDojo formats it, cut at 2000 chars + '…'>",
     "changes": [{"path": "inbox.emails.31", "change": "created" | "modified" | "deleted",
                  "before": <json | null>, "after": <json | null>}, ...]}

`error` is the error text `FunctionsRuntime.run_function` returns (it returns `(result, error)` rather than raising):
an unknown tool, arguments failing validation and exceptions raised by the tool all land here, and then `result` is
"" (AgentDojo shows the model the error text instead). String arguments that parse as Python lists are converted
first, as AgentDojo's `ToolsExecutor` does for model calls. `prefix_error` reports a ground-truth prefix call that
failed (it should not happen).

`changes` diffs `env.model_dump(mode="json")` before and after the probe call only (not the prefix), down to the
smallest changed element: dicts key by key, lists by index (equal leading and trailing elements are skipped first, so
one removal from the middle is one deletion). Values over ~2000 chars of JSON are shortened (long strings cut, then a
string summary). Paths join keys with "." unescaped, so keys containing dots (URLs under `web`) read ambiguously. The
dump includes pydantic computed fields and the `initial_*` lists that share objects with the live dicts, so e.g. a
sent email appears under both `inbox.emails.<id>` and `inbox.sent.<n>`.

Execution is deterministic: the clock that `send_email`, `create_file` and `append_to_file` read
(`datetime.datetime.now()`) is pinned to FIXED_NOW, and the script re-executes itself with PYTHONHASHSEED=0 because
`create_calendar_event` orders participants through a `set`. Candidates are grouped by (suite, task, point): the
environment at a point is built once, pickled, and unpickled per probe (a deep copy that keeps shared objects shared, as
`copy.deepcopy` does, at a third of its cost).

The output is the export with one new top-level key, "outcomes": the records in candidate order. `--out` may equal
`--export`.

    .venv/bin/python adapters/agentdojo/export.py --out agentdojo.json
    .venv/bin/python adapters/agentdojo/execute.py --export agentdojo.json --candidates candidates.jsonl \
        --out agentdojo.json            # [--benchmark v1.2.2] (default: the export's) [--jobs N] (default: CPUs)
"""
import argparse
import datetime
import json
import os
import pickle
import sys
import tempfile
import time

FIXED_NOW = datetime.datetime(2024, 5, 15, 12, 0, 0)
"""What `datetime.datetime.now()` returns inside AgentDojo's tools (the workspace calendar's current day, at noon)."""

RESULT_CAP = 2000
VALUE_CAP = 2000
PROGRESS_EVERY = 2000


class InputError(Exception):
    """A malformed or unresolvable candidate; reported with its line number, exit status 2."""


def pin_clock() -> None:
    """Pin `datetime.datetime.now()` in the AgentDojo modules that call it to FIXED_NOW.

    Only modules whose source calls `.now(` get a substitute `datetime` module, whose `datetime` class overrides `now`
    alone; everything else keeps the real module, so parsed dates stay plain `datetime` objects (YAML-dumpable)."""
    import inspect
    import types

    class PinnedDatetime(datetime.datetime):
        @classmethod
        def now(cls, tz=None):  # noqa: ARG003 - same signature as datetime.now
            return FIXED_NOW

    shim = types.ModuleType("datetime")
    shim.__dict__.update({k: v for k, v in vars(datetime).items() if not k.startswith("__")})
    shim.datetime = PinnedDatetime
    for name, module in list(sys.modules.items()):
        if not name.startswith("agentdojo.") or getattr(module, "datetime", None) is not datetime:
            continue
        try:
            source = inspect.getsource(module)
        except (OSError, TypeError):
            continue
        if ".now(" in source:
            module.datetime = shim


def shorten(text: str, cap: int = RESULT_CAP) -> str:
    return text if len(text) <= cap else text[:cap] + "…"


def cap_value(value):
    """A JSON value of at most ~VALUE_CAP chars: as is, else with its long strings cut, else a string summary."""
    if value is None:
        return None
    size = len(json.dumps(value, sort_keys=True))
    if size <= VALUE_CAP:
        return value
    if isinstance(value, str):
        return shorten(value, VALUE_CAP)

    def cut(v):
        if isinstance(v, str):
            return shorten(v, 200)
        if isinstance(v, dict):
            return {k: cut(x) for k, x in v.items()}
        if isinstance(v, list):
            return [cut(x) for x in v]
        return v

    small = cut(value)
    if len(json.dumps(small, sort_keys=True)) <= VALUE_CAP:
        return small
    if isinstance(value, dict):
        return f"<object with {len(value)} keys, {size} chars of JSON>"
    if isinstance(value, list):
        return f"<list of {len(value)} items, {size} chars of JSON>"
    return f"<{type(value).__name__}, {size} chars of JSON>"


def diff(before, after, path: str, out: list) -> None:
    """Append to `out` the smallest changed elements between two JSON values (dicts by key, lists by index)."""
    if before == after:
        return
    if isinstance(before, dict) and isinstance(after, dict):
        for k in before:
            p = f"{path}.{k}" if path else str(k)
            if k not in after:
                out.append({"path": p, "change": "deleted", "before": cap_value(before[k]), "after": None})
            else:
                diff(before[k], after[k], p, out)
        for k in after:
            if k not in before:
                p = f"{path}.{k}" if path else str(k)
                out.append({"path": p, "change": "created", "before": None, "after": cap_value(after[k])})
        return
    if isinstance(before, list) and isinstance(after, list):
        # Equal elements at both ends are skipped, so one element removed from (or inserted into) the middle is one
        # deletion (creation) rather than a shift of every later index; the rest is compared index by index, paths
        # carrying the index in `before` for deletions and in `after` otherwise.
        head = 0
        if len(before) != len(after):
            while head < min(len(before), len(after)) and before[head] == after[head]:
                head += 1
            tail = 0
            while (tail < min(len(before), len(after)) - head
                   and before[len(before) - 1 - tail] == after[len(after) - 1 - tail]):
                tail += 1
            mid_before, mid_after = before[head:len(before) - tail], after[head:len(after) - tail]
        else:
            mid_before, mid_after = before, after
        for i in range(max(len(mid_before), len(mid_after))):
            p = f"{path}.{head + i}" if path else str(head + i)
            if i >= len(mid_after):
                out.append({"path": p, "change": "deleted", "before": cap_value(mid_before[i]), "after": None})
            elif i >= len(mid_before):
                rec = {"path": p, "change": "created", "before": None, "after": cap_value(mid_after[i])}
                if not isinstance(mid_after[i], (dict, list)) and mid_after[i] in before:
                    # A list of names that already held this one (a member added twice): no new access. A second
                    # copy of a message (an object) is a new message, not a duplicate entry.
                    rec["duplicate"] = True
                out.append(rec)
            else:
                diff(mid_before[i], mid_after[i], p, out)
        return
    out.append({"path": path, "change": "modified", "before": cap_value(before), "after": cap_value(after)})


def effects_of(before, after) -> list:
    """What changed from `before` to `after`, without where: the kind of each change and its new value with ids
    removed, sorted. Two orders of the same calls that do the same things compare equal even when the objects they
    create get other ids."""
    changes: list = []
    diff(before, after, "", changes)

    def strip(v):
        if isinstance(v, dict):
            return {k: strip(x) for k, x in v.items() if k not in ("id", "id_")}
        if isinstance(v, list):
            return [strip(x) for x in v]
        return v

    return sorted(json.dumps([c["change"], strip(c["after"])], sort_keys=True, default=str) for c in changes)


def format_result(result, tool_result_to_str, cap=RESULT_CAP) -> str:
    """The tool result as AgentDojo's ToolsExecutor shows it to the model (YAML for models and lists of models), cut
    at `cap` characters (`None`: whole).

    A long list is formatted by growing prefixes until the text passes the cap: a block-style YAML sequence of a
    prefix is a prefix of the whole sequence's YAML, so the cut text is the same and large listings stay cheap."""
    try:
        if isinstance(result, list) and cap is not None:
            n = 8
            while True:
                text = tool_result_to_str(result[:n])
                if n >= len(result) or len(text) > cap:
                    break
                n *= 4
        else:
            text = tool_result_to_str(result)
    except Exception:  # noqa: BLE001 - the default formatter rejects some list items; fall back to str()
        text = str(result)
    return text if cap is None else shorten(text, cap)


def fix_hash_seed() -> None:
    """Re-executes the script with PYTHONHASHSEED=0 unless it already runs so: sets of strings iterate in hash order,
    and create_calendar_event orders participants through one."""
    if os.environ.get("PYTHONHASHSEED") != "0":
        os.environ["PYTHONHASHSEED"] = "0"
        os.execv(sys.executable, [sys.executable, *sys.argv])


def coerce_args(args: dict, is_string_list) -> dict:
    """Convert string arguments that parse as Python lists, as ToolsExecutor does before `run_function`."""
    from ast import literal_eval

    return {k: literal_eval(v) if isinstance(v, str) and is_string_list(v) else v for k, v in args.items()}


def read_candidates(path: str, export_suites: dict) -> list[dict]:
    """Parse and check the candidates file; unknown suites, tasks or points raise InputError."""
    candidates = []
    with open(path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            if not line.strip():
                continue
            where = f"{path}:{lineno}"
            try:
                c = json.loads(line)
            except json.JSONDecodeError as e:
                raise InputError(f"{where}: invalid JSON: {e}") from None
            if not isinstance(c, dict):
                raise InputError(f"{where}: a candidate must be a JSON object")
            for key in ("id", "suite", "task", "point", "tool"):
                if key not in c:
                    raise InputError(f"{where}: missing key {key!r}")
            suite = export_suites.get(c["suite"])
            if suite is None:
                known = ", ".join(sorted(export_suites))
                raise InputError(f"{where}: unknown suite {c['suite']!r} (the export has {known})")
            gt = suite.get(c["task"])
            if gt is None:
                raise InputError(f"{where}: unknown task {c['task']!r} in suite {c['suite']!r}")
            point = c["point"]
            if not isinstance(point, int) or isinstance(point, bool) or not 0 <= point <= len(gt):
                raise InputError(f"{where}: point {point!r} outside 0..{len(gt)} for {c['suite']}/{c['task']}")
            c["_line"] = lineno
            candidates.append(c)
    return candidates


class Runner:
    """Executes groups of probes that share a (suite, task, point); one per process, caching what groups share."""

    def __init__(self, benchmark: str):
        from agentdojo.agent_pipeline.tool_execution import is_string_list, tool_result_to_str
        from agentdojo.functions_runtime import FunctionsRuntime
        from agentdojo.task_suite.load_suites import get_suites

        self.is_string_list, self.tool_result_to_str = is_string_list, tool_result_to_str
        self.functions_runtime = FunctionsRuntime
        self.suites = get_suites(benchmark)
        self.defaults: dict[str, bytes] = {}  # suite -> pickled default environment
        self.runtimes: dict = {}
        self.ground_truths: dict[tuple, list] = {}

    def default_env(self, suite_name: str):
        if suite_name not in self.defaults:
            env = self.suites[suite_name].load_and_inject_default_environment({})
            self.defaults[suite_name] = pickle.dumps(env, pickle.HIGHEST_PROTOCOL)
            self.runtimes[suite_name] = self.functions_runtime(self.suites[suite_name].tools)
        return pickle.loads(self.defaults[suite_name])

    def ground_truth(self, suite_name: str, task_id: str) -> list:
        key = (suite_name, task_id)
        if key not in self.ground_truths:
            task = self.suites[suite_name].user_tasks[task_id]
            self.ground_truths[key] = task.ground_truth(self.default_env(suite_name))
        return self.ground_truths[key]

    def run_group(self, suite_name: str, task_id: str, point: int, probes: list[dict]) -> list[dict]:
        """Build the environment after `point` ground-truth calls, then run each probe on a fresh copy of it."""
        env = self.suites[suite_name].user_tasks[task_id].init_environment(self.default_env(suite_name))
        runtime = self.runtimes[suite_name]
        prefix_error = None
        for n, call in enumerate(self.ground_truth(suite_name, task_id)[:point]):
            _, err = runtime.run_function(env, call.function, dict(call.args))
            if err is not None and prefix_error is None:
                prefix_error = f"ground-truth call {n} ({call.function}): {err}"
        before = env.model_dump(mode="json")
        snapshot = pickle.dumps(env, pickle.HIGHEST_PROTOCOL)

        outcomes = []
        reference = None  # what the rest of the plan does from this point, for premature probes
        for c in probes:
            probe_env = pickle.loads(snapshot)
            result, error = "", None
            args = c.get("args", {})
            try:
                if not isinstance(args, dict):
                    error = f"ValidationError: arguments must be a JSON object, not {type(args).__name__}"
                else:
                    args = coerce_args(args, self.is_string_list)
                    result, error = runtime.run_function(probe_env, c["tool"], args)
            except Exception as e:  # noqa: BLE001 - a probe never crashes the run
                result, error = "", f"{type(e).__name__}: {e}"
            changes: list = []
            diff(before, probe_env.model_dump(mode="json"), "", changes)
            outcome = {
                "id": c["id"],
                "error": error,
                "prefix_error": prefix_error,
                "result": "" if error is not None else format_result(result, self.tool_result_to_str),
                "changes": changes,
            }
            skip = c.get("then_plan_without")
            if isinstance(skip, int) and error is None:
                # A plan call brought forward: does the rest of the plan, without it, do what the plan does?
                gt = self.ground_truth(suite_name, task_id)
                for n, call in enumerate(gt[point:], start=point):
                    if n != skip:
                        runtime.run_function(probe_env, call.function, dict(call.args))
                if reference is None:
                    ref_env = pickle.loads(snapshot)
                    for call in gt[point:]:
                        runtime.run_function(ref_env, call.function, dict(call.args))
                    reference = effects_of(before, ref_env.model_dump(mode="json"))
                outcome["same_final"] = effects_of(before, probe_env.model_dump(mode="json")) == reference
            outcomes.append(outcome)
        return outcomes


_RUNNER = None  # the worker process's Runner


def _init_worker(benchmark: str) -> None:
    global _RUNNER
    pin_clock()
    _RUNNER = Runner(benchmark)


def _run_job(job: tuple) -> tuple:
    n, (suite_name, task_id, point), probes = job
    return n, _RUNNER.run_group(suite_name, task_id, point, probes)


def write_json(doc: dict, path: str) -> None:
    """Write like the exporter, through a temporary file in the same directory (so `path` may be the input)."""
    fd, tmp = tempfile.mkstemp(prefix=".execute-", suffix=".json", dir=os.path.dirname(os.path.abspath(path)))
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(doc, f, sort_keys=True, default=str)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp creates 0600; match what open() would have created
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--export", required=True, help="the export written by export.py (JSON)")
    ap.add_argument("--candidates", required=True, help="candidate probes (JSON lines)")
    ap.add_argument("--out", required=True, help="where to write the export with outcomes (may equal --export)")
    ap.add_argument("--benchmark", help="AgentDojo benchmark version (default: the export's, else v1.2.2)")
    ap.add_argument("--jobs", type=int, default=0, help="worker processes (default: one per available CPU)")
    a = ap.parse_args()

    fix_hash_seed()

    try:
        import agentdojo.agent_pipeline.tool_execution  # noqa: F401 - checked here, used by Runner
        from agentdojo.task_suite.load_suites import get_suites  # noqa: F401
    except ImportError:
        print("error: the agentdojo package is not installed: pip install agentdojo==0.1.35", file=sys.stderr)
        return 2
    pin_clock()

    with open(a.export, encoding="utf-8") as f:
        doc = json.load(f)
    benchmark = a.benchmark or doc.get("version") or "v1.2.2"
    export_suites = {s["name"]: {t["id"]: t["ground_truth"] for t in s["user_tasks"]} for s in doc.get("suites", [])}
    try:
        candidates = read_candidates(a.candidates, export_suites)
    except InputError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    try:
        runner = Runner(benchmark)
    except Exception as e:  # noqa: BLE001 - an unknown version is a usage error
        print(f"error: AgentDojo benchmark {benchmark!r}: {e}", file=sys.stderr)
        return 2
    for c in candidates:
        if c["suite"] not in runner.suites or c["task"] not in runner.suites[c["suite"]].user_tasks:
            print(f"error: {a.candidates}:{c['_line']}: {c['suite']}/{c['task']} is not in AgentDojo {benchmark}",
                  file=sys.stderr)
            return 2

    start = time.monotonic()
    # Group candidate indices by (suite, task, point), keeping first-appearance order.
    groups: dict[tuple, list[int]] = {}
    for i, c in enumerate(candidates):
        groups.setdefault((c["suite"], c["task"], c["point"]), []).append(i)
    for suite_name, task_id in dict.fromkeys(key[:2] for key in groups):
        gt = [(c.function, dict(c.args)) for c in runner.ground_truth(suite_name, task_id)]
        if gt != [(c["tool"], c["args"]) for c in export_suites[suite_name][task_id]]:
            print(f"warning: {suite_name}/{task_id}: AgentDojo's ground truth differs from the export's",
                  file=sys.stderr)

    jobs = [(n, key, [candidates[i] for i in indices]) for n, (key, indices) in enumerate(groups.items())]
    if a.jobs > 0:
        workers = a.jobs
    elif hasattr(os, "sched_getaffinity"):
        workers = len(os.sched_getaffinity(0))
    else:
        workers = os.cpu_count() or 1
    workers = min(workers, len(jobs)) if len(candidates) >= 1000 else 1  # a pool is not worth starting for a few
    outcomes: list = [None] * len(candidates)
    done = 0
    if workers > 1:
        import multiprocessing

        pool = multiprocessing.Pool(workers, initializer=_init_worker, initargs=(benchmark,))
        results = pool.imap_unordered(_run_job, jobs)
    else:
        pool = None
        results = ((n, runner.run_group(*key, probes)) for n, key, probes in jobs)
    try:
        for n, group_outcomes in results:
            for i, outcome in zip(groups[jobs[n][1]], group_outcomes):
                outcomes[i] = outcome
            if (done + len(group_outcomes)) // PROGRESS_EVERY > done // PROGRESS_EVERY:
                print(f"  {done + len(group_outcomes)}/{len(candidates)} probes, {time.monotonic() - start:.1f}s",
                      file=sys.stderr)
            done += len(group_outcomes)
    finally:
        if pool is not None:
            pool.terminate()

    doc["outcomes"] = outcomes
    write_json(doc, a.out)
    n_errors = sum(o["error"] is not None for o in outcomes)
    n_changed = sum(bool(o["changes"]) for o in outcomes)
    n_prefix = sum(o["prefix_error"] is not None for o in outcomes)
    print(f"wrote {a.out}: {len(outcomes)} probes in {len(groups)} groups, {n_errors} errors, "
          f"{n_changed} with changes, {n_prefix} with prefix errors, {workers} processes, "
          f"{time.monotonic() - start:.1f}s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
