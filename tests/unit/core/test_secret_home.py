"""A home folder full of real-looking credential files, printed the ways a command can print them
(`cat`, `base64`, `xxd -p`, `rev`, `ps -eo args`): after redaction no spelling of any credential in
them is left, although the agent knew none of them by value."""

from __future__ import annotations

import base64

import pytest

from core.secrets import Redactor, spellings, squeeze
from tests.support.credential_home import CREDENTIAL_FILES as HOME


def _printed(text: str) -> dict[str, str]:
    """`text` as `cat`, `base64`, `base64 -w0`, `xxd -p` and `rev` print it."""
    raw = text.encode()
    b64 = base64.b64encode(raw).decode()
    hexed = raw.hex()
    return {
        "cat": text,
        "base64": "\n".join(b64[i : i + 76] for i in range(0, len(b64), 76)),
        "base64 -w0": b64,
        "xxd -p": "\n".join(hexed[i : i + 60] for i in range(0, len(hexed), 60)),
        "rev": "\n".join(line[::-1] for line in text.split("\n")),
    }


@pytest.mark.parametrize(("name", "text", "credentials"), HOME, ids=[row[0] for row in HOME])
def test_no_spelling_of_a_credential_survives_redaction(name: str, text: str, credentials: list[str]) -> None:
    redact = Redactor()  # knows no secret by value: only shapes
    for how, printed in _printed(text).items():
        out = squeeze(redact(printed))
        for credential in credentials:
            left = [form for form in spellings(credential) if form in out]
            assert not left, (how, credential, redact(printed))


def test_the_files_ordinary_lines_stay_readable() -> None:
    redact = Redactor()
    out = redact("\n".join(text for _, text, _ in HOME))
    for kept in (
        "registry=https://registry.npmjs.org/",
        "username = __token__",
        '"type": "authorized_user"',
        "machine api.heroku.com",
        "client_email",
        "[registry]",
        "mysql -u root",
        "--verbose",
    ):
        assert kept in out, kept
