"""Keeping secrets out of output, logs, journals and child processes."""

from __future__ import annotations

import base64
import dataclasses
import fnmatch
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from core.shape_redaction import has_shape, redact_shapes
from core.shape_redaction import open_tail as shape_open_tail

REDACTED = "[REDACTED]"


# -- the child environment ------------------------------------------------------------------------
# A variable is not passed to commands (in the spirit of Codex's shell_environment_policy) when its
# name contains one of these parts ...
SECRET_NAME_PARTS = ("KEY", "TOKEN", "SECRET", "PASS", "PWD", "AUTH", "CREDENTIAL", "PRIVATE", "DSN", "JWT",
                     "CONNECTION_STRING", "CONNSTR", "HOOK", "BEARER")
# ... or one of these words between underscores (as parts they would catch PATH and COOKIECUTTER_*) ...
SECRET_NAME_WORDS = frozenset({"PAT", "COOKIE", "COOKIES", "CREDS", "SK", "PW"})
# ... or it is git's configuration from the environment, which can carry a credential helper or an
# Authorization header. It goes as a whole: git fails on a GIT_CONFIG_COUNT whose keys are missing.
SECRET_NAMES = ("GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT", "GIT_CONFIG_KEY_*", "GIT_CONFIG_VALUE_*")
# Words that are not secrets although they look like one. SESSION is not a secret word either:
# DBUS_SESSION_BUS_ADDRESS and XDG_SESSION_* are what desktop tools need; a session's secret has
# KEY, TOKEN or SECRET in its name.
_SHELL_OWN = {"PWD", "OLDPWD"}  # the shell's current folder, not a password
_ALWAYS_DROPPED = {"DEEPSEEK_API_KEY"}  # the agent's own key, whatever AGENT_ENV_KEEP says
# A value is held back too when it is a URL with credentials, a connection string with a password
# or account key in it, or shaped like a credential (`core.secret_shapes`).
_URL_WITH_USERINFO = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^/@\s]+@")
_CONNECTION_SECRET = re.compile(r"(?i)(?:^|;)\s*(?:password|pwd|account\s*key|shared\s*access\s*(?:key|signature))\s*=")


def is_secret_name(name: str) -> bool:
    upper = name.upper()
    if upper in _SHELL_OWN:
        return False
    return (any(part in upper for part in SECRET_NAME_PARTS) or not SECRET_NAME_WORDS.isdisjoint(upper.split("_"))
            or _matches(upper, SECRET_NAMES))


def is_secret_value(value: str) -> bool:
    if _URL_WITH_USERINFO.search(value) or _CONNECTION_SECRET.search(value):
        return True
    return has_shape(value)


@dataclass(frozen=True)
class EnvPolicy:
    """Which variables a child command inherits: all but secret-looking ones, adjusted by
    AGENT_ENV_KEEP and AGENT_ENV_DROP (comma-separated names or globs, case-insensitive; a name
    both keeps and drops is dropped)."""

    keep: tuple[str, ...] = ()
    drop: tuple[str, ...] = ()

    @classmethod
    def parse(cls, keep: str = "", drop: str = "") -> EnvPolicy:
        return cls(_patterns(keep), _patterns(drop))

    def allows(self, name: str, value: str) -> bool:
        upper = name.upper()
        if upper in _ALWAYS_DROPPED or _matches(upper, self.drop):
            return False
        if _matches(upper, self.keep):
            return True
        return not is_secret_name(name) and not is_secret_value(value)

    def apply(self, environ: Mapping[str, str]) -> dict[str, str]:
        return {k: v for k, v in environ.items() if self.allows(k, v)}


def _patterns(text: str) -> tuple[str, ...]:
    return tuple(p.upper() for p in re.split(r"[,;\s]+", text) if p)


def _matches(name: str, patterns: tuple[str, ...]) -> bool:
    return any(fnmatch.fnmatchcase(name, pattern) for pattern in patterns)


def scrub_env(environ: Mapping[str, str], policy: EnvPolicy | None = None) -> dict[str, str]:
    """A copy of `environ` without the variables the policy keeps from child processes."""
    return (policy or EnvPolicy()).apply(environ)


# Characters a secret may be spread out with (`s k - 1 2`, one per line, base64 wrapped at 76):
# ASCII punctuation and spaces, and the invisible or wide spaces a terminal shows as nothing.
_SPREAD = "".join(chr(c) for c in range(128) if not chr(c).isalnum()) + "\u00a0\u200b\u200c\u200d\u3000\ufeff"
_SQUEEZE = str.maketrans("", "", _SPREAD)
_GAP = "[" + re.escape(_SPREAD) + "]{0,16}"
_MIN_DERIVED = 10  # a shorter secret's encodings are too short to tell from ordinary text


def squeeze(text: str) -> str:
    """`text` without the characters a secret may be spread out with."""
    return text.translate(_SQUEEZE)


