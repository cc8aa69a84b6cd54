"""The one sanitiser: what reaches a screen carries no live escape sequence and no secret."""

from __future__ import annotations

from core import protocol as ev
from core.protocol import Notice, TextDelta, ToolStarted
from core.sanitize import defuse, shown, shown_deep
from core.secrets import RedactingEmit, Redactor
from tests.conftest import TEST_KEY
from tests.support.events import Recorder


def test_control_and_escape_sequences_become_visible_text() -> None:
    text = "ok\x1b[2K\r\x1b]52;c;ZXZpbA==\x07\x9b31m\u202egnp.exe\x00 done\ttab\nnext"
    out = defuse(text)
    assert out == "ok\\x1b[2K\\r\\x1b]52;c;ZXZpbA==\\x07\\x9b31m\\u202egnp.exe\\x00 done\ttab\nnext"
    assert not any(ord(c) < 0x20 and c not in "\t\n" for c in out)


def test_command_output_loses_its_formatting_but_not_its_text() -> None:
    assert defuse("\x1b[32mPASSED\x1b[0m\n 10%\r 100%\n你好\x1b[8m", output=True) == "PASSED\n 100%\n你好"


def test_secrets_are_redacted_by_value_and_by_shape() -> None:
    redact = Redactor(TEST_KEY)
    text = f"key={TEST_KEY} Authorization: Bearer abcdefghijk postgres://bob:hunter22@db/x AKIAABCDEFGHIJKLMNOP"
    out = shown(text, redact)
    assert TEST_KEY not in out and "abcdefghijk" not in out and "hunter22" not in out and "AKIA" not in out
    assert "postgres://bob:[REDACTED]@db/x" in out


def test_every_field_of_every_event_is_sanitised_on_its_way_to_a_front_end() -> None:
    seen = Recorder()
    emit = RedactingEmit(seen, Redactor(TEST_KEY))
    emit(ToolStarted(call_id="c1", name="run_shell", arguments={"command": f"echo {TEST_KEY}\x1b[1A"}))
    emit(TextDelta(delta="answer\x1b]0;pwned\x07", item_id="m1"))
    emit(Notice(kind="info", message="\x1b[2Jcleared"))
    assert seen.of(ev.ToolStarted)[0].arguments["command"] == "echo [REDACTED]\\x1b[1A"
    assert seen.text() == "answer\\x1b]0;pwned\\x07"
    assert seen.of(ev.Notice)[0].message == "\\x1b[2Jcleared"
    assert shown_deep(["\x07", {"a": ("\x1b",)}]) == ["\\x07", {"a": ["\\x1b"]}]
