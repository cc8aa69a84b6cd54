"""Orphans that left their command's session end with the agent's session; a helper of the agent's
own (unmarked, like a clipboard server) is left running."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="a child subreaper is Linux's")

# Plays the agent: becomes a subreaper, starts two setsid'd daemons through a shell that exits at
# once (one with the mark every command gets, one without), then closes the session.
AGENT = r"""
import json, os, subprocess, sys, time
from core.sandbox.reaper import MARK, become_subreaper, end_adopted
assert become_subreaper()
pids = {}
for name, env in (("marked", {**os.environ, MARK: str(os.getpid())}), ("unmarked", dict(os.environ))):
    out = subprocess.run(["sh", "-c", "setsid sleep 300 > /dev/null 2>&1 < /dev/null & echo $!"],
                         env=env, capture_output=True, text=True, check=True).stdout
    pids[name] = int(out)
time.sleep(0.3)
ended = end_adopted(grace=0.5)
print(json.dumps({"pids": pids, "ended": ended}), flush=True)
"""


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, IndexError):
        return False
    return state != "Z"


def test_marked_orphans_end_with_the_session_and_others_run_on() -> None:
    root = Path(__file__).resolve().parents[3]
    done = subprocess.run([sys.executable, "-c", AGENT], cwd=root, capture_output=True, text=True, timeout=30,
                          env={**os.environ, "PYTHONPATH": str(root)})
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    marked, unmarked = report["pids"]["marked"], report["pids"]["unmarked"]
    try:
        assert report["ended"] == 1
        assert not _alive(marked), "the command's setsid'd orphan outlived the session"
        time.sleep(0.2)
        assert _alive(unmarked), "an orphan that is no command's was ended"
    finally:
        for pid in (marked, unmarked):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
