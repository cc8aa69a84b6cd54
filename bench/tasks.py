"""Task benchmark: small real tasks through `agent.py --one`, solved or not by each task's check command.

    python3 bench/tasks.py [--agent-cmd "python3 /path/to/old/agent.py"] [--tasks calc,crlf] [--max-steps 8]
                           [--base-url URL --model NAME] [--write-docs docs/tasks.md] [--keep DIR]

Each task (bench/task_suite.py) runs in a fresh copy of its files, always at the same path so the
server's prompt cache sees the same prefix from task to task. It prints, per task and build: solved
(the check's exit code), steps, tokens in and out, the cached share of the input, the cost at
DeepSeek's prices, and wall time; then the totals and, with --agent-cmd, this build against that one
as a ratio. The two builds take turns task by task, so both see the machine in the same state.
`--keep DIR` keeps the transcripts: each build's session folders and each run's `--json` events
(the notices say what the agent corrected or refused), in DIR/this and DIR/other.

The default endpoint is the local llama.cpp model of devtools/local_model.py (Qwen2.5-Coder-1.5B;
`--model qwen` for the 0.5B one), started when none is running. A check that already passes on the untouched files is reported as a
broken task, not counted. POSIX only (the checks are shell commands).
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # runs as `python3 bench/tasks.py` and as `python3 -m bench.tasks`

from bench.task_suite import TASKS, Task
from core.prices import DEFAULT_PRICES
from devtools import local_model

ROOT = Path(__file__).resolve().parents[1]
PRICED_AS = "deepseek-v4-flash"
DEFAULT_LOCAL_MODEL = "qwen1.5b"  # the smallest local model that solves some tasks (the 0.5B one almost none)
# The local server's limits, and temperature 0 so both builds see the same model behaviour.
LOCAL_MODEL_ENV = {"DEEPSEEK_API_KEY": "", "DEEPSEEK_CONTEXT_WINDOW": "8192", "DEEPSEEK_MAX_OUTPUT_TOKENS": "512",
                   "DEEPSEEK_REASONING_EFFORT": "default", "DEEPSEEK_TEMPERATURE": "0", "AGENT_MAX_RETRIES": "1"}
def markers(block: str = "") -> tuple[str, str]:
    """The comments around a script-written block; a named block keeps one comparison of its own."""
    name = f" {block}" if block else ""
    return f"<!-- bench/tasks.py: begin{name} -->", f"<!-- bench/tasks.py: end{name} -->"


@dataclass
class Run:
    task: str
    build: str
    solved: bool = False
    status: str = ""  # the agent's `done` status, or "timeout"
    cause: str = ""  # the kind of the error that ended it (stuck, server, …)
    steps: int = 0
    tokens_in: int = 0
    tokens_cached: int = 0
    tokens_out: int = 0
    wall: float = 0.0
    events: str = ""  # the run's --json output, kept with --keep

    @property
    def cost(self) -> float:
        return DEFAULT_PRICES[PRICED_AS].cost(self.tokens_in, self.tokens_cached, self.tokens_out)


def local_model_url(model: str) -> str:
    """The running local model server's URL, starting one when there is none."""
    script = [sys.executable, local_model.__file__]  # its command line: detached servers outlive this run
    found = subprocess.run([*script, "url", "--model", model], capture_output=True, text=True)
    if found.returncode != 0:
        found = subprocess.run([*script, "start", "--model", model], capture_output=True, text=True)
    if found.returncode != 0:
        sys.exit(f"no local model: {found.stderr.strip()}")
    return found.stdout.strip().splitlines()[-1]


def prepare(task: Task, work: Path) -> None:
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    for rel, content in task.files.items():
        target = work / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))


def check(task: Task, work: Path) -> bool:
    command = task.check.replace("{python}", shlex.quote(sys.executable))
    if not work.is_dir():  # the agent removed its own workspace
        return False
    for name in task.pinned:
        given = task.files[name]
        if not (work / name).is_file() or (work / name).read_bytes() != (given if isinstance(given, bytes) else given.encode()):
            return False
    return subprocess.run(["bash", "-c", command], cwd=work, capture_output=True, timeout=120).returncode == 0


