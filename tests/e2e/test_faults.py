"""The fault-injection suite: every fault a network or server can produce, against `agent.py --one`,
and the harms a hostile repository or a careless or prompt-injected model must not cause.

Each fault is one row of FAULTS. The test runs the real agent as a subprocess against the loopback
server and asserts what the row says: whether the request was retried, what the user sees, the
exit code, that the harm did not happen (`check`), and that the journal afterwards holds every
completed item and loads into a valid next request, every call paired with its output. docs/faults.md's
fault table is generated from these rows (`python -m tests.e2e.test_faults`), and a test keeps the two
identical.
"""

from __future__ import annotations

import ast
import json
import os
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from core.provider.request import build_body
from core.session.items import AssistantMessage, UserMessage
from core.session.journal import Journal, Loaded, load
from tests.conftest import TEST_KEY, make_settings
from tests.support.agent_process import env_to_file, native, run_agent
from tests.support.history import pairs_valid
from tests.support.paths import FIXTURES, ROOT
from tests.support.sse_server import Reply, call_events, completed, encode_event, text_events

DEEPSEEK_400 = (FIXTURES / "recorded/deepseek-responses-error-400-no-tool-output.json").read_bytes()
ANSWER = "all good 好"


def _ok() -> Reply:
    return Reply(text_events(ANSWER))


def _status(code: int, body: bytes = b'{"error":{"message":"upstream trouble"}}', **kw) -> Reply:
    return Reply(status=code, body=body, **kw)


@dataclass
class Fault:
    name: str  # the test id and the table's first column
    fault: str  # what the server does
    script: list[Reply]
    requests: int  # how many requests the server sees: more than 1 means retried
    exit_code: int
    shows: str  # a regex the user must see on stderr (or stdout for the answer)
    behaviour: str  # the documented behaviour, for the table
    env: dict[str, str] = field(default_factory=dict)  # "{tmp}" stands for the test's folder
    partial: str = ""  # text that must be in the journal as an incomplete message
    setup: Callable[[Path], object] | None = None  # prepares the test's folder; its result goes to check
    check: Callable[[Path, list[dict], object], None] | None = None  # asserts the harm did not happen
    args: tuple[str, ...] = ("--one", "hello")
    task: str = "hello"  # the journal's first user message


# -- the harms: what a hostile repository or model tries, and what must not follow -----
def _call(name: str, **arguments: object) -> Reply:
    return Reply(call_events([(name, arguments)]))


def _agents_md_link(tmp: Path) -> None:
    (tmp / "ws").mkdir()
    (tmp / "credentials").write_text("aws_secret_access_key = wJalrXUtnFEMI\n")
    (tmp / "ws" / "AGENTS.md").symlink_to(tmp / "credentials")


def _no_credentials_sent(tmp: Path, requests: list[dict], _: object) -> None:
    assert "wJalr" not in json.dumps(requests)


def _home_with_thesis(tmp: Path) -> None:
    (tmp / "home" / "docs").mkdir(parents=True)
    (tmp / "home" / "docs" / "thesis.txt").write_text("years of work")


def _home_still_there(tmp: Path, requests: list[dict], _: object) -> None:
    assert (tmp / "home" / "docs" / "thesis.txt").read_text() == "years of work"
    assert requests[1]["input"][-1]["output"].startswith("refused")


def _key_in_a_file(tmp: Path) -> None:
    (tmp / "ws").mkdir()
    (tmp / "ws" / "notes.txt").write_text(f"key={TEST_KEY}\n")


def _key_nowhere(tmp: Path, requests: list[dict], _: object) -> None:
    assert TEST_KEY not in json.dumps(requests) and "key=[REDACTED]" in requests[1]["input"][-1]["output"]
    for path in (tmp / "sessions").rglob("*"):
        assert path.is_dir() or TEST_KEY.encode() not in path.read_bytes(), path
        if sys.platform != "win32":
            assert os.stat(path).st_mode & 0o777 == (0o700 if path.is_dir() else 0o600), path


