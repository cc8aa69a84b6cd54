"""Settings: the environment first, then a `.env` file, then defaults.

The `.env` lives next to the frozen exe (`sys.executable`, not PyInstaller's temporary unpack
folder) or next to `agent.py` when run from a source checkout, so a double-clicked exe finds it
whatever the working folder is. An installed package (`pip install .`: the code is in
site-packages) reads it from the user's config folder instead (`default_env_file`). Never from the
current folder: a cloned repository's `.env` could point the agent, and the key, at its own server.
The API key is read at run time only: it is never baked into the exe, never copied into
`os.environ` (children must not inherit it), and never printed.
"""

from __future__ import annotations

import ipaddress
import os
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from core.i18n import _
from core.network.hosts import parse_patterns
from core.prices import parse_prices

API_KEY = "DEEPSEEK_API_KEY"
SANDBOX_CHOICES = ("auto", "landlock", "bwrap", "wintoken", "off")


class ConfigError(Exception):
    """A setting is missing or malformed; the message is one sentence meant for the user."""


def app_dir() -> Path:
    """The folder the program lives in: the exe's folder when frozen, else the source checkout."""
    if getattr(sys, "frozen", False):
        return Path(sys.executable).resolve().parent
    return Path(__file__).resolve().parent.parent


def default_env_file() -> Path:
    """The `.env` the program reads, and where the first run saves the key: next to the exe or the
    source checkout; for an installed package, `%APPDATA%\\deepseek-agent\\.env` on Windows and
    `$XDG_CONFIG_HOME/deepseek-agent/.env` (`~/.config/...`) elsewhere, since site-packages is
    shared by every user of that Python, often not writable, and replaced on upgrade."""
    folder = app_dir()
    if getattr(sys, "frozen", False) or folder.name not in ("site-packages", "dist-packages"):
        return folder / ".env"
    if sys.platform == "win32":
        base = Path(os.environ.get("APPDATA") or Path.home() / "AppData" / "Roaming")
    else:
        base = Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config")
    return base / "deepseek-agent" / ".env"


def saved_privately() -> bool:
    """Whether `save_setting` makes the file readable only by its owner: mode 0600 on POSIX. On
    Windows it takes its folder's permissions, so nothing may promise that there."""
    return sys.platform != "win32"


def parse_dotenv(text: str) -> dict[str, str]:
    """Parse `.env` text: comments, `export ` prefixes, single/double quotes, a BOM and CRLF.

    Malformed lines are skipped rather than fatal: one typo must not lock the user out.
    """
    values: dict[str, str] = {}
    text = text.lstrip("\ufeff").replace("\r\n", "\n").replace("\r", "\n")
    for raw in text.split("\n"):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("export "):
            line = line[len("export "):].lstrip()
        name, sep, value = line.partition("=")
        name = name.strip()
        if not sep or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_.]*", name):
            continue
        values[name] = _dotenv_value(value.strip())
    return values


def dotenv_value(name: str, env_file: Path | None = None) -> str:
    """One setting of the `.env` ("" when it is not there or cannot be read), for what is chosen before
    the settings are loaded: the interface's language, in which loading them may have to complain."""
    try:
        text = (env_file or default_env_file()).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
    return parse_dotenv(text).get(name, "").strip()


_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", '"': '"', "\\": "\\"}


def _dotenv_value(value: str) -> str:
    if value[:1] == "'":  # single quotes: literal
        end = value.find("'", 1)
        return value[1:end] if end > 0 else value[1:]
    if value[:1] == '"':  # double quotes: \n \t \r \" \\ are escapes; any other backslash stays
        out: list[str] = []
        i = 1
        while i < len(value) and value[i] != '"':
            pair = value[i:i + 2]
            if pair[:1] == "\\" and pair[1:] in _ESCAPES:
                out.append(_ESCAPES[pair[1]])
                i += 2
            else:
                out.append(value[i])
                i += 1
        return "".join(out)
    # Unquoted: an inline comment starts at " #".
    hash_at = value.find(" #")
    return (value[:hash_at] if hash_at >= 0 else value).strip()


