"""Keeping secrets out of output, logs, journals and child processes."""

from __future__ import annotations

import re
from collections.abc import Mapping

# Variables a child process must not inherit: API keys, tokens, secrets, passwords.
_SECRET_NAME = re.compile(r"(_API_KEY$|^API_KEY$|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL)", re.IGNORECASE)
_BEARER = re.compile(r"(Bearer\s+)[A-Za-z0-9._~+/=-]{8,}", re.IGNORECASE)
REDACTED = "[REDACTED]"


def is_secret_name(name: str) -> bool:
    return bool(_SECRET_NAME.search(name))


def scrub_env(environ: Mapping[str, str]) -> dict[str, str]:
    """A copy of `environ` without secret-looking variables, for child processes."""
    return {k: v for k, v in environ.items() if not is_secret_name(k)}


class Redactor:
    """Replaces known secret values and `Bearer …` tokens in any text before it is shown or saved."""

    def __init__(self, *secrets: str | None) -> None:
        self._secrets = sorted({s for s in secrets if s and len(s) >= 6}, key=len, reverse=True)

    def __call__(self, text: str) -> str:
        for secret in self._secrets:
            if secret in text:
                text = text.replace(secret, REDACTED)
        return _BEARER.sub(r"\1" + REDACTED, text)

    def deep(self, value: object) -> object:
        """Redact every string inside a JSON-like value."""
        if isinstance(value, str):
            return self(value)
        if isinstance(value, dict):
            return {k: self.deep(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self.deep(v) for v in value]
        return value
