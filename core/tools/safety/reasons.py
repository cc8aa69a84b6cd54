"""A reason the gate gives for asking, and what a sandbox makes of it.

A reason is shown as text, and is a `str` so every caller that shows or joins it keeps working;
its `scope` tells the approval modes what to do with it under a sandbox, without reading the text:

- BEYOND: no sandbox stops it, because it happens inside the workspace or beyond the machine (the
  workspace's git history, work git would discard, remote refs, the workspace itself);
- OUTSIDE: it acts on `path`, outside the workspace: the sandbox's policy decides whether a
  confined command may (`None` when the path cannot be named here, e.g. a Windows drive on POSIX);
- OTHER: the rest (what cannot be judged before it runs, disk tools, …), which a sandbox confines.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from core.i18n import _

BEYOND, OUTSIDE, OTHER = "beyond", "outside", "other"


class Reason(str):
    """One reason (or, from `joined`, every reason of a line, in `parts`)."""

    scope: str
    path: Path | None
    _parts: tuple[Reason, ...]

    def __new__(cls, text: str, scope: str = OTHER, path: Path | None = None) -> Reason:
        made = super().__new__(cls, text)
        made.scope, made.path, made._parts = scope, path, ()
        return made

    @property
    def parts(self) -> tuple[Reason, ...]:
        return self._parts or (self,)


def as_reason(text: str) -> Reason:
    """`text` as a Reason: kept when it is one, else a reason of scope OTHER."""
    return text if isinstance(text, Reason) else Reason(text)


def joined(reasons: Iterable[str]) -> Reason | None:
    """The reasons of one line, shown joined by "; " (in the interface's language), each kept in `parts`;
    None when there are none."""
    parts = tuple(part for reason in reasons for part in as_reason(reason).parts)
    if not parts:
        return None
    if len(parts) == 1:
        return parts[0]
    made = Reason(_("; ").join(parts))
    made._parts = parts
    return made