@dataclass(frozen=True)
class Settings:
    """Every setting the agent reads. Build with `load_settings()`."""

    api_key: str | None = field(default=None, repr=False)
    api_key_source: str = ""
    base_url: str = "https://api.deepseek.com"
    model: str = "deepseek-v4-flash"
    context_window: int = 1_000_000
    max_output_tokens: int = 32_768
    reasoning_effort: str = "high"
    temperature: str = ""  # empty: not sent (DeepSeek's thinking mode ignores it; local models use it)
    max_steps: int = 100
    shell_timeout: float = 300.0
    max_retries: int = 4
    retry_base_delay: float = 1.0
    connect_timeout: float = 15.0
    idle_timeout: float = 300.0
    sessions_dir: str = ""  # empty: the platform's user data folder (see core.session.journal.sessions_root)
    working_budget: int = 128_000
    context_trigger: float = 0.8
    context_target: float = 0.5
    prices: str = ""
    env_keep: str = ""  # AGENT_ENV_KEEP / AGENT_ENV_DROP: see core.secrets.EnvPolicy
    env_drop: str = ""
    mode: str = ""  # AGENT_MODE: auto, ask or yes (core.modes); empty: auto where a sandbox works, else ask
    sandbox: str = "auto"  # AGENT_SANDBOX: auto, landlock, bwrap, wintoken or off (see core.sandbox)
    # AGENT_NETWORK: proxied (confined commands reach the network only through the agent's proxy,
    # core/network), on (open, as outside the sandbox) or off (no TCP connection; --no-network)
    network: str = "proxied"
    sandbox_writable: str = ""  # AGENT_SANDBOX_WRITABLE: more folders commands may write (os.pathsep-separated)
    sandbox_readable: str = ""  # AGENT_SANDBOX_READABLE: more folders commands may read (os.pathsep-separated)
    sandbox_sockets: str = ""  # AGENT_SANDBOX_SOCKETS: Unix sockets commands may use (see core.sandbox.policy)
    network_allow: str = ""  # AGENT_NETWORK_ALLOW: hosts the network proxy lets through besides its list
    mcp_config: str = ""  # DEEPSEEK_MCP_CONFIG: one more mcp.json to read (see core.mcp.config)
    env_file: Path = field(default_factory=default_env_file)
    # Where each setting the user gave came from (attribute -> "the environment variable X", a file,
    # "the command line"); settings left at their default or derived are absent. Errors cite it.
    sources: Mapping[str, str] = field(default_factory=dict, repr=False, compare=False)

    @property
    def responses_url(self) -> str:
        return self.base_url.rstrip("/") + "/responses"

    def origin(self, attr: str) -> str:
        """Where a setting's value came from, for messages: "from <where>", "derived from …" or "the default"."""
        if attr in self.sources:
            return _("from {where}").format(where=self.sources[attr].replace(
                _("the environment variable {name}").format(name=ENV_NAMES[attr]), _("the environment")))
        derived = {"max_output_tokens": "context_window", "context_target": "context_trigger",
                   "context_trigger": "context_target"}.get(attr)
        if derived in self.sources:
            return _("derived from {name}").format(name=ENV_NAMES[derived])
        return _("the default")

    def require_key(self) -> str:
        """The API key, or a ConfigError naming where it is looked for. Loopback servers need none."""
        if self.api_key:
            return self.api_key
        if is_loopback(self.base_url):
            return ""
        raise ConfigError(_("No API key found: set {name} in the environment or in {file} (copy .env.example there "
                            "and fill it in).").format(name=API_KEY, file=self.env_file))


# The `.env` / environment name of every plain setting; type and default come from `Settings`.
ENV_NAMES: dict[str, str] = {
    "base_url": "DEEPSEEK_BASE_URL",
    "model": "DEEPSEEK_MODEL",
    "context_window": "DEEPSEEK_CONTEXT_WINDOW",
    "max_output_tokens": "DEEPSEEK_MAX_OUTPUT_TOKENS",
    "reasoning_effort": "DEEPSEEK_REASONING_EFFORT",
    "temperature": "DEEPSEEK_TEMPERATURE",
    "max_steps": "AGENT_MAX_STEPS",
    "shell_timeout": "AGENT_SHELL_TIMEOUT",
    "max_retries": "AGENT_MAX_RETRIES",
    "retry_base_delay": "AGENT_RETRY_BASE_DELAY",
    "connect_timeout": "AGENT_CONNECT_TIMEOUT",
    "idle_timeout": "AGENT_IDLE_TIMEOUT",
    "sessions_dir": "AGENT_SESSIONS_DIR",
    "working_budget": "AGENT_WORKING_BUDGET",
    "context_trigger": "AGENT_CONTEXT_TRIGGER",
    "context_target": "AGENT_CONTEXT_TARGET",
    "prices": "AGENT_PRICES",
    "env_keep": "AGENT_ENV_KEEP",
    "env_drop": "AGENT_ENV_DROP",
    "mode": "AGENT_MODE",
    "sandbox": "AGENT_SANDBOX",
    "network": "AGENT_NETWORK",
    "sandbox_writable": "AGENT_SANDBOX_WRITABLE",
    "sandbox_readable": "AGENT_SANDBOX_READABLE",
    "sandbox_sockets": "AGENT_SANDBOX_SOCKETS",
    "network_allow": "AGENT_NETWORK_ALLOW",
    "mcp_config": "DEEPSEEK_MCP_CONFIG",
}


