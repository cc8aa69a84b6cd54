"""The fault-injection suite: every fault a network or server can produce, against `agent.py --one`.

Each fault is one row of FAULTS. The test runs the real agent as a subprocess against the loopback
server and asserts what the row says: whether the request was retried, what the user sees, the
exit code, and that the journal afterwards holds every completed item and loads into a valid next
request. README.md's fault table is generated from these rows (`python -m tests.test_faults`), and
a test keeps the two identical.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from core.items import AssistantMessage, UserMessage
from core.journal import load
from core.request import build_body
from tests.conftest import make_settings
from tests.sse_server import Reply, completed, encode_event, text_events
from tests.test_one_shot import run_agent

DEEPSEEK_400 = (Path(__file__).parent / "fixtures/recorded/deepseek-responses-error-400-no-tool-output.json").read_bytes()
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
    env: dict[str, str] = field(default_factory=dict)
    partial: str = ""  # text that must be in the journal as an incomplete message


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


@pytest.mark.parametrize("fault", FAULTS, ids=lambda f: f.name)
def test_fault(fault: Fault, tmp_path: Path) -> None:
    from tests.sse_server import ScriptedServer

    with ScriptedServer(list(fault.script)) as server:
        done = run_agent(["--one", "hello"], server.url, tmp_path, env=fault.env)
    out, err = done.stdout.decode("utf-8"), done.stderr.decode("utf-8")
    assert len(server.requests) == fault.requests, err
    assert done.returncode == fault.exit_code, err
    assert re.search(fault.shows, out + err, re.DOTALL), err
    if fault.exit_code == 0:
        assert out == ANSWER + "\n"
    # The journal holds every completed item and loads into a valid next request.
    (folder,) = (tmp_path / "sessions").iterdir()
    loaded = load(folder)
    assert isinstance(loaded.items[0], UserMessage) and loaded.items[0].text == "hello"
    messages = [i for i in loaded.items if isinstance(i, AssistantMessage)]
    if fault.exit_code == 0:
        assert messages[-1].text == ANSWER and messages[-1].status == "completed"
    if fault.partial:
        assert messages and fault.partial in messages[-1].text and messages[-1].status == "incomplete"
    body = build_body(make_settings("http://127.0.0.1:1"), "", [*loaded.items, UserMessage("next")], [])
    assert body["input"][-1] == {"role": "user", "content": "next"}


def fault_table() -> str:
    """README.md's fault table, generated from FAULTS."""
    rows = ["| fault | what the server does | retried | exit code (`--one`) | observed behaviour |",
            "|---|---|---|---|---|"]
    for f in FAULTS:
        retried = "yes" if f.requests > 1 else "no"
        rows.append(f"| `{f.name}` | {f.fault} | {retried} | {f.exit_code} | {f.behaviour} |")
    return "\n".join(rows)


def test_readme_fault_table_is_generated_from_these_tests() -> None:
    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")
    assert fault_table() in readme, "run `python -m tests.test_faults` and paste its table into README.md"


if __name__ == "__main__":
    sys.stdout.write(fault_table() + "\n")