def _env_file_written(tmp: Path, requests: list[dict], _: object) -> None:
    seen = (tmp / "ws" / "env.txt").read_text(errors="replace")
    assert "PATH=" in seen.upper() and not any(name in seen for name in ("STRIPE_KEY", "DATABASE_URL", "MYSQL_PWD"))


def _a_lines(tmp: Path) -> None:
    (tmp / "ws").mkdir()
    (tmp / "ws" / "data.txt").write_text(("a" * 40 + "!\n") * 20)


def _regex_answered(tmp: Path, requests: list[dict], _: object) -> None:
    assert requests[1]["input"][-1]["output"] == "no matches for '^(a+)+$' in ."


def _session_held(tmp: Path) -> Journal:
    (tmp / "ws").mkdir()
    journal = Journal.create(tmp / "sessions", tmp / "ws", "m")
    journal.append(UserMessage("first"))  # this test process holds the session open
    return journal


def _session_untouched(tmp: Path, requests: list[dict], journal: object) -> None:
    assert isinstance(journal, Journal)
    journal.close()
    assert [getattr(i, "text", "") for i in load(journal.folder).items] == ["first"]


HARMS: list[Fault] = [
    Fault("agents_md_symlink_out", "(the repository) `AGENTS.md` is a symlink to `~/.aws/credentials`", [_ok()], 1, 0,
          ANSWER, "not read: resolved outside the workspace; the file is in no request", setup=_agents_md_link,
          check=_no_credentials_sent),
    Fault("rm_rf_braced_home", '(the model) `rm -rf "${HOME}"`, no `--yes`', [_call("run_shell", command='rm -rf "${HOME}"'),
          _ok()], 2, 0, r"run_shell rm -rf", "judged on the parsed command: refused, the model told why; HOME "
          "is still there", env={"HOME": "{tmp}/home"}, setup=_home_with_thesis, check=_home_still_there),
    Fault("escape_sequences_in_a_command", "(the model) a command whose text erases the line and draws another",
          [_call("run_shell", command="echo hi \x1b[2K\r\x1b[1Agit status"), _ok()], 2, 0, r"\\x1b\[2K\\r",
          "shown with its escape sequences visible, never obeyed (the approval prompt: a tmux test)"),
    Fault("command_prints_the_key", "(the model) `cat notes.txt`, which holds the API key", [_call(
          "run_shell", command=native("cat notes.txt", "type notes.txt", "Get-Content notes.txt")), _ok()], 2, 0, ANSWER, "redacted in the request, on screen and in "
          "every session file (raw archive too); folders 0700, files 0600", setup=_key_in_a_file, check=_key_nowhere),
    Fault("secret_environment", "(the user's shell) `STRIPE_KEY`, `DATABASE_URL` with a password, `MYSQL_PWD`",
          [_call("run_shell", command=env_to_file("env.txt")), _ok()], 2, 0, ANSWER, "not inherited by commands "
          "(AGENT_ENV_KEEP / AGENT_ENV_DROP adjust it)", env={"STRIPE_KEY": "sk_live_1", "MYSQL_PWD": "pw1",
          "DATABASE_URL": "postgres://app:pw2@db.invalid/app"}, check=_env_file_written, args=("--one", "hello", "--yes")),
    Fault("backtracking_regex", "(the model) `search` for `^(a+)+$` over lines of 40 a's and a `!`",
          [_call("search", pattern="^(a+)+$"), _ok()], 2, 0, ANSWER, "answered at once: patterns run on RE2, "
          "in linear time, with or without ripgrep", setup=_a_lines, check=_regex_answered),
    Fault("session_open_elsewhere", "(the user) `--resume` of a session another agent has open", [_ok()], 0, 2,
          r"is open in another deepseek-agent \(pid \d+ on ", "refused, naming the process that holds it; "
          "the session is untouched", args=("--resume", "--one", "hello"), task="first", setup=_session_held,
          check=_session_untouched),
]


