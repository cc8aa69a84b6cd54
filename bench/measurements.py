"""docs/measurements.md is written by the scripts that measure, never by hand.

Each writer owns one marked block of the file and replaces only that block, so figures from
different benchmarks (and from .ci/run) never overwrite each other and nothing typed in prose can
go stale:

    <!-- BEGIN soak -->
    …what bench.soak printed last, with its date and the command that reproduces it…
    <!-- END soak -->

A benchmark records what it prints by running its body inside `recorded`:

    from bench.measurements import recorded
    with recorded("soak", "Soak: 2,000 turns against a faulty loopback server"):
        main()

From the shell, `python3 -m bench.measurements NAME < text` puts stdin into block NAME as it is.
"""

from __future__ import annotations

import argparse
import io
import os
import platform
import shlex
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MEASUREMENTS = ROOT / "docs" / "measurements.md"
HEADER = """# Measurements

Written by the scripts that measure, never by hand: each block below is replaced by the script
named in it (see `bench/measurements.py`). To refresh a block, run its command from the
repository root.
"""


def markers(name: str) -> tuple[str, str]:
    """The comment lines that open and close block `name`."""
    if not name or any(c in name for c in "<>\n") or name != name.strip():
        raise ValueError(f"a block name is one line of text without < or >: {name!r}")
    return f"<!-- BEGIN {name} -->", f"<!-- END {name} -->"


def replace_block(document: str, name: str, body: str) -> str:
    """`document` with block `name` holding `body`; every byte outside the block is kept as it was.
    A missing block is appended at the end."""
    begin, end = markers(name)
    block = f"{begin}\n{body.strip(chr(10))}\n{end}"
    start = document.find(begin)
    if start < 0:
        if document and not document.endswith("\n"):
            document += "\n"
        return f"{document}\n{block}\n" if document else f"{block}\n"
    stop = document.find(end, start + len(begin))
    if stop < 0:
        raise ValueError(f"{begin} has no {end} after it")
    return document[:start] + block + document[stop + len(end):]


def write_block(name: str, body: str, path: Path = MEASUREMENTS) -> None:
    """Replace block `name` of the file at `path` (created with a header when missing), atomically:
    a reader sees the old file or the new one, never half of it."""
    old = path.read_bytes().decode("utf-8") if path.exists() else HEADER  # bytes: keep \r\n as they are
    new = replace_block(old, name, body)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as out:
            out.write(new)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def as_markdown(output: str) -> str:
    """Printed output as Markdown: runs of table rows (lines starting with `|`) stay tables, every
    other run of lines goes into a text fence so that its alignment survives."""
    parts: list[str] = []
    run: list[str] = []
    table = False
    for line in [*output.rstrip().splitlines(), None]:
        is_row = line is not None and line.lstrip().startswith("|")
        if line is None or is_row != table:
            text = "\n".join(run).strip("\n")
            if text:
                parts.append(text if table else f"```text\n{text}\n```")
            run, table = [], is_row
        if line is not None:
            run.append(line)
    return "\n\n".join(parts)


def provenance(command: str) -> str:
    """When, where and how a figure was made: the date, the commit, the machine and the command."""
    when = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    commit = _commit()
    load = f", load {os.getloadavg()[0]:.1f}" if hasattr(os, "getloadavg") else ""
    machine = f"{platform.system()} {platform.machine()}, {os.cpu_count()} cores{load}, Python {platform.python_version()}"
    return f"Measured {when}{f' at commit {commit}' if commit else ''}; {machine}.\n\nReproduce: `{command}`"


def _commit() -> str:
    try:
        done = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                              timeout=10, check=False)
    except OSError:
        return ""
    return done.stdout.strip() if done.returncode == 0 else ""


def section(title: str, command: str, output: str) -> str:
    """A block's text: its heading, its provenance and the output as Markdown."""
    return f"## {title}\n\n{provenance(command)}\n\n{as_markdown(output)}\n"


class _Tee(io.TextIOBase):
    """Writes go to the real stream as before and are kept for the block."""

    def __init__(self, stream: io.TextIOBase) -> None:
        self.stream = stream
        self.kept = io.StringIO()

    def write(self, text: str) -> int:
        self.kept.write(text)
        return self.stream.write(text)

    def flush(self) -> None:
        self.stream.flush()


@contextmanager
def recorded(name: str, title: str, command: str | None = None, path: Path = MEASUREMENTS) -> Iterator[None]:
    """Print as usual inside the block, then write what was printed to block `name` of `path`.
    Nothing is written when the body fails (an exception, or SystemExit with a status other than 0),
    so a broken run never replaces good figures. `command` defaults to `python3 -m bench.NAME ARGS`."""
    if {"-h", "--help"} & set(sys.argv[1:]):  # a usage text is no measurement
        yield
        return
    tee = _Tee(sys.stdout)
    sys.stdout = tee
    try:
        yield
    except SystemExit as stop:
        if stop.code not in (None, 0):
            raise
        _record(name, title, command, tee.kept.getvalue(), path)
        raise
    finally:
        sys.stdout = tee.stream
    _record(name, title, command, tee.kept.getvalue(), path)


def _record(name: str, title: str, command: str | None, output: str, path: Path) -> None:
    command = command or shlex.join(["python3", "-m", f"bench.{name}", *sys.argv[1:]])
    output = output.replace(f"{ROOT}{os.sep}", "")  # paths in the checkout, relative: no machine's folders
    write_block(name, section(title, command, output), path)
    print(f"(written to block {name!r} of {path})", file=sys.stderr)


def write_or_explain(prog: str, name: str, body: Callable[[], str], path: Path) -> int:
    """A command line's exit status: 0 once block `name` is written, else 2 and one line saying why
    (a bad name, a file without the block's end, an unreadable log), never a traceback."""
    try:
        write_block(name, body(), path)
    except (ValueError, OSError) as error:
        print(f"{prog}: {error}", file=sys.stderr)
        return 2
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Put stdin into one block of docs/measurements.md, as it is.")
    parser.add_argument("name", help="the block's name")
    parser.add_argument("--file", type=Path, default=MEASUREMENTS, help="default: docs/measurements.md")
    args = parser.parse_args(argv)
    return write_or_explain("measurements", args.name, sys.stdin.read, args.file)


if __name__ == "__main__":
    sys.exit(main())
