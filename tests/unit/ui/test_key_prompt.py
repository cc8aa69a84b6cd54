"""The first run's key prompt: what it promises about the saved file is true on each platform."""

from __future__ import annotations

import argparse
import getpass
import sys
from pathlib import Path

import pytest

import agent
from core.config import load_settings


@pytest.mark.parametrize("platform", ["win32", "linux"])
def test_the_prompt_says_readable_only_by_you_only_where_that_is_made_true(
        platform: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """On Windows no 0600 is applied (the file gets its folder's ACL), so the prompt must not claim it."""
    settings = load_settings(environ={"DEEPSEEK_BASE_URL": "https://api.invalid"}, env_file=tmp_path / ".env")
    monkeypatch.setattr(sys, "platform", platform)
    monkeypatch.setattr(getpass, "getpass", lambda *args, **kwargs: "")
    args = argparse.Namespace(plain=True, model=None)
    assert agent._ask_for_key(settings, args) is settings
    err = capsys.readouterr().err
    assert str(tmp_path / ".env") in err
    assert ("readable only by you" in err) == (platform != "win32"), err
