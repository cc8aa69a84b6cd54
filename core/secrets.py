"""Keeping secrets out of output, logs, journals and child processes."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

# Variables a child process must not inherit: API keys, tokens, secrets, passwords.
_SECRET_NAME = re.compile(r"(_API_KEY$|^API_KEY$|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL)", re.IGNORECASE)
REDACTED = "[REDACTED]"
# Secrets recognisable by their shape, whoever they belong to: the text before group 1's end is kept.
_SHAPES = re.compile(
    r"(Bearer\s+)[A-Za-z0-9._~+/=-]{8,}"  # an Authorization header
    r"|()\bsk-[A-Za-z0-9_-]{20,}"  # DeepSeek / OpenAI / Anthropic style API keys
    r"|()\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"  # AWS access key ids
    r"|()\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,}|glpat-[A-Za-z0-9_-]{20,})"
    r"|()\bxox[abprs]-[A-Za-z0-9-]{10,}"  # Slack
    r"|()-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY-----|\Z)"
    r"|(\b[a-z][a-z0-9+.-]*://[^\s:/@]+:)[^\s@/]+(?=@)",  # the password in scheme://user:password@host
    re.IGNORECASE,
)


def _keep_prefix(match: re.Match[str]) -> str:
    return next((g for g in match.groups() if g is not None), "") + REDACTED


def is_secret_name(name: str) -> bool:
    return bool(_SECRET_NAME.search(name))


def scrub_env(environ: Mapping[str, str]) -> dict[str, str]:
    """A copy of `environ` without secret-looking variables, for child processes."""
    return {k: v for k, v in environ.items() if not is_secret_name(k)}


class Redactor:
    """Replaces known secret values, and text shaped like a credential (`Bearer …`, `sk-…`, AWS and
    GitHub tokens, private key blocks, URL passwords), in any text before it is shown or saved."""

    def __init__(self, *secrets: str | None) -> None:
        self.secrets = sorted({s for s in secrets if s and len(s) >= 6}, key=len, reverse=True)

    def __call__(self, text: str) -> str:
        for secret in self.secrets:
            if secret in text:
                text = text.replace(secret, REDACTED)
        return _SHAPES.sub(_keep_prefix, text)

    def deep(self, value: object) -> object:
        """Redact every string inside a JSON-like value."""
        if isinstance(value, str):
            return self(value)
        if isinstance(value, dict):
            return {k: self.deep(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self.deep(v) for v in value]
        return value


# Streamed events and the field that carries their text.
_STREAMS = {"text": "delta", "reasoning": "delta", "tool_output": "text"}


class RedactingEmit:
    """Wraps a front end's emit callback: every payload is redacted and defused (`core.sanitize`), and
    no secret reaches it, not even one split across deltas.

    A model can print the key in pieces (it read `.env`), and each delta alone matches nothing. So
    streamed text is held back by the few characters that could still turn into a secret, and
    released, redacted, with the next delta or before any other event.
    """

    def __init__(self, emit: Callable[[str, dict[str, Any]], None], redact: Redactor) -> None:
        self._emit = emit
        self._redact = redact
        self._pending: dict[tuple[str, str], tuple[dict[str, Any], str]] = {}

    def __call__(self, event: str, data: dict[str, Any]) -> None:
        field = _STREAMS.get(event)
        if field is None or not self._redact.secrets:
            self.flush()
            self._out(event, data)
            return
        key = (event, str(data.get("call_id", "")))
        _, held = self._pending.pop(key, (data, ""))
        self.flush()  # another stream's held text goes first: output keeps its order
        text = self._redact(held + str(data.get(field, "")))
        cut = len(text) - self._open_prefix(text)
        if cut < len(text):
            self._pending[key] = (data, text[cut:])
        if cut:
            self._out(event, {**data, field: text[:cut]})

    def flush(self) -> None:
        """Release whatever is held back (it cannot become a secret any more)."""
        pending, self._pending = self._pending, {}
        for (event, _), (data, held) in pending.items():
            self._out(event, {**data, _STREAMS[event]: held})

    def _out(self, event: str, data: dict[str, Any]) -> None:
        from core.sanitize import shown_deep  # sanitize imports the pruner's cleaning; keep this module light

        self._emit(event, shown_deep(data, self._redact, output=event == "tool_output"))  # type: ignore[arg-type]

    def _open_prefix(self, text: str) -> int:
        """Length of the longest end of `text` that is the start of a secret."""
        longest = 0
        for secret in self._redact.secrets:
            for size in range(min(len(secret) - 1, len(text)), longest, -1):
                if text.endswith(secret[:size]):
                    longest = size
                    break
        return longest