FAULTS: list[Fault] = [
    Fault("http_429_retry_after", "429 with `Retry-After: 1`",
          [_status(429, headers={"Retry-After": "1"}), _ok()], 2, 0, r"retrying in 1\.0 s, attempt 2 of 5",
          "waits the 1 s the server asked for, retries, answers"),
    Fault("http_429_retry_after_ms", "429 with `retry-after-ms: 200`",
          [_status(429, headers={"retry-after-ms": "200"}), _ok()], 2, 0, r"retrying in 0\.2 s",
          "waits 0.2 s, retries, answers"),
    *[Fault(f"http_{code}", f"HTTP {code}", [_status(code), _ok()], 2, 0, rf"HTTP {code}.*retrying",
            "announces the wait, retries with backoff, answers") for code in (500, 502, 503, 504)],
    Fault("http_400_deepseek_octet_stream", "400 with DeepSeek's error JSON as `application/octet-stream`",
          [_status(400, DEEPSEEK_400, content_type="application/octet-stream")], 1, 1,
          r"No tool output found for tool call call-a\.", "not retried; shows the provider's message; exit 1"),
    Fault("http_401", "401", [_status(401, b'{"error":{"message":"Authentication Fails"}}')], 1, 1,
          r"API key was rejected \(the key came from the environment variable DEEPSEEK_API_KEY\)",
          "not retried; says the key was rejected and where it came from; exit 1"),
    Fault("http_402", "402", [_status(402, b'{"error":{"message":"Insufficient Balance"}}')], 1, 1,
          r"balance is exhausted", "not retried; says the balance is exhausted; exit 1"),
    Fault("reset_before_first_byte", "connection reset before the first byte", [Reply(reset=True), _ok()], 2, 0,
          r"connection failed.*retrying", "retried, answers"),
    Fault("reset_before_output", "connection closed after 1 event, before any output",
          [Reply(text_events(ANSWER), drop_after=1), _ok()], 2, 0, r"retrying", "retried, answers"),
    Fault("reset_after_output", "connection closed after text was shown",
          [Reply(text_events("partial words here", chunks=3), drop_after=3), _ok()], 1, 1,
          r"not retried: part of the answer was already shown",
          "not retried (it would repeat output); partial text kept as incomplete; exit 1", partial="partia"),
    Fault("cut_mid_line", "connection closed in the middle of an event line, after text",
          [Reply(text_events("partial words here", chunks=3), drop_after=3, cut_mid_line=True), _ok()], 1, 1,
          r"not retried", "not retried; partial text kept; exit 1", partial="partia"),
    Fault("stall_before_first_byte", "no byte for longer than the idle timeout, then a good answer",
          [Reply(text_events(ANSWER), stall_before=3.0), _ok()], 2, 0, r"did not answer in time.*retrying",
          "gives up after AGENT_IDLE_TIMEOUT, retries, answers", env={"AGENT_IDLE_TIMEOUT": "1"}),
    Fault("stall_between_events", "a pause longer than the idle timeout after text",
          [Reply(text_events("slow words here", chunks=3), pause_at=3, pause=6.0), _ok()], 1, 1,
          r"did not answer in time",
          "ends the turn after AGENT_IDLE_TIMEOUT (not retried: text was shown); partial kept; exit 1",
          env={"AGENT_IDLE_TIMEOUT": "2"}, partial="slow"),
    Fault("malformed_json_event", "a `data:` line that is not JSON",
          [Reply(text_events(ANSWER), extra_chunks=[b"data: {oops\n\n"])], 1, 0, r"skipped a malformed event",
          "skips it with a notice and carries on"),
    Fault("unknown_event_types", "event types the client has never heard of",
          [Reply(text_events(ANSWER), extra_chunks=[encode_event({"type": "response.teleport.delta", "x": 1})])],
          1, 0, ANSWER, "ignored"),
    Fault("event_20mb", "one 20 MB event", [Reply(raw=b"data: " + b"x" * (20 * 1024 * 1024) + b"\n\n"), _ok()], 1, 1,
          r"exceeded 16 MB", "the client bounds an event at 16 MB and fails the turn clearly; exit 1"),
    Fault("no_terminal_event", "the stream ends without `response.completed`, after text",
          [Reply(text_events("unfinished business")[:-1]), _ok()], 1, 1, r"ended before the response was complete",
          "an error, not a silent stop; the finished message is kept; exit 1"),
    Fault("no_terminal_event_before_output", "the stream ends without a terminal event, before any output",
          [Reply(text_events(ANSWER)[:1]), _ok()], 2, 0, r"ended before the response was complete.*retrying",
          "retried, answers"),
    Fault("response_failed_server_error", "`response.failed` with `server_error` before any output",
          [Reply([completed(status="failed", error={"code": "server_error", "message": "overloaded"})]), _ok()],
          2, 0, r"overloaded.*retrying", "retried, answers"),
    Fault("error_event_quota", "a nested `error` event (insufficient_quota)",
          [Reply([{"type": "error", "error": {"type": "insufficient_quota", "code": "insufficient_quota",
                                              "message": "You exceeded your current quota"}}])], 1, 1,
          r"quota is exhausted", "not retried; says the quota is exhausted; exit 1"),
    Fault("done_sentinel_and_keepalives", "keep-alive comments and a stray `data: [DONE]`",
          [Reply(text_events(ANSWER), extra_chunks=[b": keep-alive\n\n", b"data: [DONE]\n\n"])], 1, 0, ANSWER,
          "ignored"),
]


