"""Whether a write broke a file's syntax, for the formats the standard library can parse: Python,
JSON and TOML. A model that breaks a file (an unclosed bracket in a rewrite) usually answers that it
is done; told in the write's own result, it fixes the file in its next step. A file that did not
parse before is not judged (the write may be a step of a larger fix), nor is one larger than
MAX_BYTES."""

from __future__ import annotations

import ast
import json
import sys
import warnings
from collections.abc import Callable
from pathlib import PurePosixPath

import tomllib

MAX_BYTES = 1_000_000


def _python(text: str) -> None:
    with warnings.catch_warnings():  # invalid escape sequences and the like are warnings, not breakage
        warnings.simplefilter("ignore")
        ast.parse(text)


_PARSERS: dict[str, tuple[str, Callable[[str], object]]] = {
    ".py": (f"Python (to Python {sys.version_info.major}.{sys.version_info.minor}'s parser)", _python),
    ".json": ("JSON", json.loads),
    ".toml": ("TOML", tomllib.loads),
}


def broken_note(rel: str, before: bytes | None, after: bytes) -> str:
    """What is wrong when `after` does not parse as its format and `before` did (or there was no
    file); "" otherwise."""
    kind = _PARSERS.get(PurePosixPath(rel).suffix.lower())
    if kind is None or len(after) > MAX_BYTES:
        return ""
    name, parse = kind
    problem = _problem(parse, after)  # first: most writes parse, and then `before` need not be read
    if problem is None or (before is not None and _problem(parse, before) is not None):
        return ""
    now = "is not" if before is None else "is no longer"
    return f"{rel} {now} valid {name}: {problem}. Fix it before going on"


def _problem(parse: Callable[[str], object], data: bytes) -> str | None:
    try:
        parse(data.decode("utf-8-sig"))
    except UnicodeDecodeError:
        return None  # not text this check can judge
    except SyntaxError as exc:
        return f"line {exc.lineno}: {exc.msg}"
    except (ValueError, tomllib.TOMLDecodeError) as exc:  # JSONDecodeError is a ValueError
        return str(exc)
    except (RecursionError, MemoryError):
        return None
    return None