# The output limit when the user sets none: a quarter of the window (the share the context budget
# reserves for the answer), at most DeepSeek's 32k, so a small local window works on its own.
MAX_DERIVED_OUTPUT = 32_768


def derived_output_limit(context_window: int) -> int:
    return max(1, min(MAX_DERIVED_OUTPUT, context_window // 4))


def is_loopback(url: str) -> bool:
    """True for a server on this machine (a local model needs no key and no proxy)."""
    host = urlparse(url).hostname or ""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def load_settings(
    environ: Mapping[str, str] | None = None,
    env_file: Path | None = None,
    overrides: Mapping[str, str] | None = None,
) -> Settings:
    """Resolve every setting: overrides (command-line flags), environment, `.env`, defaults."""
    environ = os.environ if environ is None else environ
    env_file = env_file or default_env_file()
    file_values: dict[str, str] = {}
    if env_file.is_file():
        try:
            file_values = parse_dotenv(env_file.read_text(encoding="utf-8", errors="replace"))
        except OSError as exc:
            raise ConfigError(_("Cannot read {file}: {problem}.").format(file=env_file, problem=exc.strerror or exc)) \
                from exc

    def lookup(name: str) -> tuple[str, str]:
        """The value and where it came from. A variable set in the environment wins even when it is
        empty (that is how to switch a .env value off); empty means the default. Not for the key:
        an empty DEEPSEEK_API_KEY (a shell template's `export DEEPSEEK_API_KEY=`) counts as unset,
        or it would hide the key the first run has just saved to the .env."""
        if overrides and overrides.get(name):
            return overrides[name].strip(), _("the command line")
        if name in environ and (name != API_KEY or environ[name].strip()):
            return environ[name].strip(), _("the environment variable {name}").format(name=name)
        return file_values.get(name, "").strip(), str(env_file)

    defaults = Settings.__dataclass_fields__
    values: dict[str, Any] = {}
    sources: dict[str, str] = {}
    for attr, name in ENV_NAMES.items():
        raw, source = lookup(name)
        if raw:
            values[attr] = _convert(name, type(defaults[attr].default), raw, source)
            sources[attr] = source
    _derive(values)
    key, key_source = lookup(API_KEY)
    key = key.strip("\u200b\u200c\u200d\ufeff")  # invisible characters that come with a pasted key
    if key and not (key.isascii() and key.isprintable() and " " not in key):
        raise ConfigError(_("{name} (from {source}) contains a character that cannot be sent in an HTTP header; copy "
                            "the key again from the provider's page.").format(name=API_KEY, source=key_source))
    settings = Settings(api_key=key or None, api_key_source=key_source if key else "", env_file=env_file,
                        sources=sources, **values)
    _validate(settings)
    return settings


def _derive(values: dict[str, Any]) -> None:
    """Fill the settings that depend on others, when the user left them unset, so that setting one
    value alone (a 16k window for a local model, an earlier trigger) never contradicts a default."""
    defaults = Settings()
    if "max_output_tokens" not in values and "context_window" in values:
        values["max_output_tokens"] = derived_output_limit(values["context_window"])
    ratio = defaults.context_target / defaults.context_trigger
    if "context_target" not in values and "context_trigger" in values:
        values["context_target"] = min(defaults.context_target, round(values["context_trigger"] * ratio, 4))
    elif "context_trigger" not in values and "context_target" in values:
        values["context_trigger"] = max(defaults.context_trigger, min(1.0, round(values["context_target"] / ratio, 4)))


def _convert(name: str, kind: type, raw: str, source: str) -> Any:
    try:
        return int(raw.replace("_", "")) if kind is int else kind(raw)
    except ValueError:
        message = _("{name} must be a whole number, got {raw!r} (from {source}).") if kind is int \
            else _("{name} must be a number, got {raw!r} (from {source}).")
        raise ConfigError(message.format(name=name, raw=raw, source=source)) from None


def _validate(s: Settings) -> None:
    """One sentence per problem, naming the setting and where its value came from."""

    def named(attr: str) -> str:
        value = getattr(s, attr)
        shown = f"{value:,}" if isinstance(value, int) else repr(value) if isinstance(value, str) else f"{value:g}"
        return f"{ENV_NAMES[attr]}={shown} ({s.origin(attr)})"

    if not urlparse(s.base_url).scheme.startswith("http"):
        raise ConfigError(_("{setting} must start with http:// or https://.").format(setting=named("base_url")))
    for attr in ("context_window", "max_output_tokens", "max_steps"):
        if getattr(s, attr) <= 0:
            raise ConfigError(_("{setting} must be greater than 0.").format(setting=named(attr)))
    if s.max_output_tokens >= s.context_window:
        if "max_output_tokens" not in s.sources:
            raise ConfigError(_("{setting} leaves no room for an answer; give the model's real window in tokens.")
                              .format(setting=named("context_window")))
        raise ConfigError(_("{setting} must be smaller than {window}; leave it unset to derive it from the window.")
                          .format(setting=named("max_output_tokens"), window=named("context_window")))
    for attr in ("shell_timeout", "connect_timeout", "idle_timeout"):
        if getattr(s, attr) <= 0:
            raise ConfigError(_("{setting} must be a positive number of seconds.").format(setting=named(attr)))
    for attr in ("max_retries", "retry_base_delay"):
        if getattr(s, attr) < 0:
            raise ConfigError(_("{setting} must not be negative.").format(setting=named(attr)))
    if s.temperature:
        try:
            float(s.temperature)
        except ValueError:
            raise ConfigError(_("{setting} must be a number or empty.").format(setting=named("temperature"))) from None
    if s.working_budget < 0:
        raise ConfigError(_("{setting} must be 0 (no cap) or a positive number of tokens.").format(
            setting=named("working_budget")))
    if not 0 < s.context_target < s.context_trigger <= 1:
        raise ConfigError(_("{target} and {trigger} must satisfy 0 < target < trigger <= 1.").format(
            target=named("context_target"), trigger=named("context_trigger")))
    if s.mode not in ("", "auto", "ask", "yes"):
        raise ConfigError(_("{setting} must be auto, ask or yes.").format(setting=named("mode")))
    if s.sandbox not in SANDBOX_CHOICES:
        raise ConfigError(_("{setting} must be one of {choices}.").format(setting=named("sandbox"),
                                                                        choices=", ".join(SANDBOX_CHOICES)))
    if s.network not in ("proxied", "on", "off"):
        raise ConfigError(_("{setting} must be proxied, on or off.").format(setting=named("network")))
    try:
        parse_patterns(s.network_allow)
    except ValueError as exc:
        raise ConfigError(_("{setting}: {problem} (expected host names or *.domain, comma-separated).").format(
            setting=named("network_allow"), problem=exc)) from None
    try:
        parse_prices(s.prices)
    except ValueError as exc:
        raise ConfigError(_("{setting}: {problem} (expected model=hit/miss/output;..., USD per 1M tokens).").format(
            setting=named("prices"), problem=exc)) from None


def save_setting(env_file: Path, name: str, value: str) -> None:
    """Set `name=value` in a `.env`, keeping its other lines; the file is private to the user.

    Written to a temporary file created with mode 0600 and renamed over the old one, so the key is
    never readable by others, not even for a moment, and a crash leaves the old file intact.
    """
    lines = env_file.read_text(encoding="utf-8", errors="replace").splitlines() if env_file.is_file() else []
    pattern = re.compile(rf"^\s*(?:export\s+)?{re.escape(name)}\s*=")
    entry = f"{name}={value}"
    replaced = [entry if pattern.match(line) else line for line in lines]
    if entry not in replaced:
        replaced.append(entry)
    env_file.parent.mkdir(parents=True, exist_ok=True)
    temp = env_file.with_name(env_file.name + ".tmp")
    temp.unlink(missing_ok=True)  # a leftover could carry looser permissions: always start afresh
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write("\n".join(replaced) + "\n")
    os.replace(temp, env_file)
    if saved_privately():
        os.chmod(env_file, 0o600)
