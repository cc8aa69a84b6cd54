"""`--one`, the plain REPL without a terminal, `--help`, MCP failures and a mode that cannot be had in
Chinese, chosen by the locale alone: the tool lines, a refusal, an error and the usage texts are
Chinese, the answer is the model's own, and `--lang en` (or an English locale) gives the English of
before."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.support.agent_process import run_agent
from tests.support.chinese_ui import CHINESE_LOCALE, english_words
from tests.support.mcp_servers import HANG, write_config
from tests.support.reading_model import reader_model
from tests.support.sse_server import Reply, ScriptedServer, call_events, text_events


def _one(tmp_path: Path, env: dict[str, str], *args: str) -> tuple[int, str, str, ScriptedServer]:
    script = [Reply(call_events([("run_shell", {"command": "touch 新文件.txt"})])), Reply(text_events("好的，没有建。"))]
    with ScriptedServer(script) as server:
        done = run_agent(["--one", "建一个文件", "--mode", "ask", *args], server.url, tmp_path, env=env)
    return done.returncode, done.stdout.decode("utf-8"), done.stderr.decode("utf-8"), server


def test_one_shot_speaks_chinese_under_a_chinese_locale(tmp_path: Path) -> None:
    code, out, err, server = _one(tmp_path, CHINESE_LOCALE)
    assert code == 0 and out == "好的，没有建。\n", err
    assert "→ run_shell touch 新文件.txt" in err and "✗ 已拒绝" in err
    assert "已拒绝：在 ask 模式下，只有已知只读的命令" in err and "在此模式下没有人能批准它" in err
    # The model is told the user's language once, in the instructions.
    assert "Simplified Chinese" in server.requests[0]["instructions"]
    assert english_words(err, {"touch", "txt", "think"}) == [], err  # "think": the model's reasoning


@pytest.mark.parametrize("env", [{"LANG": "en_US.UTF-8", "LC_ALL": "", "DEEPSEEK_LANG": ""}, CHINESE_LOCALE])
def test_lang_en_or_an_english_locale_keeps_the_english(tmp_path: Path, env: dict[str, str]) -> None:
    code, out, err, server = _one(tmp_path, env, *(["--lang", "en"] if env is CHINESE_LOCALE else []))
    assert code == 0 and out == "好的，没有建。\n"
    assert "✗ refused" in err and "refused: in the ask mode only known read-only commands" in err, err
    assert "Simplified Chinese" not in server.requests[0]["instructions"]


@pytest.mark.parametrize("env", [CHINESE_LOCALE, {"DEEPSEEK_LANG": "zh_CN"}, {"LANG": "en_US.UTF-8", "LC_ALL": ""}])
def test_errors_and_help_in_the_chosen_language(tmp_path: Path, env: dict[str, str]) -> None:
    flags = ["--lang", "zh"] if "LANG" in env and env["LANG"].startswith("en") else []
    empty = run_agent(["--one", *flags], "http://127.0.0.1:9", tmp_path, stdin=b"  \n", env=env)
    assert empty.returncode == 2
    assert empty.stderr.decode("utf-8").strip() == "错误：--one 需要一个任务：作为参数给出，或通过标准输入管道传入。"
    bad = run_agent(["--mode", "bogus", *flags], "http://127.0.0.1:9", tmp_path, env=env)
    assert bad.returncode == 2 and "错误：参数 --mode：无效的选项：'bogus'" in bad.stderr.decode("utf-8")
    shown = run_agent(["--help", *flags], "http://127.0.0.1:9", tmp_path, env=env).stdout.decode("utf-8")
    assert shown.startswith("用法：deepseek-agent") and "审批模式" in shown and "--lang {en,zh}" in shown
    assert english_words(shown, {"exe", "pip", "Windows", "Linux", "Landlock", "bubblewrap", "env",
                                 "example", "agent", "py", "prune", "help", "CMD", "TASK", "COMMAND", "MODEL",
                                 "CWD", "h", "DeepSeek", "Responses", "JSON", "off"}) == [], shown


def test_a_language_no_one_has_is_a_clear_error(tmp_path: Path) -> None:
    done = run_agent(["--one", "x"], "http://127.0.0.1:9", tmp_path, env={"DEEPSEEK_LANG": "klingon"})
    assert done.returncode == 2
    assert done.stderr.decode("utf-8").strip() == "error: DEEPSEEK_LANG=klingon names no interface language: use zh or en."


def test_a_server_error_in_chinese(tmp_path: Path) -> None:
    body = b'{"error": {"message": "Authentication Fails (invalid key)", "type": "authentication_error"}}'
    with ScriptedServer([Reply(status=401, body=body, content_type="application/json")]) as server:
        done = run_agent(["--one", "你好"], server.url, tmp_path, env=CHINESE_LOCALE)
    err = done.stderr.decode("utf-8")
    assert done.returncode == 1, err
    assert "错误：API 密钥被拒绝" in err and "Authentication Fails (invalid key)" in err, err
    # The server's own words stay as it sent them; everything around them is Chinese.
    assert english_words(err.replace("Authentication Fails (invalid key)", "")) == [], err


def _mcp_failures(tmp_path: Path, env: dict[str, str], *flags: str) -> str:
    """--one's stderr with one MCP server whose program is missing and one that never starts."""
    config = write_config(tmp_path / "user" / "mcp.json", {
        "missing": {"command": "no_such_mcp_server"},
        "hangs": {"command": HANG[0], "args": HANG[1:], "startupTimeout": 2}})
    with ScriptedServer([Reply(text_events("好的。"))]) as server:
        done = run_agent(["--one", "你好", *flags], server.url, tmp_path, env={**env, "DEEPSEEK_MCP_CONFIG": str(config)})
    assert done.returncode == 0, done.stderr.decode("utf-8")
    return done.stderr.decode("utf-8")


