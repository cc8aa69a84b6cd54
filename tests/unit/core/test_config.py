"""Settings: precedence, .env parsing, validation and the missing-key message."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from core import config
from core.config import ConfigError, load_settings, parse_dotenv
from tests.support.paths import ROOT


def test_dotenv_handles_comments_quotes_export_bom_and_crlf() -> None:
    text = ('\ufeff# comment\r\nexport DEEPSEEK_MODEL="deepseek-v4-pro" # trailing\r\n'
            "AGENT_MAX_STEPS='12'\r\nDEEPSEEK_BASE_URL=http://x/y#frag\r\n"
            'QUOTED="a \\"b\\" \\n c"\r\n  \r\nnot a line\r\n=novalue\r\nEMPTY=\r\n')
    assert parse_dotenv(text) == {"DEEPSEEK_MODEL": "deepseek-v4-pro", "AGENT_MAX_STEPS": "12",
                                  "DEEPSEEK_BASE_URL": "http://x/y#frag", "QUOTED": 'a "b" \n c', "EMPTY": ""}


def _env_file(tmp_path: Path, text: str) -> Path:
    path = tmp_path / ".env"
    path.write_bytes(text.encode("utf-8"))
    return path


SPECIAL_VALUES = {"base_url": "http://127.0.0.1:9", "context_window": "200000", "context_trigger": "0.9",
                  "context_target": "0.3", "prices": "deepseek-v4-flash=1/2/3", "temperature": "0.5",
                  "sandbox": "off", "network": "off", "mode": "ask"}


def test_every_key_in_env_example_takes_effect(tmp_path: Path) -> None:
    example = ROOT / ".env.example"
    keys = [k for k in parse_dotenv(example.read_text(encoding="utf-8"))]
    commented = [line.lstrip("# ").split("=")[0] for line in example.read_text(encoding="utf-8").splitlines()
                 if line.startswith("# ") and "=" in line and line.lstrip("# ").split("=")[0].isupper()]
    names = set(keys) | set(commented)
    assert config.API_KEY in names
    assert set(config.ENV_NAMES.values()) <= names, "every setting is documented in .env.example"
    defaults = config.Settings()
    for attr, name in config.ENV_NAMES.items():
        default = getattr(defaults, attr)
        value = SPECIAL_VALUES.get(attr) or {int: "7", float: "7.5", str: "changed"}[type(default)]
        settings = load_settings(environ={name: value}, env_file=tmp_path / "none")
        assert getattr(settings, attr) != default, name
    assert names == set(config.ENV_NAMES.values()) | {config.API_KEY}, "no key in .env.example is ignored"


def test_precedence_override_env_dotenv_default(tmp_path: Path) -> None:
    env_file = _env_file(tmp_path, "DEEPSEEK_MODEL=from-file\nAGENT_MAX_STEPS=5\nDEEPSEEK_API_KEY=file-key-123\n")
    s = load_settings(environ={"DEEPSEEK_MODEL": "from-env"}, env_file=env_file)
    assert (s.model, s.max_steps, s.api_key) == ("from-env", 5, "file-key-123")
    assert s.api_key_source == str(env_file)
    s = load_settings(environ={"DEEPSEEK_MODEL": "from-env"}, env_file=env_file, overrides={"DEEPSEEK_MODEL": "flag"})
    assert s.model == "flag"
    s = load_settings(environ={"DEEPSEEK_API_KEY": "env-key-123"}, env_file=env_file)
    assert s.api_key == "env-key-123" and "environment" in s.api_key_source
    assert load_settings(environ={}, env_file=tmp_path / "missing").model == "deepseek-v4-flash"


def test_bad_values_give_one_clear_sentence(tmp_path: Path) -> None:
    env_file = _env_file(tmp_path, "AGENT_MAX_STEPS=lots\n")
    with pytest.raises(ConfigError, match=r"AGENT_MAX_STEPS must be a whole number, got 'lots' \(from .*\.env\)"):
        load_settings(environ={}, env_file=env_file)
    with pytest.raises(ConfigError, match=r"DEEPSEEK_BASE_URL='ftp://x' \(from the environment\) must start with http"):
        load_settings(environ={"DEEPSEEK_BASE_URL": "ftp://x"}, env_file=tmp_path / "none")


def test_a_small_window_alone_derives_the_output_limit(tmp_path: Path) -> None:
    s = load_settings(environ={"DEEPSEEK_CONTEXT_WINDOW": "16000"}, env_file=tmp_path / "none")
    assert (s.context_window, s.max_output_tokens) == (16_000, 4_000)
    assert load_settings(environ={"DEEPSEEK_CONTEXT_WINDOW": "8192"}, env_file=tmp_path / "none").max_output_tokens == 2048
    big = load_settings(environ={"DEEPSEEK_CONTEXT_WINDOW": "400000"}, env_file=tmp_path / "none")
    assert big.max_output_tokens == 32_768  # never more than the default
    assert load_settings(environ={}, env_file=tmp_path / "none").max_output_tokens == 32_768
    # A value the user set is kept as it is.
    s = load_settings(environ={"DEEPSEEK_CONTEXT_WINDOW": "16000", "DEEPSEEK_MAX_OUTPUT_TOKENS": "1000"},
                      env_file=tmp_path / "none")
    assert s.max_output_tokens == 1000


def test_settings_that_fight_name_the_values_and_where_they_came_from(tmp_path: Path) -> None:
    env_file = _env_file(tmp_path, "DEEPSEEK_MAX_OUTPUT_TOKENS=32768\n")
    with pytest.raises(ConfigError) as info:
        load_settings(environ={"DEEPSEEK_CONTEXT_WINDOW": "16000"}, env_file=env_file)
    message = str(info.value)
    assert f"DEEPSEEK_MAX_OUTPUT_TOKENS=32,768 (from {env_file})" in message
    assert "DEEPSEEK_CONTEXT_WINDOW=16,000 (from the environment)" in message
    assert "leave it unset" in message and "\n" not in message
    with pytest.raises(ConfigError, match=r"DEEPSEEK_MAX_OUTPUT_TOKENS=2,000,000 \(from the command line\) must be "
                                          r"smaller than DEEPSEEK_CONTEXT_WINDOW=1,000,000 \(the default\)"):
        load_settings(environ={}, env_file=tmp_path / "none", overrides={"DEEPSEEK_MAX_OUTPUT_TOKENS": "2000000"})
    with pytest.raises(ConfigError, match=r"DEEPSEEK_CONTEXT_WINDOW=1 \(from the environment\) leaves no room"):
        load_settings(environ={"DEEPSEEK_CONTEXT_WINDOW": "1"}, env_file=tmp_path / "none")


def test_the_context_trigger_and_target_follow_each_other_when_one_is_unset(tmp_path: Path) -> None:
    s = load_settings(environ={"AGENT_CONTEXT_TRIGGER": "0.4"}, env_file=tmp_path / "none")
    assert (s.context_trigger, s.context_target) == (0.4, 0.25)
    s = load_settings(environ={"AGENT_CONTEXT_TRIGGER": "0.9"}, env_file=tmp_path / "none")
    assert (s.context_trigger, s.context_target) == (0.9, 0.5)  # the default target still fits
    s = load_settings(environ={"AGENT_CONTEXT_TARGET": "0.6"}, env_file=tmp_path / "none")
    assert (s.context_trigger, s.context_target) == (0.96, 0.6)
    with pytest.raises(ConfigError, match=r"AGENT_CONTEXT_TARGET=0.7 \(from .*\.env\) and "
                                          r"AGENT_CONTEXT_TRIGGER=0.6 \(from the environment\)"):
        load_settings(environ={"AGENT_CONTEXT_TRIGGER": "0.6"}, env_file=_env_file(tmp_path, "AGENT_CONTEXT_TARGET=0.7\n"))


def test_a_copied_env_example_lets_the_window_alone_work(tmp_path: Path) -> None:
    example = ROOT / ".env.example"
    env_file = _env_file(tmp_path, example.read_text(encoding="utf-8").replace("DEEPSEEK_CONTEXT_WINDOW=1000000",
                                                                               "DEEPSEEK_CONTEXT_WINDOW=16000"))
    s = load_settings(environ={}, env_file=env_file)
    assert (s.context_window, s.max_output_tokens) == (16_000, 4_000)
    s = load_settings(environ={"AGENT_CONTEXT_TRIGGER": "0.4"}, env_file=env_file)
    assert s.context_target == 0.25


def test_missing_key_names_where_it_is_looked_for(tmp_path: Path) -> None:
    s = load_settings(environ={}, env_file=tmp_path / ".env")
    with pytest.raises(ConfigError) as info:
        s.require_key()
    message = str(info.value)
    assert "DEEPSEEK_API_KEY" in message and str(tmp_path / ".env") in message and "environment" in message
    assert message.count(".") >= 1 and "\n" not in message


def test_loopback_servers_need_no_key(tmp_path: Path) -> None:
    for url in ("http://127.0.0.1:8080/v1", "http://localhost:1234", "http://[::1]:5000"):
        assert load_settings(environ={"DEEPSEEK_BASE_URL": url}, env_file=tmp_path / "x").require_key() == ""


def test_env_file_lives_next_to_the_frozen_exe(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    exe = tmp_path / "dist" / "deepseek-agent.exe"
    exe.parent.mkdir()
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    monkeypatch.setattr(sys, "executable", str(exe))
    assert config.app_dir() == exe.parent
    monkeypatch.setattr(sys, "frozen", False)
    assert config.app_dir() == Path(config.__file__).resolve().parent.parent


def test_settings_repr_hides_the_key(tmp_path: Path) -> None:
    s = load_settings(environ={"DEEPSEEK_API_KEY": "sk-secret-value-123"}, env_file=tmp_path / "x")
    assert "sk-secret-value-123" not in repr(s)


def test_save_setting_keeps_other_lines_and_is_private(tmp_path: Path) -> None:
    from core.config import save_setting

    env_file = _env_file(tmp_path, "# my settings\nDEEPSEEK_MODEL=x\nexport DEEPSEEK_API_KEY=old\n")
    save_setting(env_file, "DEEPSEEK_API_KEY", "sk-new-key-456")
    text = env_file.read_text()
    assert text == "# my settings\nDEEPSEEK_MODEL=x\nDEEPSEEK_API_KEY=sk-new-key-456\n"
    if sys.platform != "win32":
        assert env_file.stat().st_mode & 0o777 == 0o600
    fresh = tmp_path / "sub" / ".env"
    save_setting(fresh, "DEEPSEEK_API_KEY", "k2")
    assert load_settings(environ={}, env_file=fresh).api_key == "k2"
    if sys.platform != "win32":
        assert fresh.stat().st_mode & 0o777 == 0o600


def test_dotenv_escapes_and_windows_paths() -> None:
    text = ('A="C:\\\\Users\\\\me\\\\new"\nB="D:\\\\tmp\\\\"\nC="C:\\Users\\new"\nD="say \\"hi\\"\\tnow"\n'
            "E='raw \\n stays'\n")
    values = parse_dotenv(text)
    assert values["A"] == "C:\\Users\\me\\new" and values["B"] == "D:\\tmp\\"
    assert values["C"] == "C:\\Users\new"  # \n is an escape in double quotes, other backslashes stay
    assert values["D"] == 'say "hi"\tnow' and values["E"] == "raw \\n stays"


def test_an_empty_environment_variable_switches_a_dotenv_value_off_but_not_the_key(tmp_path: Path) -> None:
    """An empty DEEPSEEK_API_KEY (a template's `export DEEPSEEK_API_KEY=`) counts as unset: it must not
    hide the key the first run just saved to .env."""
    env_file = _env_file(tmp_path, "DEEPSEEK_API_KEY=from-file-123\nDEEPSEEK_MODEL=file-model\n")
    s = load_settings(environ={"DEEPSEEK_API_KEY": " ", "DEEPSEEK_MODEL": ""}, env_file=env_file)
    assert s.api_key == "from-file-123" and s.api_key_source == str(env_file)
    assert s.model == "deepseek-v4-flash"


def test_an_installed_package_reads_env_from_the_user_config_folder(monkeypatch: pytest.MonkeyPatch,
                                                                   tmp_path: Path) -> None:
    """pip puts the code in site-packages: a .env there is shared, often not writable, and lost on upgrade."""
    site = tmp_path / "lib" / "site-packages"
    monkeypatch.setattr(config, "app_dir", lambda: site)
    monkeypatch.setattr(sys, "platform", "linux")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "cfg"))
    assert config.default_env_file() == tmp_path / "cfg" / "deepseek-agent" / ".env"
    monkeypatch.delenv("XDG_CONFIG_HOME")
    assert config.default_env_file() == Path.home() / ".config" / "deepseek-agent" / ".env"
    monkeypatch.setattr(sys, "platform", "win32")
    monkeypatch.setenv("APPDATA", str(tmp_path / "Roaming"))
    assert config.default_env_file() == tmp_path / "Roaming" / "deepseek-agent" / ".env"
    monkeypatch.setattr(config, "app_dir", lambda: tmp_path / "checkout")
    assert config.default_env_file() == tmp_path / "checkout" / ".env"  # a source checkout keeps its own
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    monkeypatch.setattr(config, "app_dir", lambda: site)  # an exe built from a venv still means its folder
    assert config.default_env_file() == site / ".env"


def test_a_key_that_cannot_be_sent_is_refused_without_showing_it(tmp_path: Path) -> None:
    s = load_settings(environ={"DEEPSEEK_API_KEY": "\u200bsk-abc123456\ufeff"}, env_file=tmp_path / "x")
    assert s.api_key == "sk-abc123456"  # invisible characters from a paste are dropped
    with pytest.raises(ConfigError, match="cannot be sent in an HTTP header") as info:
        load_settings(environ={"DEEPSEEK_API_KEY": "sk-abc–123456"}, env_file=tmp_path / "x")
    assert "abc" not in str(info.value)
