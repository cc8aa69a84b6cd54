"""Approvals as events: a tool that needs a yes waits here until the front end answers.

A tool calls the plain `Approve(what, why)` it gets in its context; the loop hands it a gate bound
to the call. Under the "ask" policy the gate emits `ApprovalRequested` (the call id, the structured
command or path, the folder and the decisions on offer) and waits until `Approvals.answer()` is
called (the runtime does, on an `Answer` op, from any thread) or the turn is cancelled. The
decisions and their numbering are the protocol's (`core.protocol.DECISIONS`); how a question is
shown is each front end's.
"""

from __future__ import annotations

import itertools
import json
import threading
from collections.abc import Callable
from dataclasses import dataclass

from core import protocol as ev
from core.agent.rules import AllowRules, rule_for
from core.cancel import Cancel
from core.i18n import N_, _
from core.modes import ASK, YES
from core.protocol import DECISIONS, Emit
from core.sandbox import SandboxInfo
from core.session.items import FunctionCall
from core.tools.base import Approve
from core.tools.safety import NOT_KNOWN_READ_ONLY, platform_dialect


@dataclass(frozen=True)
class Keeper:
    """What "always, in this workspace" keeps for a question of the agent's own: `rule` names it in
    the question, `keep()` keeps it (a sentence when it could not)."""

    rule: str
    keep: Callable[[], str | None]

    def __call__(self) -> str | None:
        return self.keep()


_IDS = {d.id for d in DECISIONS}

NOBODY_TO_ASK = N_("nobody can approve it in this mode; rerun with --yes to allow such actions")
# --yes answers the gate's questions; it never lifts the sandbox: leaving it takes a person's yes
# to that one command, or --no-sandbox.
NOBODY_TO_UNCONFINE = N_("nobody can approve running it outside the sandbox here (the yes mode answers the gate's "
                         "questions, it never lifts the sandbox)")
# What a yes to an "unconfined" question gives the command, said in the question itself.
UNCONFINED_GRANTS = N_("outside the sandbox it runs with all of your rights: it can change or delete any of your "
                       "files, read your keys and secrets, and use the network")
# The decisions an "unconfined" question offers: a yes to this one run, never an "always" (but what
# a `Keeper` keeps, which names what it covers whole).
_UNCONFINED_DECISIONS = ("once", "deny", "deny_reason")


@dataclass
class _Pending:
    request: ev.ApprovalRequested
    done: threading.Event
    decision: str = "deny"
    reason: str = ""