@pytest.mark.parametrize("fault", FAULTS + HARMS, ids=lambda f: f.name)
def test_fault(fault: Fault, tmp_path: Path) -> None:
    from tests.support.sse_server import ScriptedServer

    if fault.setup is not None and sys.platform == "win32" and fault.setup in (_agents_md_link,):
        pytest.skip("symlinks need privileges on Windows")
    prepared = fault.setup(tmp_path) if fault.setup else None
    env = {k: v.format(tmp=tmp_path) for k, v in fault.env.items()}
    with ScriptedServer(list(fault.script)) as server:
        done = run_agent(list(fault.args), server.url, tmp_path, env=env)
    out, err = done.stdout.decode("utf-8"), done.stderr.decode("utf-8")
    assert len(server.requests) == fault.requests, err
    assert done.returncode == fault.exit_code, err
    assert re.search(fault.shows, out + err, re.DOTALL), err
    assert "\x1b" not in out + err  # NO_COLOR is set: any escape would be the model's or a command's
    if fault.exit_code == 0:
        assert out == ANSWER + "\n"
    if fault.check is not None:
        fault.check(tmp_path, server.requests, prepared)
    _journal_is_whole(tmp_path / "sessions", fault.task, answered=fault.exit_code == 0, partial=fault.partial)


def _journal_is_whole(sessions: Path, task: str, answered: bool = True, partial: str = "") -> Loaded:
    """The journal holds every completed item and loads into a valid next request."""
    (folder,) = sessions.iterdir()
    loaded = load(folder)
    assert isinstance(loaded.items[0], UserMessage) and loaded.items[0].text == task
    messages = [i for i in loaded.items if isinstance(i, AssistantMessage)]
    if answered:
        assert messages[-1].text == ANSWER and messages[-1].status == "completed"
    if partial:
        assert messages and partial in messages[-1].text and messages[-1].status == "incomplete"
    body = build_body(make_settings("http://127.0.0.1:1"), "", [*loaded.items, UserMessage("next")], [])
    assert body["input"][-1] == {"role": "user", "content": "next"} and pairs_valid(body["input"])
    calls = [i["call_id"] for i in body["input"] if i.get("type") == "function_call"]
    outputs = [i["call_id"] for i in body["input"] if i.get("type") == "function_call_output"]
    assert calls == outputs  # each call answered once, in order
    return loaded


