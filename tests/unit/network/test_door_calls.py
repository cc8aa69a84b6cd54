"""The exe's door command inside bubblewrap (core/runtime/network_door.py) can load no extension
module the exe keeps packed (its cache of extracted ones may be out of reach there): starting
`agent.py` and routing to the door loads none but those the exe keeps unpacked."""

from __future__ import annotations

import json
import subprocess
import sys

from core.frozen_imports import NEEDED_UNPACKED
from tests.support.paths import ROOT

PROBE = """
import json, sys
sys.path.insert(0, sys.argv[1])
before = set(sys.modules)
import agent
from core.runtime import network_door
loaded = [n for n in set(sys.modules) - before if (getattr(sys.modules[n], "__file__", None) or "").endswith((".so", ".pyd"))]
print(json.dumps(sorted(loaded)))
"""


def test_the_door_command_loads_no_packed_extension() -> None:
    done = subprocess.run([sys.executable, "-I", "-S", "-c", PROBE, str(ROOT)], capture_output=True, text=True,
                          timeout=60, check=True)
    loaded = json.loads(done.stdout)
    assert set(loaded) <= set(NEEDED_UNPACKED), loaded
