"""The shared pruning corpus (shared/bench/pruning): every must-keep line survives, and the whole
corpus shrinks by at least 95%. Skipped where shared/ is not beside the repository."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from core.prune import prune
from tests.support.paths import ROOT
from tests.support.prune_corpus import Case, cases

SHARED = Path(os.environ.get("DEEPSEEK_AGENT_SHARED") or ROOT.parent / "shared")
CASES = SHARED / "bench" / "pruning" / "cases"
# score.py's expression, so that recall is measured the way the benchmark measures it
ANSI_RE = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[()][0-9A-Za-z]|\x1b[@-Z\\-_=>]")

pytestmark = pytest.mark.skipif(not CASES.is_dir(), reason="shared/bench/pruning is not available")


def _run(case: Case) -> tuple[str, str, list[str]]:
    result = prune(case.output, command=case.command, exit_code=case.exit_code)
    return case.output.decode("utf-8", errors="replace"), result.text, case.must_keep


@pytest.mark.parametrize("case", cases(CASES), ids=lambda c: c.name)
def test_every_must_keep_line_survives(case: Case) -> None:
    original, pruned, must = _run(case)
    hay = ANSI_RE.sub("", pruned)
    assert [line for line in must if line not in hay] == []
    assert len(pruned) <= len(original) + 300  # never longer than the input by more than header and stamp


def test_aggregate_reduction_is_at_least_95_percent() -> None:
    runs = [_run(case) for case in cases(CASES)]
    original = sum(len(o) for o, _, _ in runs)
    pruned = sum(len(p) for _, p, _ in runs)
    assert 1 - pruned / original >= 0.95
