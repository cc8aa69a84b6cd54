"""Secrets leave the process's own environment: what a child inherits by default, what another
process reads from /proc/<pid>/environ (Linux) or the environment block (Windows)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from tests.support.paths import ROOT

SECRETS = {"DEEPSEEK_API_KEY": "sk-hide-me-0123456789abcdef", "STRIPE_SK": "sk_live_hide-me-too-4242",
           "DB_PW": "hide-me-password-77", "DATABASE_URL": "postgres://bob:hide-me-url@db/x"}
KEPT = {"KEEP_ME": "visible-value", "MY_TOKEN": "kept-on-purpose-123", "HTTPS_PROXY": "http://u:proxy-pw-99@proxy:3128"}

# Runs in a fresh interpreter: hides, then reports what remains where others can see it.
CHILD = r"""
import json, os, subprocess, sys
sys.path.insert(0, sys.argv[1])
from core.secret_env import hide_secret_environment
hidden = hide_secret_environment(keep="MY_TOKEN")
inherited = subprocess.run([sys.executable, "-c", "import json, os; print(json.dumps(dict(os.environ)))"],
                           capture_output=True, text=True, check=True).stdout
block = ""
if sys.platform.startswith("linux"):
    block = open(f"/proc/{os.getpid()}/environ", "rb").read().decode("utf-8", "replace")
print(json.dumps({"hidden": sorted(hidden.values), "cleared": hidden.block_cleared, "inherited": json.loads(inherited),
                  "block": block, "proxy": os.environ.get("HTTPS_PROXY"), "pid": os.getpid()}))
"""


def test_hidden_secrets_are_in_no_block_a_child_or_another_process_reads() -> None:
    root = str(ROOT)
    env = {**os.environ, **SECRETS, **KEPT}
    done = subprocess.run([sys.executable, "-c", CHILD, root], env=env, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert set(SECRETS) | {"HTTPS_PROXY"} <= set(report["hidden"]) and "MY_TOKEN" not in report["hidden"]
    for name, value in SECRETS.items():
        assert name not in report["inherited"] and value not in report["block"], name
    assert "proxy-pw-99" not in report["block"]
    assert report["inherited"]["KEEP_ME"] == "visible-value" and report["inherited"]["MY_TOKEN"] == KEPT["MY_TOKEN"]
    assert report["proxy"] == KEPT["HTTPS_PROXY"]  # the agent's own HTTP client still has its proxy
    if sys.platform.startswith("linux"):
        assert report["cleared"] and "KEEP_ME=visible-value" in report["block"]
