"""The machinery of generate.py: the case registry, running, scrubbing and labelling."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import textwrap
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE / "cases"
PROJ = "/home/user/proj"
ANSI_RE = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[()][0-9A-Za-z]|\x1b[@-Z\\-_=>]")
_URL_HOST_RE = re.compile(r"[a-z][\w+.-]*://(?:[^@/\s]+@)?([\w.-]+)")
_CONFIGS = ("/etc/pip.conf", "~/.pip/pip.conf", "~/.config/pip/pip.conf", "~/.npmrc", "/etc/apt/sources.list",
            "/etc/apt/sources.list.d")
ZH = {"LANG": "zh_CN.UTF-8", "LANGUAGE": "zh_CN", "LC_ALL": "zh_CN.UTF-8"}
ZH_GBK = {"LANG": "zh_CN.GBK", "LANGUAGE": "zh_CN", "LC_ALL": "zh_CN.GBK"}
ALL = "ALL"  # the label spec of a query: every line is the answer


@dataclass
class Case:
    """How to make one case: `build` writes the project into a folder and returns the run."""

    build: Callable[[Path], Run]
    tool: str  # the program that must exist
    keep: tuple[str, ...] | str = ()  # label patterns (regex, searched in each cleaned line), or ALL
    last: bool = False  # label the last non-blank line too (a tool that prints no summary)
    encoding: str = "utf-8"  # how the output's labels are read (a GBK console's output)
    heading: str = ""  # also label the nearest line above each label that matches this (a finding's location)


@dataclass
class Run:
    cmd: str  # what actually runs, through bash
    shown: str = ""  # the command line as the user typed it (cmd.txt), when it differs
    env: dict[str, str] = field(default_factory=dict)
    cwd: Path | None = None  # default: the project folder
    scrub: list[tuple[str, str]] = field(default_factory=list)  # extra replacements, applied first


CASES: dict[str, Case] = {}


def case(tool: str, keep: tuple[str, ...] | str = (), last: bool = False, encoding: str = "utf-8", heading: str = ""):
    def register(build: Callable[[Path], Run]) -> Callable[[Path], Run]:
        CASES[build.__name__] = Case(build, tool, keep, last, encoding, heading)
        return build
    return register


def write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")


def sh(root: Path, cmd: str, env: dict[str, str] | None = None) -> None:
    """A set-up step: must succeed, its output is not part of the case."""
    subprocess.run(cmd, shell=True, cwd=root, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   env={**os.environ, **(env or {})}, executable="/bin/bash")


def mirror_hosts() -> set[str]:
    """The package-index hosts this machine is configured with (environment, pip, npm and apt
    configuration): they become pkgs.example.org, so no machine's mirror is named in the corpus."""
    texts = [v for v in os.environ.values() if "://" in v]
    for name in _CONFIGS:
        path = Path(name).expanduser()
        for file in ([path] if path.is_file() else sorted(path.glob("*")) if path.is_dir() else []):
            texts.append(file.read_text(errors="replace"))
    return {m.group(1) for text in texts for m in _URL_HOST_RE.finditer(text)}


def scrub(data: bytes, pairs: list[tuple[str, str]], encoding: str) -> bytes:
    for old, new in pairs + [(host, "pkgs.example.org") for host in sorted(mirror_hosts(), key=len, reverse=True)]:
        data = data.replace(old.encode(encoding), new.encode(encoding))
    return data


def labels(text: str, spec: Case) -> list[str]:
    lines = []
    for raw in ANSI_RE.sub("", text).replace("\r\n", "\n").split("\n"):
        line = raw.rstrip("\r").rsplit("\r", 1)[-1].strip()
        if line:
            lines.append(line)
    if spec.keep == ALL:
        return lines
    patterns = [re.compile(p) for p in spec.keep]
    picked = []
    heading, last_heading = re.compile(spec.heading) if spec.heading else None, None
    for line in lines:
        if heading and heading.search(line):
            last_heading = line
        if any(p.search(line) for p in patterns):
            if last_heading is not None:
                picked.append(last_heading)
            picked.append(line)
    if spec.last and lines and lines[-1] not in picked:
        picked.append(lines[-1])
    return list(dict.fromkeys(picked))


def generate(name: str, spec: Case, tmp: Path) -> None:
    root = tmp / name
    root.mkdir(parents=True)
    run = spec.build(root)
    # pip's settings of this machine (a local wheel folder, an index) would show in pip's output
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("PIP_")}, "NO_COLOR": "1", "TERM": "dumb",
           **run.env}
    proc = subprocess.run(run.cmd, shell=True, cwd=run.cwd or root, stdin=subprocess.DEVNULL,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env, executable="/bin/bash",
                          check=False)
    pairs = [*run.scrub, (str(root), PROJ), (str(tmp), "/tmp/build"), (sys.base_prefix, "/usr/local"),
             (str(Path.home()), "/home/user"),
             (socket.gethostname(), "host")]
    output = scrub(proc.stdout, pairs, spec.encoding)
    folder = OUT / name
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "cmd.txt").write_text((run.shown or run.cmd) + "\n", encoding="utf-8")
    (folder / "output.txt").write_bytes(output)
    (folder / "exit_code.txt").write_text(f"{proc.returncode}\n", encoding="utf-8")
    must = labels(output.decode(spec.encoding, errors="replace"), spec)
    (folder / "must_keep.txt").write_text("".join(f"{line}\n" for line in must), encoding="utf-8")
    print(f"{name}: exit {proc.returncode}, {len(output):,} bytes, {len(must)} labels")