# -- faults that take more than one run, or a machine's state ----------------------------------------
@dataclass
class Scenario:
    """A table row whose fault one scripted run cannot produce; `test_scenario_<name>` below plays it
    through the real agent and asserts the behaviour, or the test `elsewhere` names does."""

    name: str
    fault: str
    exit_code: int
    behaviour: str
    elsewhere: str = ""  # "path/from/the/root.py::test_name"


SCENARIOS: list[Scenario] = [
    Scenario("journal_disk_full", "(the disk) fills up while a journal record is written, and has room again by "
             "the next", 0, "the record is written part-way; one notice says the journal cannot be written; the "
             "task goes on and answers; every record written after the torn one loads (it is skipped with a "
             "notice)"),
    Scenario("compaction_resumed", "(the user) `--resume` of a session whose history was summarised", 0,
             "the summary is restored from the journal: the first request after the resume is the one that would "
             "have been sent without the restart, and no span is summarised (and billed) twice",
             # Task one is read and summarised; task two follows in the same process, or after a restart
             # with `--resume`. The session tests own it.
             elsewhere="tests/e2e/test_sessions.py::"
                       "test_resume_restores_compaction_so_the_next_request_is_the_one_without_the_restart"),
    Scenario("pip_install", "(the user) `pip install .`, then `deepseek-agent` from another folder", 0,
             "the package holds every module and the command; it answers, with its `.env` read from the user's "
             "config folder (not site-packages, not the current folder)"),
]


def _defines(nodeid: str) -> bool:
    """Whether the test file `nodeid` names defines the test function it names."""
    path, name = nodeid.split("::")
    tree = ast.parse((ROOT / path).read_text(encoding="utf-8"))
    return any(isinstance(node, ast.FunctionDef) and node.name == name for node in tree.body)


def test_every_scenario_has_its_test() -> None:
    assert all(_defines(s.elsewhere) if s.elsewhere else callable(globals().get(f"test_scenario_{s.name}"))
               for s in SCENARIOS)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="raising another process's file-size limit "
                    "(prlimit) is Linux's")