def run_task(task: Task, build: str, agent: list[str], work: Path, env: dict[str, str], timeout: float) -> Run:
    prepare(task, work)
    run = Run(task.name, build)
    start = time.monotonic()
    process = subprocess.Popen([*agent, "--one", task.prompt, "--json", "--yes", "--cwd", str(work)], env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL,
                               text=True, encoding="utf-8", start_new_session=True)
    try:
        out, _ = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        out, _ = process.communicate()
        run.status = "timeout"
    run.wall = time.monotonic() - start
    run.events = out
    for line in out.splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue
        kind = event.get("type") or event.get("event")  # builds before the versioned protocol said "event"
        if kind == "usage":
            run.tokens_in += int(event.get("input_tokens") or 0)
            run.tokens_cached += int(event.get("cached_tokens") or 0)
            run.tokens_out += int(event.get("output_tokens") or 0)
        elif kind == "turn_started":
            run.steps = max(run.steps, int(event.get("step") or 0))
        elif kind == "error":
            run.cause = str(event.get("kind") or "")
        elif kind == "done" and not run.status:
            run.status = str(event.get("status"))
    run.solved = check(task, work)
    return run


def row(name: str, build: str, solved: str, steps: int, t_in: int, cached: int, t_out: int, cost: float,
        wall: float) -> str:
    share = f"{100 * cached / t_in:.0f}%" if t_in else "-"
    return (f"{name:<16} {build:<6} {solved:>12} {steps:>6} {t_in:>9,} {t_out:>8,} {share:>7} "
            f"{cost:>9.4f} {wall:>8.1f}")


def totals(runs: list[Run], build: str) -> Run:
    mine = [r for r in runs if r.build == build]
    total = Run("total", build, steps=sum(r.steps for r in mine), tokens_in=sum(r.tokens_in for r in mine),
                tokens_cached=sum(r.tokens_cached for r in mine), tokens_out=sum(r.tokens_out for r in mine),
                wall=sum(r.wall for r in mine))
    total.status = f"{sum(r.solved for r in mine)}/{len(mine)}"
    return total


def ratio(new: float, old: float) -> str:
    return f"{new / old:.2f}x" if old else "-"


