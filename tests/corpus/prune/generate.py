#!/usr/bin/env python3
"""Regenerate the pruner's own corpus by running real tools on small sample projects.

    python3 tests/corpus/prune/generate.py [CASE ...]      (default: every case)

Each case becomes `cases/NAME/` beside this script, in the layout of the shared pruning benchmark:
`cmd.txt`, `output.txt` (stdout and stderr through one pipe, the exact bytes), `exit_code.txt`, and
`must_keep.txt`, whose lines are picked by the case's label patterns from the scrubbed output and
then checked by hand (docs/pruning.md states the policy). The cases are defined in `cases_posix.py`
and `cases_windows.py`, the machinery in `harness.py`.

Scrubbing, in outputs and labels alike: the scratch project becomes /home/user/proj (on Windows
C:\\Users\\user\\proj), the Python installation /usr/local, the home folder /home/user, the host name
`host`, and the package-index hosts this machine is configured with `pkgs.example.org`.

Needs gcc, make, git, bash, apt-get, valgrind, javac, ruby, go, php, bats, clang-format, rustfmt,
shellcheck, black, tox, the zh_CN.UTF-8 and zh_CN.GBK locales with the tools' translations, and for
the Windows cases wine with a prefix holding the Windows Python at C:\\py311 ($PRUNE_WINEPREFIX, by
default the one tests/windows.py prepares). A case whose tool is missing is skipped with a notice.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import cases_posix  # noqa: F401  (each module registers its cases)
import cases_windows  # noqa: F401
from harness import CASES, generate


def main(argv: list[str]) -> int:
    wanted = argv or list(CASES)
    unknown = [n for n in wanted if n not in CASES]
    if unknown:
        print(f"unknown case(s): {', '.join(unknown)}", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="prune-corpus-") as tmp:
        for name in wanted:
            spec = CASES[name]
            if not shutil.which(spec.tool):
                print(f"{name}: skipped, {spec.tool} is missing")
                continue
            try:
                generate(name, spec, Path(tmp))
            except (subprocess.CalledProcessError, OSError) as exc:
                print(f"{name}: set-up failed: {exc}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