def test_scenario_journal_disk_full(tmp_path: Path) -> None:
    """A real part-way write: the agent runs under a file-size limit (RLIMIT_FSIZE, SIGXFSZ ignored, as
    the kernel fails a write on a full disk: the bytes that fit, then an error). The model's first
    reply is a record larger than the room left; when its second request arrives, the test gives
    the agent room again, as a user freeing space would."""
    import resource
    import subprocess

    from tests.support.agent_process import AGENT

    room = 4096
    limited = (f"import resource, runpy, signal, sys; signal.signal(signal.SIGXFSZ, signal.SIG_IGN); "
               f"resource.setrlimit(resource.RLIMIT_FSIZE, ({room}, resource.getrlimit(resource.RLIMIT_FSIZE)[1])); "
               f"sys.argv = sys.argv[1:]; runpy.run_path(sys.argv[0], run_name='__main__')")
    agent: list[subprocess.Popen] = []

    def model(body: dict) -> Reply:
        if len(body["input"]) == 1:
            return Reply(call_events([("run_shell", {"command": "echo one"})], reasoning="plan " * 2000))
        resource.prlimit(agent[0].pid, resource.RLIMIT_FSIZE, resource.getrlimit(resource.RLIMIT_FSIZE))
        return _ok()

    workspace = tmp_path / "ws"
    workspace.mkdir()
    environ = {k: v for k, v in os.environ.items() if not k.startswith(("DEEPSEEK_", "AGENT_"))}
    from tests.support.sse_server import ScriptedServer

    with ScriptedServer(responder=model) as server:
        environ.update({"DEEPSEEK_BASE_URL": server.url, "DEEPSEEK_API_KEY": TEST_KEY, "NO_COLOR": "1",
                        "AGENT_SESSIONS_DIR": str(tmp_path / "sessions"), "PYTHONDONTWRITEBYTECODE": "1"})
        agent.append(subprocess.Popen([sys.executable, "-c", limited, str(AGENT), "--cwd", str(workspace), "--one",
                                       "hello"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=environ))
        out, err = (stream.decode() for stream in agent[0].communicate(timeout=60))
    assert agent[0].returncode == 0 and out == ANSWER + "\n", err
    warnings = [line for line in err.splitlines() if "cannot write the session journal" in line]
    assert len(warnings) == 1 and "File too large" in warnings[0], err
    (journal,) = (tmp_path / "sessions").glob("*/journal.jsonl")
    lines = journal.read_bytes().split(b"\n")
    torn = [n for n, line in enumerate(lines) if line.startswith(b'{"kind":"reasoning"')]
    assert len(torn) == 1 and not lines[torn[0]].endswith(b"}")  # written part-way: the bytes that fit
    after = [json.loads(line) for line in lines[torn[0] + 1:] if line]
    assert after and after[0]["kind"] == "assistant" and after[0]["text"] == ANSWER  # not glued to the torn bytes
    loaded = _journal_is_whole(tmp_path / "sessions", "hello")
    assert [n for n in loaded.notices if "damaged" in n] and len(server.requests) == 2


@pytest.mark.skipif(sys.platform == "win32", reason="the venv layout differs; the exe is Windows' package")
def test_scenario_pip_install(tmp_path: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    import subprocess

    from tests.support.packaging import build_wheel, install_wheel
    from tests.support.sse_server import ScriptedServer

    env_dir = tmp_path / "v"
    environ = install_wheel(build_wheel(tmp_path_factory), env_dir)
    config = tmp_path / "config" / "deepseek-agent"
    config.mkdir(parents=True)
    (tmp_path / "ws").mkdir()
    with ScriptedServer([_ok()]) as server:
        (config / ".env").write_text(f"DEEPSEEK_BASE_URL={server.url}\nAGENT_SESSIONS_DIR={tmp_path / 'sessions'}\n")
        done = subprocess.run([str(env_dir / "bin" / "deepseek-agent"), "--one", "hello"], capture_output=True,
                              text=True, cwd=tmp_path / "ws", env={**environ, "XDG_CONFIG_HOME": str(config.parent)},
                              check=False, timeout=60)
    assert done.returncode == 0 and done.stdout == ANSWER + "\n", done.stderr
    _journal_is_whole(tmp_path / "sessions", "hello")


def fault_table() -> str:
    """docs/faults.md's fault table, generated from FAULTS, HARMS and SCENARIOS."""
    rows = ["| fault | what the server does | retried | exit code (`--one`) | observed behaviour |",
            "|---|---|---|---|---|"]
    harms = {h.name for h in HARMS}
    for f in FAULTS + HARMS:
        retried = "–" if f.name in harms else "yes" if f.requests > 1 else "no"  # a harm's 2nd request: a tool ran
        rows.append(f"| `{f.name}` | {f.fault} | {retried} | {f.exit_code} | {f.behaviour} |")
    rows += [f"| `{s.name}` | {s.fault} | – | {s.exit_code} | {s.behaviour} |" for s in SCENARIOS]
    return "\n".join(rows)


def test_the_fault_table_in_the_docs_is_generated_from_these_tests() -> None:
    doc = (ROOT / "docs" / "faults.md").read_text(encoding="utf-8")
    assert fault_table() in doc, "run `python -m tests.e2e.test_faults` and paste its table into docs/faults.md"


if __name__ == "__main__":
    sys.stdout.write(fault_table() + "\n")