class Approvals:
    """Per-session approval state: pending questions, the policy, and what was allowed for the session.

    Who answers: in the `yes` mode, the mode itself; else the person, through the front end (an
    `ApprovalRequested` event, answered by the runtime's `Answer` op through `answer()`); when
    nobody can be asked (`interactive` False: `--one`), the question is refused and the model told
    how the user could allow it. `rules` keeps what was allowed for the workspace for good.

    Running a command outside the sandbox ("unconfined") is never the mode's to answer: in an
    interactive session the person is asked even in `yes`, once per run; with nobody to ask it
    is refused."""

    def __init__(self, emit: Emit, mode: str = ASK, *, interactive: bool = True, rules: AllowRules | None = None,
                 sandbox: SandboxInfo | None = None) -> None:
        self._emit = emit
        self.mode = mode
        self.interactive = interactive
        self.rules = rules
        self.sandbox = sandbox or SandboxInfo("none")  # what confines commands
        self._ids = itertools.count(1)
        self._pending: dict[str, _Pending] = {}
        self._lock = threading.Lock()
        self._allowed: set[tuple[str, str, str]] = set()
        # The MCP tools (kind "tool"): name -> what keeps "always, in this workspace" for it (see
        # core/mcp/tools.py). Their "always" covers the tool whatever its arguments.
        self.tool_keepers: dict[str, Callable[[], str | None]] = {}

    def gate(self, call: FunctionCall, cwd: str, cancel: Cancel, kind: str = "command") -> Approve:
        """The `Approve` a tool of this call gets; `kind` "unconfined" asks to run a command the
        sandbox blocked outside it (its own question: an "always" for the command does not cover it)."""
        return lambda what, why: self._request(call, cwd, cancel, what, why, kind)

    def extra_rules(self) -> tuple[str, ...]:
        """The rules given for this run only (--allow), for a session opened from this one."""
        return self.rules.extra if self.rules is not None else ()

    def allowed(self, command: str, dialect: str) -> bool:
        """The workspace's allow rules let this command line run unasked."""
        return self.rules is not None and self.rules.allows(command, dialect)

    def ask(self, what: str, why: str, *, asker: str, cwd: str, cancel: Cancel, kind: str = "command",
            keep: Keeper | None = None) -> str | None:
        """A question of the agent's own (a slash command's or the MCP client's, named by `asker`),
        not of a tool call: None when allowed, else why not. With `keep` (what "always, in this
        workspace" keeps, named by `keep.rule`) that decision is offered; a plain yes holds once."""
        return self._request(FunctionCall(call_id="", name=asker, arguments="{}"), cwd, cancel, what, why, kind, keep)

    def answer(self, request_id: str, decision: str, reason: str = "") -> bool:
        """Resolve a pending request (any thread); False if it is no longer waiting."""
        with self._lock:
            pending = self._pending.get(request_id)
        if pending is None or pending.done.is_set():
            return False
        pending.decision = decision if decision in _IDS else "deny"
        pending.reason = reason
        pending.done.set()
        return True

    def pending(self) -> list[ev.ApprovalRequested]:
        with self._lock:
            return [p.request for p in self._pending.values() if not p.done.is_set()]

    # -- one request ------------------------------------------------------------------------
    def _request(self, call: FunctionCall, cwd: str, cancel: Cancel, what: str, why: str, kind: str,
                 keep: Keeper | None = None) -> str | None:
        target = _target(call)
        key = (call.name, kind, "" if kind == "tool" else target[0] or target[1] or what)
        request_id = f"ap-{next(self._ids)}"
        if key in self._allowed:
            self._done(request_id, call, "once", "", "session")
            return None
        # "Always, in this workspace" is offered for a command that only asks for not being known to
        # read: a rule must never come to cover what the gate found destructive.
        rule = (rule_for(target[0], platform_dialect())
                if target[0] and why == NOT_KNOWN_READ_ONLY and self.rules is not None else None)
        if kind == "tool" and call.name in self.tool_keepers:
            rule = call.name
        by_mode = self.mode == YES and kind not in ("unconfined", "network")  # neither lifts the sandbox
        if by_mode or not self.interactive:
            decision, reason = ("once", "") if by_mode else ("deny", self._refusal(kind, rule))
            self._done(request_id, call, decision, reason, "policy")
            return None if decision == "once" else reason
        if kind == "unconfined":
            rule = None
            why = f"{why}{_('; ')}{_(UNCONFINED_GRANTS)}"
        if keep is not None:
            rule = keep.rule
        choices = [d.__dict__ for d in DECISIONS if (d.id != "workspace" or rule)
                   and (kind != "unconfined" or d.id in _UNCONFINED_DECISIONS or d.id == "workspace")]
        request = ev.ApprovalRequested(id=request_id, call_id=call.call_id, tool=call.name, action=what,
                                       command=target[0], path=target[1], cwd=cwd, reason=why,
                                       decisions=choices, kind=kind, rule=rule)
        pending = _Pending(request, threading.Event())
        with self._lock:
            self._pending[request_id] = pending
        by = "user"
        try:
            self._emit(request)

            def interrupted() -> None:
                nonlocal by
                if self.answer(request_id, "deny", _("the turn was interrupted")):
                    by = "interrupt"

            with cancel.on_cancel(interrupted):
                pending.done.wait()
        finally:
            with self._lock:
                self._pending.pop(request_id, None)
        if pending.decision == "session":
            self._allowed.add(key)
        if pending.decision == "workspace" and rule and (kind == "tool" or keep or self.rules is not None):
            self._allowed.add(key)
            failed = (keep() if keep is not None else self.tool_keepers[call.name]() if kind == "tool"
                      else self.rules.add(rule))  # type: ignore[union-attr]
            if failed:
                self._emit(ev.Notice(kind="warning", message=failed))
        self._done(request_id, call, pending.decision, pending.reason, by)
        if pending.decision in ("once", "session", "workspace"):
            return None
        if pending.decision == "deny_reason" and pending.reason:
            return _("the user said no: {reason}").format(reason=pending.reason)
        return pending.reason or _("the user said no")

    def _refusal(self, kind: str, rule: str | None) -> str:
        """Why nobody could say yes, and how the user can allow it next time."""
        if kind == "unconfined":
            return _(NOBODY_TO_UNCONFINE)
        if self.mode == ASK and rule and kind == "command":
            return _("{nobody}, or with --allow {rule!r} to allow such commands in this workspace").format(
                nobody=_(NOBODY_TO_ASK), rule=rule)
        return _(NOBODY_TO_ASK)

    def _done(self, request_id: str, call: FunctionCall, decision: str, reason: str, by: str) -> None:
        self._emit(ev.ApprovalResolved(id=request_id, call_id=call.call_id, decision=decision, reason=reason, by=by))


def _target(call: FunctionCall) -> tuple[str | None, str | None]:
    """(command, path) from the call's arguments, whichever the tool has."""
    try:
        args = json.loads(call.arguments)
    except ValueError:
        return None, None
    if not isinstance(args, dict):
        return None, None
    command, path = args.get("command"), args.get("path")
    return (command if isinstance(command, str) else None, path if isinstance(path, str) else None)
