"""Where things are, for tests at any depth of tests/: the checkout, and the data the tests read."""

from __future__ import annotations

from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
ROOT = TESTS.parent
FIXTURES = TESTS / "fixtures"
SNAPSHOTS = TESTS / "snapshots"
