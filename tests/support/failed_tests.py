"""A pytest plugin (`-p tests.support.failed_tests`) that appends each failed test's id and report to
the file named by FAILED_TESTS_FILE, one JSON object a line: how tests/windows.py tells a test that
failed from one that wine could not start a process for."""

from __future__ import annotations

import json
import os

import pytest

FILE_VARIABLE = "FAILED_TESTS_FILE"


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    target = os.environ.get(FILE_VARIABLE)
    if target and report.failed:
        with open(target, "a", encoding="utf-8") as out:
            out.write(json.dumps({"nodeid": report.nodeid, "report": report.longreprtext}) + "\n")
