"""A Python program that crashed: the generic rules, which already fold library frames out of
tracebacks, under the family's own name.

Understands CPython 3.8-3.13 tracebacks, chained exceptions and logging output around them.
"""

from __future__ import annotations

from core.prune import pytraceback
from core.prune.families import generic
from core.prune.families.base import CONTENT, WEAK_COMMAND, Family
from core.prune.output import Output


def detect(out: Output) -> int:
    score = WEAK_COMMAND if out.command.runs("python", "python3", "py", "ipython", "flask", "django-admin") else 0
    return score + CONTENT if out.has(pytraceback.HEAD) else score


FAMILY = Family("python", detect, generic.select)
