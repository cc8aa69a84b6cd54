"""Multi-environment runners: tox 3 and 4, nox.

Their output is one run per environment, each printed by whatever the environment runs (pytest,
unittest, a linter), then a summary with each environment's verdict. An environment that passed
needs only its verdict (in the summary, or its own verdict line); one that failed is pruned by the family its own output belongs to, as if
it had been run alone. The summary stays whole.

Understands tox 3 (`env run-test: commands[0] | ...`, `___ summary ___`), tox 4
(`env: commands[0]> ...`, `env: OK (1.2=setup[..]+cmd[..] seconds)`) and nox (`nox > Running session
x`, `nox > Session x failed.`). Falls through: tox -p (parallel) interleaves environments, and
is left to the generic rules.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from core.prune import families
from core.prune.command import parse_command
from core.prune.families import generic
from core.prune.families.base import COMMAND, STRONG_CONTENT, Family
from core.prune.output import Output
from core.prune.selection import Selection

# The start of an environment's run, with its name and the command it runs.
_START_RE = re.compile(
    r"^(?P<env>[\w.-]+) (?:run-test|commands\[\d+\]): (?:commands\[\d+\] \| )?(?P<cmd>.*)$"  # tox 3
    r"|^(?P<env4>[\w.-]+): commands\[\d+\]> (?P<cmd4>.*)$"  # tox 4
    r"|^nox > Running session (?P<envn>\S+)$"
)
_SETUP_RE = re.compile(r"^[\w.-]+ (?:create|installdeps|inst|develop-inst|run-test-pre|installed): |^[\w.-]+: "
                       r"(?:install_deps|install_package|venv|packaging backend)>|^nox > (?:Creating|Re-using|python -m pip)")
_SUMMARY_RE = re.compile(r"^_+ summary _+$|^\s+[\w.-]+: (?:OK|FAIL|SKIP)\b.*|^\s*(?:ERROR: {1,3})?[\w.-]+: commands "
                         r"(?:succeeded|failed)|^\s*congratulations :\)|^\s*evaluation failed :\(|^nox > (?:Ran multiple|\*)")
_VERDICT_RE = re.compile(r"^[\w.-]+: (?:OK|FAIL)\b.*seconds\)?$|^nox > Session \S+ (?:was successful|failed|skipped)")
_FAILED_RE = re.compile(r"(?:ERROR: {1,3})?(?P<env>[\w.-]+): (?:commands failed|FAIL\b)|^nox > Session (?P<envn>\S+) failed")
PASSED_ENV = "lines of passing environments"
SETUP = "environment setup lines"


@dataclass
class Run:
    env: str
    command: str
    start: int
    stop: int


def detect(out: Output) -> int:
    if out.command.runs("tox", "nox"):
        return COMMAND
    return STRONG_CONTENT if out.has("_ summary _", "nox > Running session") and _runs(out.lines) else 0


def select(out: Output) -> Selection:
    lines = out.lines
    runs = _runs(lines)
    if not runs:  # a format this family does not know: the generic rules
        return generic.select(out)
    sel = Selection(lines)
    failed = {m.group("env") or m.group("envn") for line in lines if (m := _FAILED_RE.search(line))}
    sel.keep_range(0, runs[0].start)
    sel.quiet.update((PASSED_ENV, SETUP))
    for run in runs:
        if run.env in failed:
            sel.pin(run.start)
            _delegate(sel, out, run)
            continue
        for i in range(run.start, run.stop):
            if _VERDICT_RE.match(lines[i]):
                sel.pin(i)
            else:
                sel.hide(i, PASSED_ENV)
    for i, line in enumerate(lines):
        if _SUMMARY_RE.match(line):
            sel.pin(i)
        elif _SETUP_RE.match(line):
            sel.hide(i, SETUP)
    return sel


def _runs(lines: list[str]) -> list[Run]:
    starts = [(i, m) for i, line in enumerate(lines) if (m := _START_RE.match(line))]
    summary = next((i for i, line in enumerate(lines) if _SUMMARY_RE.match(line)), len(lines))
    runs = []
    for k, (i, m) in enumerate(starts):
        stop = starts[k + 1][0] if k + 1 < len(starts) else summary
        env = m.group("env") or m.group("env4") or m.group("envn")
        runs.append(Run(env, m.group("cmd") or m.group("cmd4") or "", i, max(stop, i + 1)))
    return runs


def _delegate(sel: Selection, out: Output, run: Run) -> None:
    """Prune a failed environment's lines by the family of its own command and output."""
    body = out.lines[run.start + 1:run.stop]
    if not body:
        return
    sub = Output("\n".join(body), body, parse_command(run.command), 1)
    family = families.pick(sub)
    inner = family.select(sub)
    offset = run.start + 1
    sel.level[offset:run.stop] = inner.level
    sel.reasons[offset:run.stop] = inner.reasons
    sel.quiet |= inner.quiet
    for at, notes in inner.notes.items():
        for note in notes:
            sel.note(offset + at, note)


FAMILY = Family("multi-env runner", detect, select)