def test_mcp_failures_in_chinese_and_in_english(tmp_path: Path) -> None:
    err = _mcp_failures(tmp_path, CHINESE_LOCALE)
    assert "MCP 服务器 missing 失败：无法运行 'no_such_mcp_server'：没有这个程序（是否已安装并在 PATH 中？）" in err, err
    assert "MCP 服务器 hangs 失败：未能在 2 秒内启动" in err, err
    assert english_words(err, {"missing", "hangs"}) == [], err  # the servers' names
    err = _mcp_failures(tmp_path, CHINESE_LOCALE, "--lang", "en")
    assert "MCP server missing failed: cannot run 'no_such_mcp_server': no such program" in err, err
    assert "MCP server hangs failed: did not start within 2 s" in err, err


@pytest.mark.parametrize("flags", [[], ["--lang", "en"]])
def test_auto_mode_without_a_sandbox_says_why_in_the_chosen_language(tmp_path: Path, flags: list[str]) -> None:
    done = run_agent(["--one", "x", "--mode", "auto", *flags], "http://127.0.0.1:9", tmp_path,
                     env={**CHINESE_LOCALE, "AGENT_SANDBOX": "off"})
    err = done.stderr.decode("utf-8").strip()
    assert done.returncode == 2, err
    if flags:
        assert "the auto mode runs commands in a sandbox, and none works here (turned off); use --mode ask" in err
    else:
        assert err == "错误：auto 模式在沙箱中运行命令，而这里没有可用的沙箱（已关闭）；请使用 --mode ask 或 --yes", err


@pytest.mark.parametrize("flags", [[], ["--lang", "en"]])
def test_what_shaping_the_context_did_in_the_chosen_language(tmp_path: Path, flags: list[str]) -> None:
    """Six long reads in a small working budget: the old turns are dropped with a summary, and the
    person is told so."""
    (tmp_path / "ws").mkdir()
    for n in range(6):
        (tmp_path / "ws" / f"f{n}.txt").write_text(f"file {n}: " + " ".join(f"w{n}{k}" for k in range(700)) + "\n")
    with ScriptedServer(responder=reader_model) as server:
        done = run_agent(["--one", "task one", *flags], server.url, tmp_path,
                         env={**CHINESE_LOCALE, "AGENT_WORKING_BUDGET": "6000", "DEEPSEEK_CONTEXT_WINDOW": "100000"})
    err = done.stderr.decode("utf-8")
    assert done.returncode == 0, err
    notices = [line for line in err.splitlines() if line.startswith("! ")]
    if flags:
        assert any(re.match(r"! dropped \d+ old turns, summarised \([\d.]+k? tokens\)$", n) for n in notices), err
        assert any(n.startswith("! still over the budget after shaping (") for n in notices), err
    else:
        assert any(re.match(r"! 丢弃了 \d+ 个旧轮次，并已总结（[\d.]+k? 个词元）$", n) for n in notices), err
        assert any(n.startswith("! 整理之后仍超出预算（") for n in notices), err
        assert english_words("\n".join(notices)) == [], notices
