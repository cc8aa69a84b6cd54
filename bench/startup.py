"""Start-up benchmark: the source run against the one-file exe, in one run, on this machine.

Run from the repository root: `python3 -m bench.startup [--runs 5] [--exe PATH] [--wine]`. It builds
the exe first when it is missing or stale (`./build.sh`). Three measures, median wall time of
`--runs` runs each:

- `--version`: process start to exit (the fast path: no settings, no network code);
- `--one`: a piped one-shot task answered by the scripted server on 127.0.0.1 (tests/support/sse_server.py);
  once more, a single run, with an empty cache, where the exe unpacks its runtime (hooks/bootloader)
  and writes out the packed binaries it loads;
- first frame: the program started in tmux with no flags (what a double-click runs) until its first
  screen shows: the full-screen TUI's first frame, or the plain REPL where the TUI cannot start.
  `tmux + echo` is what tmux's own start and the polling cost, for scale.

The three are measured again with a Chinese locale (`LANG=zh_CN.UTF-8`), where the message catalog
is read. `--exe` twice compares two builds in one run (each named by the commit of its checkout):
`--exe dist/deepseek-agent --exe ../old/dist/deepseek-agent`.

`--wine` adds the same rows for Windows CPython under wine against the Windows exe (./build.sh
--windows), whose figures say more about wine's unpacking than about real Windows.

`--version` once more where the user's cache cannot hold the runtime (a file in its place): each
start unpacks it to a temporary folder, as a stock one-file exe does. And the floor of a stock
one-file exe: one whose program only prints a line, built by the same PyInstaller from the same
Python with the same stripping but PyInstaller's own bootloader (in the build venv of ./build.sh),
timed in turns with the source run's `--version`: what such an exe pays before any Python runs
(inflating and writing libpython and the standard library it starts with, a second process,
deleting them) is in that figure, whatever the program does.

Then what each dependency costs: per distribution, the bytes it adds to each exe, the bytes unpacked
to disk before Python starts (once, to the user's cache; at every start where there is none; the
modules are read in place) and the bytes of packed binaries written once to the user's cache when
first imported (core/frozen_imports.py), with the MCP client and the packages only it needs as one sum.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # runs as `python3 bench/startup.py` and as `python3 -m bench.startup`

from bench.measurements import recorded
from tests.support.sse_server import Reply, ScriptedServer, text_events

ROOT = Path(__file__).resolve().parent.parent
KEY = "sk-bench-0000000000000000"
WINEPREFIX = Path(os.environ.get("DEEPSEEK_AGENT_CACHE")
                  or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "deepseek-agent"
                  ) / "exe" / "wine" / "prefix"
WINE_PYTHON = r"C:\py311\python.exe"
BUILD_PYTHON = WINEPREFIX.parent.parent / "linux-venv" / "bin" / "python"  # has PyInstaller's archive reader


def medians(runs: int, once: Callable[[list[str]], float], commands: list[list[str]]) -> list[float]:
    """The median seconds of each command, run in turns so that a load spike on the shared machine
    hits them all alike."""
    for command in commands:
        once(command)  # warm the page cache and, for wine, the wineserver
    times: list[list[float]] = [[] for _ in commands]
    for _ in range(runs):
        for command, spent in zip(commands, times, strict=True):
            spent.append(once(command))
    return [statistics.median(spent) for spent in times]


def timed(command: list[str], env: dict[str, str], cwd: Path, stdin: bytes = b"") -> float:
    start = time.perf_counter()
    done = subprocess.run(command, input=stdin, capture_output=True, env=env, cwd=cwd, check=False, timeout=120)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{shlex.join(command)} failed ({done.returncode}):\n"
                         f"{done.stderr.decode('utf-8', 'replace')[-2000:]}")
    return elapsed


def first_frame(command: list[str], env: dict[str, str], cwd: Path) -> float:
    """Seconds from starting `command` in a fresh tmux session to the first non-blank screen."""
    name = f"bench-{uuid.uuid4().hex[:8]}"
    line = shlex.join(["env", "-i", *(f"{k}={v}" for k, v in env.items()), *command]) + "; sleep 30"
    start = time.perf_counter()
    tmux = ["tmux", "new-session", "-d", "-s", name, "-x", "120", "-y", "40", "-c", str(cwd), line]
    if subprocess.run(tmux, capture_output=True, check=False).returncode != 0:
        time.sleep(0.2)  # the previous session's tmux server was still shutting down
        start = time.perf_counter()
        subprocess.run(tmux, check=True)
    try:
        while time.perf_counter() - start < 60:
            screen = subprocess.run(["tmux", "capture-pane", "-p", "-t", name], capture_output=True, text=True,
                                    check=False).stdout
            if screen.strip():
                return time.perf_counter() - start
            time.sleep(0.005)
        raise SystemExit(f"{shlex.join(command)} showed nothing in 60 s")
    finally:
        subprocess.run(["tmux", "kill-session", "-t", name], capture_output=True, check=False)


def built_from(exe: Path) -> str:
    """", built at <commit>" for an exe in a checkout's dist/ folder, so two builds compared are named."""
    done = subprocess.run(["git", "-C", str(exe.parent.parent), "log", "-1", "--format=%h"], capture_output=True,
                          text=True, check=False)
    return f", built at {done.stdout.strip()}" if done.returncode == 0 and done.stdout.strip() else ""


