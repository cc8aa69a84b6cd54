"""tests/windows.py runs a test again only when wine could not start a process for it: the plugin
records each failure, and the runner reruns only a run whose every failure is that."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests import windows
from tests.support.failed_tests import FILE_VARIABLE
from tests.support.paths import ROOT

SAMPLE = '''
import pytest

def test_passes():
    pass

def test_wine_could_not_start_it():
    raise OSError("[WinError 1359] Internal error")

def test_fails():
    assert "出错" == "正常"

@pytest.fixture
def broken_setup():
    raise RuntimeError("set-up failed")

def test_setup_error(broken_setup):
    pass
'''


def run_sample(tmp_path: Path) -> list[dict[str, str]]:
    (tmp_path / "test_sample.py").write_text(SAMPLE, encoding="utf-8")
    records = tmp_path / "failed.jsonl"
    env = {**os.environ, FILE_VARIABLE: str(records)}
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p",
                           "tests.support.failed_tests", str(tmp_path / "test_sample.py")],
                          cwd=ROOT, env=env, capture_output=True, timeout=120, check=False)
    assert done.returncode == 1, done.stdout.decode(errors="replace")
    return windows.failed_tests(records)


def test_the_plugin_records_every_failed_test_and_nothing_else(tmp_path: Path) -> None:
    failures = run_sample(tmp_path)
    names = [failure["nodeid"].split("::")[-1] for failure in failures]
    assert names == ["test_wine_could_not_start_it", "test_fails", "test_setup_error"]
    assert "WinError 1359" in failures[0]["report"]
    assert "正常" in failures[1]["report"]
    assert "set-up failed" in failures[2]["report"]


def test_only_a_run_whose_every_failure_is_a_wine_start_failure_runs_again(tmp_path: Path) -> None:
    failures = run_sample(tmp_path)
    assert windows.wine_start_failures(failures) == []
    assert windows.wine_start_failures(failures[1:]) == []
    assert windows.wine_start_failures(failures[:1]) == [failures[0]["nodeid"]]
    # A test whose set-up and call both failed to start a process runs once, not twice.
    assert windows.wine_start_failures([failures[0], failures[0]]) == [failures[0]["nodeid"]]
    assert windows.wine_start_failures([]) == []


def test_a_run_that_recorded_nothing_has_no_failures(tmp_path: Path) -> None:
    assert windows.failed_tests(tmp_path / "never-written.jsonl") == []


def test_the_runner_names_the_file_the_plugin_writes() -> None:
    assert windows.FAILED_TESTS_VARIABLE == FILE_VARIABLE
