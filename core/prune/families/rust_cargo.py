"""cargo and rustc: build, check, clippy, test, run.

A diagnostic is a block from `error[E0308]: ...` / `warning: ...` to the next blank line, with its
` --> file:line:col` and the annotated source. Error blocks stay whole; warning blocks go when
anything failed and shrink to their headline and location otherwise. `Compiling`/`Downloaded`
lines and passing `test x ... ok` lines go; panics, failures and `test result:` lines stay.

Understands cargo/rustc 1.60+ human diagnostics, cargo test and nextest's libtest-like lines, clippy.
Falls through: --message-format=json and RUST_BACKTRACE frames outside a test (the general stack layer).
"""

from __future__ import annotations

import re
from collections import Counter

from core.prune.families.base import COMMAND, STRONG_CONTENT, Family
from core.prune.output import Output
from core.prune.rules import FULL_WARNINGS, WARNING_LINES, is_blank, kinds_note
from core.prune.selection import HIDDEN, KEPT, Selection

_DIAG_RE = re.compile(r"^(error|warning)(?:\[\w+\])?(?::|$)")
# cargo's status lines: a capitalised verb right-aligned in 12 columns ("   Compiling", "    Finished").
_STATUS_RE = re.compile(r"^ {2,12}[A-Z][\w-]+(?: |$)")
_PROGRESS_VERBS = {"Compiling", "Checking", "Downloaded", "Downloading", "Updating", "Locking", "Adding", "Fresh",
                   "Blocking", "Documenting", "Packaging", "Verifying", "Unpacking", "Installing", "Replacing",
                   "Removing", "Scraping", "Building", "Archiving", "Uploading", "Waiting", "Fetching"}
_WARNING_SUMMARY_RE = re.compile(r"^warning: .* generated \d+ warnings?\b")
_TEST_RE = re.compile(r"^test (\S.*) \.\.\. (ok|FAILED|ignored|bench:.*)$")
_RESULT_RE = re.compile(r"^test result: |^error: test failed|^error: \d+ targets? failed")
_FAILURE_HEAD_RE = re.compile(r"^---- \S.* (?:stdout|stderr) ----$")
_LIBRARY_FRAME_RE = re.compile(r"^\s+\d+: (?:std::|core::|alloc::|test::|rust_begin_unwind|__rust|<alloc::|<core::|"
                               r"<std::|_start|__libc|main$)|^\s+at /rustc/")
MAX_ERROR_LINES = 60
_BINARY_RE = re.compile(r"^\s+(?:Running \S|Doc-tests \S)")
PASSING_BINARIES = "lines of test binaries that passed"
_QUOTED_RE = re.compile(r"`[^`]*`")


def detect(out: Output) -> int:
    if out.command.runs("cargo", "rustc", "cargo-nextest", "clippy-driver"):
        return COMMAND
    return STRONG_CONTENT if out.has("error[E", "   Compiling ", "test result: ", "could not compile `") else 0


def select(out: Output) -> Selection:
    lines = out.lines
    sel = Selection(lines, default=KEPT)
    blocks = _diagnostics(lines)
    failed = out.failed or any(kind == "error" for kind, _, _ in blocks)
    warnings = []
    for kind, start, stop in blocks:
        if kind == "error":
            sel.pin_range(start, min(stop, start + MAX_ERROR_LINES))
        elif not failed and _WARNING_SUMMARY_RE.match(lines[start]):
            sel.pin(start)  # "warning: `geo` (lib) generated 3 warnings": the count, on success
        else:
            warnings.append((start, stop + 1 if stop < len(lines) and is_blank(lines[stop]) else stop))
    hidden = warnings if failed else warnings[FULL_WARNINGS:]
    for start, stop in hidden:
        sel.hide_range(start, stop, WARNING_LINES)
    if hidden and not failed:
        sel.note(hidden[0][0], kinds_note("warnings", Counter(_kind(lines[start]) for start, _ in hidden)))
    in_failure = False
    for i, line in enumerate(lines):
        if _is_progress(line):
            sel.hide(i, "build progress lines")
        elif m := _TEST_RE.match(line):
            if m.group(2) == "FAILED":
                sel.pin(i)
            else:
                sel.hide(i, "passing tests" if m.group(2) == "ok" else "ignored tests")
        elif _RESULT_RE.match(line) or _FAILURE_HEAD_RE.match(line) or "panicked at" in line:
            sel.pin(i)
            in_failure = _FAILURE_HEAD_RE.match(line) is not None or in_failure
        elif _LIBRARY_FRAME_RE.match(line):
            sel.hide(i, "library frames")
        elif in_failure and not is_blank(line):
            sel.pin(i)
        elif is_blank(line):
            in_failure = False
    if failed:
        _fold_passing_binaries(sel)
    return sel


def _fold_passing_binaries(sel: Selection) -> None:
    """When something failed, a test binary that passed whole is one fact: its lines go, counted."""
    lines = sel.lines
    start = None
    for i, line in enumerate(lines):
        if _BINARY_RE.match(line):
            start = i
        elif start is not None and line.startswith("test result: "):
            if line.startswith("test result: ok."):
                sel.hide_range(start, i + 1, PASSING_BINARIES)
                for j in range(start, i + 1):
                    sel.level[j], sel.reasons[j] = HIDDEN, PASSING_BINARIES  # its pinned result line too
            start = None


def _is_progress(line: str) -> bool:
    return line[:1] == " " and _STATUS_RE.match(line) is not None and line.split(None, 1)[0] in _PROGRESS_VERBS


def _kind(headline: str) -> str:
    """`warning: unused variable: `n`` -> "unused variable"."""
    return _QUOTED_RE.sub("…", headline.split(":", 1)[-1].strip()).removesuffix(": …")


def _diagnostics(lines: list[str]) -> list[tuple[str, int, int]]:
    """(kind, first line, line after the block) for each error/warning block."""
    blocks = []
    i, n = 0, len(lines)
    while i < n:
        m = _DIAG_RE.match(lines[i])
        if m is None:
            i += 1
            continue
        j = i + 1
        while j < n and not is_blank(lines[j]) and not _DIAG_RE.match(lines[j]) and not _STATUS_RE.match(lines[j]):
            j += 1
        blocks.append((m.group(1), i, j))
        i = j
    return blocks


FAMILY = Family("cargo", detect, select)