FLOOR_PROGRAM = 'print("deepseek-agent 0.0.0")\n'


def floor_exe(folder: Path) -> Path:
    """The print-only one-file exe, built the way deepseek-agent.spec builds (one file, stripped, no UPX)."""
    folder.mkdir()
    (folder / "floor.py").write_text(FLOOR_PROGRAM, encoding="utf-8")
    done = subprocess.run([str(BUILD_PYTHON), "-m", "PyInstaller", "--onefile", "--strip", "--noupx", "--noconfirm",
                           "--log-level", "WARN", "--distpath", str(folder / "dist"), "--workpath",
                           str(folder / "build"), "--specpath", str(folder), str(folder / "floor.py")],
                          capture_output=True, text=True, check=False, timeout=600)
    if done.returncode != 0:
        raise SystemExit(f"building the print-only exe failed:\n{done.stderr[-3000:]}")
    return folder / "dist" / "floor"


def build(*flags: str) -> Path:
    done = subprocess.run([str(ROOT / "build.sh"), *flags], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"./build.sh {' '.join(flags)} failed:\n{done.stderr[-3000:]}")
    return Path(done.stdout.strip().splitlines()[-1])


class Bench:
    def __init__(self, runs: int, folder: Path, url: str, columns: list[str]) -> None:
        self.runs, self.folder, self.url, self.columns = runs, folder, url, columns
        self.workspace = folder / "ws"
        self.workspace.mkdir(exist_ok=True)
        self.rows: list[tuple[str, list[float]]] = []

    def env(self, **extra: str) -> dict[str, str]:
        return {"PATH": os.environ["PATH"], "HOME": str(self.folder), "LANG": "C.UTF-8", "TERM": "xterm-256color",
                "DEEPSEEK_BASE_URL": self.url, "DEEPSEEK_API_KEY": KEY, "NO_COLOR": "1",
                "AGENT_SESSIONS_DIR": str(self.folder / "sessions"), **extra}

    def compare(self, label: str, commands: list[list[str]], env: dict[str, str]) -> None:
        """The three measures for each command prefix (the source run first, then each exe)."""
        args = ["--cwd", str(self.workspace)]
        measures: dict[str, Callable[[list[str]], float]] = {
            "--version": lambda cmd: timed([*cmd, "--version"], env, self.folder),
            "--one": lambda cmd: timed([*cmd, *args, "--one"], env, self.folder, b"hello"),
            "first frame": lambda cmd: first_frame([*cmd, *args], env, self.folder),
        }
        for what, once in measures.items():
            self.rows.append((f"{label} {what}", medians(self.runs, once, commands)))

    def first_use(self, commands: list[list[str]]) -> None:
        """`--one` once per exe with an empty cache: the packed binaries it loads are written out
        (core/frozen_imports.py); the other rows see them written. The source column repeats the
        source run's `--one` median, for the ratio."""
        source = next(seconds for label, seconds in self.rows if label == "linux --one")
        row = [source[0]]
        for n, command in enumerate(commands):
            home = self.folder / f"fresh-{n}"
            home.mkdir()
            row.append(timed([*command, "--cwd", str(self.workspace), "--one"], self.env(HOME=str(home)),
                             self.folder, b"hello"))
        self.rows.append(("linux --one, empty cache", row))

    def without_cache(self, commands: list[list[str]]) -> None:
        """`--version` of each exe where the user's cache cannot hold its runtime (a file in its place):
        unpacked to a temporary folder at every start, as a stock one-file exe is. The source column
        repeats the source run's `--version` median, for the ratio."""
        blocked = self.folder / "no-cache"
        blocked.write_text("a file where the cache folder would be", encoding="utf-8")
        source = next(seconds for label, seconds in self.rows if label == "linux --version")
        env = self.env(XDG_CACHE_HOME=str(blocked))
        times = medians(self.runs, lambda cmd: timed([*cmd, "--version"], env, self.folder), commands)
        self.rows.append(("linux --version, no cache", [source[0], *times]))

    def floor(self, exe: Path) -> None:
        """The print-only exe against the source run's `--version`; each exe column repeats it."""
        source, floor = medians(self.runs, lambda cmd: timed(cmd, self.env(), self.folder),
                                [[sys.executable, str(ROOT / "agent.py"), "--version"], [str(exe)]])
        self.rows.append(("stock one-file floor", [source] + [floor] * (len(self.columns) - 1)))

    def baseline(self) -> None:
        [tmux] = medians(self.runs, lambda cmd: first_frame(cmd, self.env(), self.folder), [["sh", "-c", "echo hi"]])
        self.rows.append(("tmux + echo (overhead)", [tmux] * len(self.columns)))

    def print(self) -> None:
        head = f"{'median of ' + str(self.runs) + ' runs':<26}" + "".join(f"{c:>12}" for c in self.columns)
        print(head + "".join(f"{c + '/source':>16}" for c in self.columns[1:]))
        for label, seconds in self.rows:
            cells = "".join(f"{s * 1000:>10.0f}ms" for s in seconds)
            ratios = "".join(f"{s / seconds[0]:>15.2f}x" for s in seconds[1:])
            print(f"{label:<26}{cells}{ratios}")


