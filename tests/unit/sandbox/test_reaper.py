"""Orphans that left their command's session end with the agent's session whatever they did to their
environment; a helper of the agent's own (a clipboard server) is left running."""

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

# Plays the agent: becomes a subreaper, starts setsid'd daemons through a shell that exits at once
# (commands' in several spellings, and a helper of its own), then closes the session.
ESCAPES = {
    "setsid": "setsid sleep 300 > /dev/null 2>&1 < /dev/null & echo $!",
    "env -i": "env -i setsid sleep 301 > /dev/null 2>&1 < /dev/null & echo $!",
    "exec -c": "setsid bash -c 'exec -c sleep 302' > /dev/null 2>&1 < /dev/null & echo $!",
    "not dumpable": "setsid python3 -c 'import ctypes, time; ctypes.CDLL(None).prctl(4, 0, 0, 0, 0); "
                    "time.sleep(303)' > /dev/null 2>&1 < /dev/null & echo $!",
}
AGENT = r"""
import json, os, subprocess, sys, time
from core.sandbox.reaper import become_subreaper, end_adopted, helper_environment
assert become_subreaper()
pids = {}
for name, (script, env) in {**{k: (v, dict(os.environ)) for k, v in json.loads(sys.argv[1]).items()},
                            "helper": ("setsid sleep 304 > /dev/null 2>&1 < /dev/null & echo $!",
                                       helper_environment())}.items():
    out = subprocess.run(["sh", "-c", script], env=env, capture_output=True, text=True, check=True).stdout
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


def test_commands_orphans_end_with_the_session_and_the_agents_helpers_run_on() -> None:
    root = Path(__file__).resolve().parents[3]
    done = subprocess.run([sys.executable, "-c", AGENT, json.dumps(ESCAPES)], cwd=root, capture_output=True,
                          text=True, timeout=30, env={**os.environ, "PYTHONPATH": str(root)})
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    pids = report["pids"]
    try:
        assert report["ended"] == len(ESCAPES)
        for name in ESCAPES:
            assert not _alive(pids[name]), f"a command's orphan ({name}) outlived the session"
        time.sleep(0.2)
        assert _alive(pids["helper"]), "the agent's own helper was ended"
    finally:
        for pid in pids.values():
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
