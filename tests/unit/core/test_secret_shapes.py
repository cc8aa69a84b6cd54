"""Every credential shape in the table is redacted in every spelling a command can print it in, and
ordinary code and tool output that merely look alike are left whole."""

from __future__ import annotations

import base64
import time

import pytest

from core import protocol as ev
from core.secret_shapes import SHAPES, Shape
from core.secrets import RedactingEmit, Redactor, is_secret_value
from core.shape_redaction import has_shape, looks_like_code, redact_shapes, secret_spans
from tests.support.events import Recorder

MARK = "[R]"
EXAMPLES = [
    pytest.param(shape, example, id=f"{shape.name}:{i}")
    for shape in SHAPES
    for i, example in enumerate(shape.examples)
]
NEAR_MISSES = [
    pytest.param(shape, text, id=f"{shape.name}:{i}")
    for shape in SHAPES
    for i, text in enumerate(shape.near_misses)
]


def _secret_of(example: str) -> str:
    """The characters the table's own pattern calls the secret in `example`."""
    (start, end), *_ = secret_spans(example)
    return example[start:end]


def _encodings(text: str) -> dict[str, str]:
    raw = text.encode()
    b64 = base64.b64encode(raw).decode()
    return {
        "hex": raw.hex(),
        "HEX spaced": " ".join(f"{b:02X}" for b in raw),
        "escaped hex": "".join(f"\\x{b:02x}" for b in raw),
        "url-encoded": "".join(f"%{b:02X}" for b in raw),
        "base64": b64,
        "base64url": base64.urlsafe_b64encode(raw).decode(),
        "base64 wrapped": "\n".join(b64[i : i + 76] for i in range(0, len(b64), 76)),
        "base64 of a line": base64.b64encode(b"export X=" + raw + b"\n").decode(),
    }


@pytest.mark.parametrize(("shape", "example"), EXAMPLES)
def test_each_example_is_redacted_plain_and_in_a_line(shape: Shape, example: str) -> None:
    secret = _secret_of(example)
    for form in (example, f"config: {example} # set", f"[{example}]", f"\t{example}\n"):
        out = redact_shapes(form, MARK)
        assert MARK in out and secret not in out, (form, out)


@pytest.mark.parametrize(("shape", "example"), EXAMPLES)
def test_each_example_is_redacted_quoted_with_its_quotes_kept(shape: Shape, example: str) -> None:
    if shape.kind == "pair" or "\n" in example:
        pytest.skip("a pair's value is quoted inside it; a block spans lines")
    for quote in "\"'`":
        out = redact_shapes(f"x = {quote}{example}{quote}", MARK)
        assert out.startswith(f"x = {quote}") and out.endswith(quote) and _secret_of(example) not in out, out


@pytest.mark.parametrize(("shape", "example"), EXAMPLES)
def test_each_example_is_redacted_reversed(shape: Shape, example: str) -> None:
    out = redact_shapes(f"out: {example[::-1]} end", MARK)
    assert MARK in out and _secret_of(example)[::-1] not in out and out.endswith(" end"), out


@pytest.mark.parametrize(("shape", "example"), EXAMPLES)
def test_each_example_is_redacted_encoded(shape: Shape, example: str) -> None:
    for name, encoded in _encodings(example).items():
        out = redact_shapes(f"dump: {encoded}\nnext line", MARK)
        assert MARK in out and encoded not in out and out.startswith("dump: "), (name, out)
        assert out.endswith("\nnext line"), (name, out)


@pytest.mark.parametrize(("shape", "text"), NEAR_MISSES)
def test_near_misses_are_left_whole_in_every_spelling(shape: Shape, text: str) -> None:
    assert redact_shapes(text, MARK) == text
    for name, encoded in _encodings(text).items():
        assert redact_shapes(encoded, MARK) == encoded, name


