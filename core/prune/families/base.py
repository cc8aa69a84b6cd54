"""What a family is: a name, a detector and a rule set."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from core.prune.output import Output
from core.prune.selection import Selection

# Detection scores. A command that names the tool outright beats any content sniffing; content
# markers decide for wrappers whose tool is unknown (`npm test`, `make check`, `tox`).
COMMAND = 100
WEAK_COMMAND = 35
STRONG_CONTENT = 60
CONTENT = 45


@dataclass(frozen=True)
class Family:
    name: str
    detect: Callable[[Output], int]
    select: Callable[[Output], Selection]
    # Whether the budget may shrink the family's pinned lines to the error-looking ones; a diff's or a
    # listing's pins are not about errors, so they are cut by head and tail instead.
    errors_first: bool = True
    # Whether the text agrees with the family (given the lines the guard found errors on): output
    # that contradicts it is left to the generic layer.
    confirm: Callable[[Output, frozenset[int]], bool] = lambda out, errors: True
