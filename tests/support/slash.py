"""A slash command line done on a session the way the runtime does it, for tests that hold a session
without a runtime: the typed answer, and the words the front ends print for it."""

from __future__ import annotations

import typing
from dataclasses import dataclass

from core import protocol as ev
from core.cancel import Cancel
from core.runtime.commands import Outcome, Owned, Reopen, dispatch
from core.runtime.open import Session
from core.runtime.slash import parse
from ui.reports import answer_text


@dataclass
class Done:
    answer: ev.CommandAnswer
    text: str
    session: Session | None  # the session switched to (/clear, /resume)


def slash(line: str, session: Session, reopen: Reopen | None = None) -> Done:
    op = parse(line)
    assert isinstance(op, typing.get_args(ev.CommandOp)), f"{line!r} is not a runtime command: {op!r}"
    owned = Owned(session.agent.settings, session.agent.approvals.mode)
    outcome: Outcome = dispatch(op, session, Cancel(), owned, reopen or _no_switch)
    return Done(outcome.answer, answer_text(outcome.answer), outcome.session)


def _no_switch(resume: str | None, latest: bool, exclude: str) -> Session:
    raise AssertionError("this test does not switch sessions")