def _shown_command(argv: list[str]) -> str:
    """A build's command as the report shows it: no machine's folders (this checkout's files are
    named from its root, any other path by its last two parts)."""
    shown = []
    for arg in argv:
        path = Path(arg)
        if arg == sys.executable:
            shown.append("python3")
        elif path.is_absolute() and path.is_relative_to(ROOT):
            shown.append(str(path.relative_to(ROOT)))
        elif path.is_absolute():
            shown.append(str(Path(*path.parts[-2:])))
        else:
            shown.append(arg)
    scripts = [Path(arg) for arg in argv if arg.endswith(".py") and Path(arg).is_file()]
    commit = subprocess.run(["git", "-C", str(scripts[0].resolve().parent), "log", "-1", "--format=%h"],
                            capture_output=True, text=True, check=False).stdout.strip() if scripts else ""
    return " ".join(shown) + (f" (at {commit})" if commit else "")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agent-cmd", help="another agent build to compare against, e.g. 'python3 /tmp/old/agent.py'")
    parser.add_argument("--base-url", help="a Responses endpoint (default: the local model named by --model)")
    parser.add_argument("--model", default=DEFAULT_LOCAL_MODEL,
                        help=f"model name (default: {DEFAULT_LOCAL_MODEL}, a local model's alias)")
    parser.add_argument("--tasks", help="comma-separated task names (default: all)")
    parser.add_argument("--max-steps", type=int, default=8)
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds per task and build")
    parser.add_argument("--write-docs", type=Path, help="replace the script-written block of this Markdown file")
    parser.add_argument("--block", default="", help="a named block of its own in that file (one per comparison)")
    parser.add_argument("--keep", type=Path, help="keep the runs' session folders and --json events here")
    args = parser.parse_args()

    chosen = [t for t in TASKS if not args.tasks or t.name in args.tasks.split(",")]
    base_url = args.base_url or local_model_url(args.model)
    builds = {"this": [sys.executable, str(ROOT / "agent.py")]}
    if args.agent_cmd:
        builds["other"] = shlex.split(args.agent_cmd)
    scratch = Path(tempfile.mkdtemp(prefix="bench-tasks-"))
    work = scratch / "work"
    env = {**os.environ, "DEEPSEEK_BASE_URL": base_url, "DEEPSEEK_MODEL": args.model,
           "AGENT_MAX_STEPS": str(args.max_steps),
           **(LOCAL_MODEL_ENV if args.base_url is None else {})}
    header = (f"{'task':<16} {'build':<6} {'solved':>12} {'steps':>6} {'tokens in':>9} {'out':>8} {'cached':>7} "
              f"{'cost $':>9} {'wall s':>8}")
    where = "the local llama-server" if args.base_url is None else base_url
    lines = [f"model {args.model} at {where}; max {args.max_steps} steps, {args.timeout:.0f} s per task; "
             f"cost at {PRICED_AS} prices; builds: " + "; ".join(f"{k} = {_shown_command(v)}" for k, v in builds.items()),
             header]
    print("\n".join(lines), flush=True)
    runs: list[Run] = []
    for task in chosen:
        prepare(task, work)
        if check(task, work):
            lines.append(f"{task.name:<16} broken: the check passes before the agent runs")
            print(lines[-1], flush=True)
            continue
        for build, agent in builds.items():
            r = run_task(task, build, agent, work, {**env, "AGENT_SESSIONS_DIR": str(scratch / "sessions" / build)},
                         args.timeout)
            runs.append(r)
            if args.keep:
                (args.keep / build).mkdir(parents=True, exist_ok=True)
                (args.keep / build / f"{task.name}.events.jsonl").write_text(r.events, encoding="utf-8")
            solved = "yes" if r.solved else ("no" if r.status in ("ok", "") else r.cause or r.status)
            lines.append(row(r.task, build, solved, r.steps, r.tokens_in, r.tokens_cached, r.tokens_out, r.cost, r.wall))
            print(lines[-1], flush=True)
            if args.write_docs:  # after every run, so a run cut short still leaves what it measured
                write_docs(args.write_docs, [*lines, "(run in progress or cut short: no totals yet)"], args.block)
    summary = {build: totals(runs, build) for build in builds}
    for build, t in summary.items():
        lines.append(row("total", build, t.status, t.steps, t.tokens_in, t.tokens_cached, t.tokens_out, t.cost, t.wall))
    if "other" in summary:
        new, old = summary["this"], summary["other"]
        solved_new, solved_old = (sum(r.solved for r in runs if r.build == b) for b in ("this", "other"))
        lines.append(f"this/other: solved {solved_new} vs {solved_old}, steps {ratio(new.steps, old.steps)}, "
                     f"tokens in {ratio(new.tokens_in, old.tokens_in)}, out {ratio(new.tokens_out, old.tokens_out)}, "
                     f"cost {ratio(new.cost, old.cost)}, wall {ratio(new.wall, old.wall)}")
    print("\n".join(lines[-len(summary) - ("other" in summary):]), flush=True)
    if args.keep and (scratch / "sessions").is_dir():
        shutil.copytree(scratch / "sessions", args.keep, dirs_exist_ok=True)
        print(f"sessions kept in {args.keep}", flush=True)
    shutil.rmtree(scratch, ignore_errors=True)
    if args.write_docs:
        write_docs(args.write_docs, lines, args.block)
    return 0


def write_docs(path: Path, lines: list[str], block: str = "") -> None:
    """Put the figures between the block's markers (added at the end when the file has none),
    leaving the rest of the file as written."""
    begin, end = markers(block)
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    if begin not in text:
        text += f"\n{begin}\n{end}\n"
    head, _, rest = text.partition(begin)
    _, _, tail = rest.partition(end)
    body = "\n".join(["```", *lines, "```"])
    path.write_text(f"{head}{begin}\n{body}\n{end}{tail}", encoding="utf-8")


if __name__ == "__main__":
    sys.exit(main())