def spellings(secret: str) -> list[str]:
    """The forms a child can print a secret in without naming it, squeezed (`squeeze`): as is,
    reversed, hex (either case), and base64 at each of its three alignments in a longer text
    (standard and URL-safe squeeze alike: `+/-_` are spread characters)."""
    forms = [secret]
    if len(secret) >= _MIN_DERIVED:
        raw = secret.encode("utf-8")
        forms += [secret[::-1], raw.hex(), raw.hex().upper()]
        for shift in range(3):  # the secret starts 0, 1 or 2 bytes into a group of three
            encoded = base64.b64encode(b"\0" * shift + raw).decode().rstrip("=")
            first = -(-8 * shift // 6)  # the first character that holds no byte before the secret
            last = 8 * (shift + len(raw)) // 6  # the characters after it hold bits of what follows
            forms.append(encoded[first:last])
    return list(dict.fromkeys(form for form in map(squeeze, forms) if len(form) >= 6))


class Redactor:
    """Replaces known secret values, in any spelling `spellings` lists, and text shaped like a
    credential (the table in `core.secret_shapes`, in the spellings `core.shape_redaction` reads), in
    any text before it is shown or saved. Besides the secrets it is given, it knows the values the agent
    moved out of its own environment (`remember_hidden`)."""

    def __init__(self, *secrets: str | None) -> None:
        given = {s for s in (*secrets, *_hidden_values) if s and len(s) >= 6}
        self.secrets = sorted(given, key=len, reverse=True)
        self.forms = sorted({form for secret in self.secrets for form in spellings(secret)}, key=len, reverse=True)
        self._pattern = re.compile("|".join(_GAP.join(map(re.escape, form)) for form in self.forms)) if self.forms else None

    def __call__(self, text: str, open_end: bool = False) -> str:
        """`text` redacted; `open_end` says more of it follows (`shape_redaction.redact_shapes`)."""
        for secret in self.secrets:
            if secret in text:
                text = text.replace(secret, REDACTED)
        if self._pattern is not None:
            squeezed = squeeze(text)
            if any(form in squeezed for form in self.forms):
                text = self._pattern.sub(REDACTED, text)
        return redact_shapes(text, REDACTED, open_end)

    def open_tail(self, text: str) -> int:
        """Length of the longest end of `text` that could still grow into a secret: a spelling of a
        known one, or a credential by its shape."""
        return max(self._value_tail(text), shape_open_tail(text))

    def _value_tail(self, text: str) -> int:
        window = text[-(max(map(len, self.forms), default=0) * 17):]
        positions = [i for i, char in enumerate(window) if char not in _SPREAD]
        squeezed = "".join(window[i] for i in positions)
        longest = 0
        for form in self.forms:
            for size in range(min(len(form) - 1, len(squeezed)), longest, -1):
                if squeezed.endswith(form[:size]):
                    longest = size
                    break
        return len(window) - positions[-longest] if longest else 0

    def deep(self, value: object) -> object:
        """Redact every string inside a JSON-like value."""
        if isinstance(value, str):
            return self(value)
        if isinstance(value, dict):
            return {k: self.deep(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self.deep(v) for v in value]
        return value


_hidden_values: set[str] = set()


def remember_hidden(values: Iterable[str]) -> None:
    """Secrets the agent took out of its environment (`core.secret_env`): every redactor made from
    now on redacts those that could be a credential, not a path, a number or a short flag (a
    secret-named variable often holds one: GIT_ASKPASS, PGPASSFILE, an AUTH_TIMEOUT)."""
    _hidden_values.update(v for v in values if len(v) >= 8 and not v.isdigit()
                          and not re.match(r"(?:[A-Za-z]:)?[\\/~]", v))


# Streamed events and the field that carries their text.
_STREAMS = {"text": "delta", "reasoning": "delta", "tool_output": "text"}


class RedactingEmit:
    """Wraps a front end's emit callback: every payload is redacted and defused (`core.sanitize`), and
    no secret reaches it, not even one split across deltas.

    A model can print the key in pieces (it read `.env`), and each delta alone matches nothing. So
    streamed text is held back by the few characters that could still turn into a secret, and
    released, redacted, with the next delta or before any other event.
    """

    def __init__(self, emit: Callable[[Any], None], redact: Redactor) -> None:
        self._emit = emit
        self._redact = redact
        self._pending: dict[tuple[str, str], tuple[Any, str]] = {}

    def __call__(self, event: Any) -> None:
        """`event` is one of `core.protocol`'s frozen dataclasses."""
        field = _STREAMS.get(event.type)
        if field is None:
            self.flush()
            self._out(event)
            return
        key = (event.type, str(getattr(event, "call_id", "")))
        _, held = self._pending.pop(key, (event, ""))
        self.flush()  # another stream's held text goes first: output keeps its order
        text = self._redact(held + str(getattr(event, field)), open_end=True)
        cut = len(text) - self._redact.open_tail(text)
        if cut < len(text):
            self._pending[key] = (event, text[cut:])
        if cut:
            self._out(dataclasses.replace(event, **{field: text[:cut]}))

    def flush(self) -> None:
        """Release whatever is held back (it cannot become a secret any more)."""
        pending, self._pending = self._pending, {}
        for (kind, _), (event, held) in pending.items():
            self._out(dataclasses.replace(event, **{_STREAMS[kind]: self._redact(held)}))

    def _out(self, event: Any) -> None:
        from core.sanitize import shown_deep  # sanitize imports the pruner's cleaning; keep this module light

        output = event.type == "tool_output"
        self._emit(type(event)(**{f.name: shown_deep(getattr(event, f.name), self._redact, output=output)
                                  for f in dataclasses.fields(event)}))
