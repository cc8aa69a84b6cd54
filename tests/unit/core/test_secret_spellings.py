"""Redaction catches a secret however a child spells it out, whole or across streamed deltas, and
the secret-name check covers the suffixes credentials are stored under."""

from __future__ import annotations

import base64
import codecs

import pytest

from core import protocol as ev
from core import secrets
from core.secrets import EnvPolicy, RedactingEmit, Redactor, is_secret_name, remember_hidden
from tests.conftest import TEST_KEY
from tests.support.events import Recorder

OTHER = "wJalrXUtnFEMI/K7MDENG+bPxRfiCY"  # has the characters base64 and URL-safe base64 differ in


def _spelled(secret: str) -> dict[str, str]:
    raw = secret.encode()
    forms = {"plain": secret, "reversed": secret[::-1], "spaced": " ".join(secret), "dashed": "-".join(secret),
             "one per line": "\n".join(secret), "comma list": ", ".join(secret), "zero-width": "\u200b".join(secret),
             "reversed spaced": " ".join(secret[::-1]), "hex": raw.hex(), "HEX": raw.hex().upper(),
             "hex bytes": " ".join(f"{b:02x}" for b in raw), "url-encoded": "".join(f"%{b:02X}" for b in raw),
             "json list": '["' + '","'.join(secret) + '"]'}
    for prefix in ("", "a", "ab", "KEY=", "export X="):  # the three base64 alignments, and more
        for name, encode in (("b64", base64.b64encode), ("b64url", base64.urlsafe_b64encode)):
            encoded = encode((prefix + secret + "\n").encode()).decode()
            forms[f"{name} after {prefix!r}"] = encoded
            forms[f"{name} wrapped after {prefix!r}"] = "\n".join(encoded[i:i + 76 // 4] for i in range(0, len(encoded), 19))
    return forms


@pytest.mark.parametrize("secret", [TEST_KEY, OTHER, "短密钥-but-long-enough-密码"])
def test_every_spelling_is_redacted_in_a_whole_output(secret: str) -> None:
    redact = Redactor(secret)
    for name, form in _spelled(secret).items():
        out = redact(f"before {form} after")
        assert "[REDACTED]" in out and out.startswith("before ") and out.endswith(" after"), (name, out)
        assert form not in out, name


@pytest.mark.parametrize("cut", [1, 2, 3, 5, 8])
def test_every_spelling_is_redacted_across_streamed_deltas(cut: int) -> None:
    for name, form in _spelled(TEST_KEY).items():
        seen = Recorder()
        emit = RedactingEmit(seen, Redactor(TEST_KEY))
        text = f"head {form} tail"
        for start in range(0, len(text), cut):
            emit(ev.ToolOutput(call_id="c", text=text[start:start + cut]))
        emit(ev.Notice(message="done"))
        shown = "".join(d.text for d in seen.of(ev.ToolOutput))
        assert "[REDACTED]" in shown and shown.startswith("head") and shown.endswith("tail"), (name, shown)


def test_ordinary_text_is_untouched_and_held_back_briefly() -> None:
    redact = Redactor(TEST_KEY)
    text = "def test(): assert sk_test == 0x736b  # hex 736b2d74 and base64 c2st, one token each\n" * 3
    assert redact(text) == text
    assert redact.open_tail("nothing to hold\n") == 0 and redact.open_tail("prefix s") == 1
    assert redact.open_tail("the last word") == len("word")  # it could still grow into a token
    assert redact.open_tail("prefix s k -") == len("s k -")


def test_short_secrets_get_no_derived_spellings() -> None:
    redact = Redactor("abc123")
    assert redact("abc123 321cba 616263313233") == "[REDACTED] 321cba 616263313233"


def test_values_moved_out_of_the_environment_are_redacted_by_later_redactors(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(secrets, "_hidden_values", set())
    remember_hidden(["hidden-value-0123456789", "/usr/lib/ssh/ssh-askpass", "C:\\Tools\\askpass.exe", "short",
                     "~/.pgpass-file", "30000000"])
    redact = Redactor()
    assert redact("x hidden-value-0123456789 y") == "x [REDACTED] y"
    assert redact(base64.b64encode(b"hidden-value-0123456789").decode()).startswith("[REDACTED]")
    kept = "/usr/lib/ssh/ssh-askpass short ~/.pgpass-file 30000000 C:\\Tools\\askpass.exe"
    assert redact(kept) == kept  # paths, numbers and tiny values stay


@pytest.mark.parametrize("name", ["STRIPE_SK", "stripe_sk", "SK_LIVE_KEY", "APP_SK_LIVE", "DB_PW", "REDIS_PW", "pw_admin",
                                  "SLACK_HOOK_URL", "DISCORD_WEBHOOK", "MY_HOOK", "SENTRY_DSN", "dsn", "OLD_DSN_2",
                                  "AWS_SECRET_ACCESS_KEY", "GH_TOKEN", "MY_PASSWORD", "GITHUB_PAT"])
def test_secret_names(name: str) -> None:
    assert is_secret_name(name) and not EnvPolicy().allows(name, "x")


@pytest.mark.parametrize("name", ["PATH", "HOME", "PWD", "OLDPWD", "SKIP_TESTS", "TASK", "DISK_SIZE", "ASK_FIRST",
                                  "DESKTOP_SESSION", "LANG", "PYTHONPATH", "SHELL"])
def test_ordinary_names(name: str) -> None:
    assert not is_secret_name(name)


def test_rot13_is_not_claimed() -> None:
    """Not every transformation is caught: the docs say which are (this pins the claim)."""
    assert Redactor(TEST_KEY)(codecs.encode(TEST_KEY, "rot13")) == codecs.encode(TEST_KEY, "rot13")