def contents(exe: Path) -> list[str]:
    """The table of what `exe` carries, per distribution (devtools/exe_archive.py --costs)."""
    python = str(BUILD_PYTHON) if BUILD_PYTHON.exists() else sys.executable
    done = subprocess.run([python, str(ROOT / "devtools" / "exe_archive.py"), "--costs", str(exe)],
                          capture_output=True, text=True, check=False, timeout=300)
    if done.returncode != 0:
        return [f"{exe.name}: cannot read the archive ({done.stderr.strip().splitlines()[-1:]})"]
    found = json.loads(done.stdout)
    packages: dict[str, dict[str, int]] = found["packages"]
    mcp = {name: row for name, row in packages.items() if name in found["mcp"]}
    rows = sorted(packages.items(), key=lambda item: -item[1]["archived"])
    lines = [f"{exe.name}: {exe.stat().st_size / 1e6:.1f} MB; per distribution, KB in the exe / KB unpacked "
             "before Python starts (once) / KB written once to the user's cache, when first imported"]

    def line(label: str, chosen: list[dict[str, int]]) -> str:
        return f"  {label:<52}" + "".join(f"{sum(r[key] for r in chosen) / 1e3:>9.0f}"
                                          for key in ("archived", "unpacked", "cached"))

    lines += [line(name, [row]) for name, row in rows[:14]]
    lines.append(line(f"{len(rows[14:])} others", [row for _, row in rows[14:]]))
    lines.append(line(f"the MCP client and what only it needs ({len(mcp)})", list(mcp.values())))
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--exe", type=Path, action="append",
                        help="a Linux exe to measure (repeatable; default: ./build.sh's)")
    parser.add_argument("--wine", action="store_true", help="also measure the Windows exe under wine")
    args = parser.parse_args(argv)
    exes = [p.resolve() for p in args.exe] if args.exe else [build()]
    win_exe = build("--windows") if args.wine else None
    columns = ["source"] + (["exe"] if len(exes) == 1 else [f"exe{n}" for n in range(1, len(exes) + 1)])
    with tempfile.TemporaryDirectory() as tmp, ScriptedServer([Reply(text_events("hello back"))]) as server:
        bench = Bench(args.runs, Path(tmp), server.url, columns)
        for name, exe in zip(columns[1:], exes, strict=True):
            print(f"{name}: {os.path.relpath(exe)} ({exe.stat().st_size / 1e6:.1f} MB{built_from(exe)})")
        print(f"machine: {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}", flush=True)
        bench.baseline()
        linux = [[sys.executable, str(ROOT / "agent.py")], *[[str(e)] for e in exes]]
        bench.compare("linux", linux, bench.env())
        bench.compare("linux zh_CN", linux, bench.env(LANG="zh_CN.UTF-8"))  # the catalog is read
        bench.first_use([[str(e)] for e in exes])
        bench.without_cache([[str(e)] for e in exes])
        if BUILD_PYTHON.exists():
            bench.floor(floor_exe(Path(tmp) / "floor"))
        else:
            print(f"no floor row: {BUILD_PYTHON} (./build.sh's venv) is missing")
        if win_exe is not None:
            subprocess.run(["wineserver", "-p", "300"], env={**os.environ, "WINEPREFIX": str(WINEPREFIX)},
                           stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           check=False)
            wine_env = bench.env(WINEPREFIX=str(WINEPREFIX), WINEDEBUG="-all")
            bench.compare("wine", [["wine", WINE_PYTHON, str(ROOT / "agent.py")], ["wine", str(win_exe)]], wine_env)
        bench.print()
    for exe in [*exes, *([win_exe] if win_exe else [])]:
        print("\n".join(contents(exe)))
    return 0


if __name__ == "__main__":
    with recorded("startup", "Start-up: the source run against the one-file exe"):
        sys.exit(main())