ORDINARY = [
    "commit 9fceb02d0ae598e95dc970b74767f19372d61af8\nAuthor: Bob <bob@example.com>\n\n    fix: token parsing",
    "a1b2c3d (HEAD -> main) Merge 5ac257c0ffee into 584293b",
    "id: 123e4567-e89b-12d3-a456-426614174000, 0c5e3f6e-3a73-4cbb-9e6c-0d1b2f6f8a11",
    '"integrity": "sha512-v2kDEe57lecTulaDIuNTPy3Ry4gLGJ6Z1O3vE1krgXZNrsQ+5yy9B6KbGPIz6Lk+qEdcVWpwsEsAUCmDx9s6Q=="',
    "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855  empty",
    '<img src="data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==">',
    "def check_password(password: str, hashed: bytes) -> bool:\n    return bcrypt.checkpw(password.encode(), hashed)",
    "parser.add_argument('--password', help='the password; read from PGPASSWORD when unset')",
    "PATH=/usr/local/bin:/usr/bin:/bin\nPWD=/srv/app\nOLDPWD=/srv\nLS_COLORS=rs=0:di=01;34:ln=01;36:*.tar=01;31",
    'const token = getToken(req);\nconst { secret } = config;\nAPI_KEY = "DEEPSEEK_API_KEY"',
    "tokens = tokenizer.encode(text)  # 中文注释：密码和令牌不在这里",
    "https://user@example.com/repo.git  git@github.com:owner/repo.git  ssh://git@gitlab.com:22/o/r",
    "ERROR 1045 (28000): Access denied for user 'root'@'localhost' (using password: YES)",
    "SELECT * FROM users WHERE password_hash = $1 AND email = $2",
    "  password:\n    type: string\n    minLength: 8",
]


def test_undecodable_bytes_in_a_text_are_no_obstacle() -> None:
    """A file name with bytes that are not UTF-8 reaches redaction as lone surrogates."""
    text = "n-bad\udcff\udcfe.txt\npassword=hunter2 ghp_" + "Ab1Cd2Ef3Gh4Ij5Kl6Mn7Op8Qr9St0Uv1Wx2Y \udcff"
    assert redact_shapes(text, MARK) == "n-bad\udcff\udcfe.txt\npassword=[R] [R] \udcff"
    emit_seen = Recorder()
    emit = RedactingEmit(emit_seen, Redactor())
    for char in text:
        emit(ev.ToolOutput(call_id="c", text=char))
    emit(ev.Notice(message="done"))
    assert "hunter2" not in "".join(d.text for d in emit_seen.of(ev.ToolOutput))


@pytest.mark.parametrize("text", ORDINARY)
def test_ordinary_code_and_output_are_left_whole(text: str) -> None:
    assert redact_shapes(text, MARK) == text
    assert not has_shape(text)


@pytest.mark.parametrize(
    ("value", "following", "code"),
    [
        ("password", "", True),
        ("self.password", "", True),
        ("getpass", "(", True),
        ("None", "", True),
        ("$PGPASS", "", True),
        ('"${DB_PASSWORD}"', "", True),
        ('"***"', "", True),
        ("/run/secrets/db", "", True),
        ("hunter2", "", False),
        ('"hunter2"', "", False),
        ("'correct horse'", "", False),
        ("s3cr3t!", "", False),
    ],
)
def test_a_pairs_value_is_code_or_a_secret(value: str, following: str, code: bool) -> None:
    assert looks_like_code(value, following) is code


def test_redaction_stays_linear_on_hostile_output() -> None:
    """A private key header without an end, pairs without values, endless base64: a backtracking
    engine takes quadratic time on these; the table must not."""
    hostile = ("-----BEGIN RSA PRIVATE KEY----- password= sig= eyJhbGciOiJI." + "QUFB" * 20 + "\n") * 4000
    started = time.monotonic()
    out = redact_shapes(hostile, MARK)
    assert time.monotonic() - started < 10 and out == MARK  # an unended key block hides all after it
    pairs = "password=\nsig=\ntoken:\neyJhbGciOiJI.\n" * 20000 + "QUFB" * 100000
    started = time.monotonic()
    assert redact_shapes(pairs, MARK) == pairs and time.monotonic() - started < 10


@pytest.mark.parametrize("cut", [1, 3, 7, 20])
@pytest.mark.parametrize(("shape", "example"), EXAMPLES)
def test_shapes_split_across_streamed_deltas_are_redacted(shape: Shape, example: str, cut: int) -> None:
    seen = Recorder()
    emit = RedactingEmit(seen, Redactor())
    text = f"head {example} tail\n"
    for start in range(0, len(text), cut):
        emit(ev.ToolOutput(call_id="c", text=text[start : start + cut]))
    emit(ev.Notice(message="done"))
    shown = "".join(d.text for d in seen.of(ev.ToolOutput))
    assert "[REDACTED]" in shown and _secret_of(example) not in shown, shown
    assert shown == Redactor()(text)


def test_a_variable_holding_a_shaped_value_is_not_passed_to_commands() -> None:
    for shape in SHAPES:
        for example in shape.examples:
            assert is_secret_value(example), (shape.name, example)
    assert not is_secret_value("/usr/local/bin:/usr/bin") and not is_secret_value("en_US.UTF-8")
