"""A fake home folder full of credential files of many tools (tests/support/credential_home.py),
and the spellings a command can read a folder with: what the sandbox's read allowlist must stop."""

from __future__ import annotations

import re
from pathlib import Path

from tests.support.credential_home import CREDENTIAL_FILES

# Each reads the whole home folder (or one file of it, `{f}`) its own way.
WHOLE_HOME = [
    "find ~ -type f -exec cat {} + 2>/dev/null",
    "grep -ra . ~ 2>/dev/null",
    "tar -cf - ~ 2>/dev/null | base64 -w0",
    "cp -r ~ ./stolen 2>/dev/null; find ./stolen -type f -exec cat {} + 2>/dev/null",
    "python3 -c \"import os, pathlib; [print(p.read_text()) for p in pathlib.Path(os.path.expanduser('~'))"
    ".rglob('*') if p.is_file() and os.access(p, os.R_OK)]\" 2>&1",
]
ONE_FILE = [
    "cat {f}",
    "python3 -c \"print(open('{f}').read())\" 2>&1",
    "base64 -w0 {f}",
    "cp {f} ./copied 2>/dev/null; cat ./copied",
]


def write_credential_home(home: Path, workspace: Path) -> list[tuple[Path, list[str]]]:
    """Every credential file at its tool's place in `home` (a path given relative to the workspace,
    such as `../other/.env`, beside it); (file, the credentials in it) for each."""
    written: dict[Path, list[str]] = {}
    for name, text, credentials in CREDENTIAL_FILES:
        place = re.sub(r" \(.*\)$", "", name)
        if " " in place:
            continue  # not a file (another process's command line)
        path = (workspace / place).resolve() if place.startswith("../") else home / place
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("a", encoding="utf-8") as out:
            out.write(text)
        written.setdefault(path, []).extend(credentials)
    return list(written.items())
