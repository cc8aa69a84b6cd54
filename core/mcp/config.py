"""Where MCP servers are configured, and what a server entry says.

The format is the one people already have (Claude Code's `.mcp.json`, Cursor's `mcp.json`):
`{"mcpServers": {"name": {...}}}`. Files are read in this order, a later one never replacing a
server an earlier one named: the user's `mcp.json` beside the `.env` the agent reads, the file
in DEEPSEEK_MCP_CONFIG, then the workspace's `.mcp.json`. The workspace's file came with a
cloned repository, so its servers are marked `from_workspace` and start only after a yes.
`${VAR}` (and `${VAR:-default}`) in env, args, headers and url expand from the environment, so
secrets stay out of the file; a variable that is not set is an error for that server alone.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.i18n import _

USER_FILE = "mcp.json"
WORKSPACE_FILE = ".mcp.json"
CONFIG_ENV = "DEEPSEEK_MCP_CONFIG"
START_TIMEOUT = 30.0  # seconds for a server to start and list its tools
CALL_TIMEOUT = 300.0  # seconds for one tool call
HTTP_TYPES = ("http", "streamable-http", "streamable_http", "streamableHttp")


@dataclass(frozen=True)
class ServerConfig:
    """One server entry, its variables expanded."""

    name: str
    source: str  # the file it came from, for messages
    command: str = ""
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    cwd: str = ""
    url: str = ""
    headers: Mapping[str, str] = field(default_factory=dict)
    auto_approve: frozenset[str] = frozenset()
    trusted: bool = False  # runs outside the sandbox's confinement, when there is one
    from_workspace: bool = False
    start_timeout: float = START_TIMEOUT
    call_timeout: float = CALL_TIMEOUT
    shown: str = ""  # the command line or URL as the file spells it, ${VAR}s unexpanded: for questions

    @property
    def transport(self) -> str:
        return "http" if self.url else "stdio"

    @property
    def described(self) -> str:
        """The server as a question shows it, the whole entry a consent covers: its command or URL
        with the variables unexpanded (no secret is printed), its environment's names, and what it
        is let do unasked."""
        parts = [_("MCP server {name}: {command}").format(name=self.name, command=self.shown)]
        if self.env:
            parts.append(_("environment: {names}").format(names=", ".join(sorted(self.env))))
        if self.cwd:
            parts.append(_("in {folder}").format(folder=self.cwd))
        if self.auto_approve:
            parts.append(_("autoApprove (these tools run unasked): {tools}").format(
                tools=", ".join(sorted(self.auto_approve))))
        if self.trusted:
            parts.append(_('"trusted": true (it asks to run outside the sandbox)'))
        return _("; ").join(parts)

    def fingerprint(self) -> str:
        """What a workspace consent is for, the whole entry: a changed command, url, environment,
        `autoApprove` list or `trusted` asks again. A digest: the environment's values may be secrets."""
        entry = [self.command, list(self.args), sorted(self.env.items()), self.cwd, self.url, sorted(self.headers),
                 sorted(self.auto_approve), self.trusted]
        return hashlib.sha256(json.dumps(entry, ensure_ascii=False).encode("utf-8", "surrogatepass")).hexdigest()


@dataclass
class Loaded:
    servers: list[ServerConfig] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)  # one line each: a file or an entry that was skipped


@dataclass(frozen=True)
class ConfigFile:
    path: Path
    from_workspace: bool = False
    named: bool = False  # the user named it (DEEPSEEK_MCP_CONFIG): its absence is worth a notice


def config_files(env_file: Path, workspace: Path, named: str = "") -> list[ConfigFile]:
    """Every file to read, in order; the default ones may be missing. `named`: DEEPSEEK_MCP_CONFIG."""
    files = [ConfigFile(env_file.parent / USER_FILE)]
    if named:
        files.append(ConfigFile(Path(named).expanduser(), named=True))
    files.append(ConfigFile(workspace / WORKSPACE_FILE, from_workspace=True))
    return files


def load_servers(env_file: Path, workspace: Path, named: str = "",
                 environ: Mapping[str, str] | None = None) -> Loaded:
    """Every configured server; `environ` expands the `${VAR}`s (default: the process's environment)."""
    environ = os.environ if environ is None else environ
    loaded = Loaded()
    seen: set[str] = set()
    for file in config_files(env_file, workspace, named):
        path, from_workspace = file.path, file.from_workspace
        if not path.is_file():
            if file.named:
                loaded.notices.append(_("mcp: {variable} names {path}, which is not a file").format(
                    variable=CONFIG_ENV, path=path))
            continue
        entries = _read(path, loaded.notices)
        for name, entry in entries.items():
            if name in seen:
                if from_workspace:
                    loaded.notices.append(_("mcp: {path} also defines {name!r}; the user's entry is used")
                                          .format(path=path, name=name))
                continue
            try:
                server = parse_entry(name, entry, str(path), from_workspace, environ, workspace)
            except ValueError as exc:
                loaded.notices.append(_("mcp: server {name!r} in {path} skipped: {error}").format(
                    name=name, path=path, error=exc))
                continue
            seen.add(name)
            if server is not None:
                loaded.servers.append(server)
    return loaded


def _read(path: Path, notices: list[str]) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8-sig"))
    except OSError as exc:
        notices.append(_("mcp: cannot read {path} ({error}); its servers are not started").format(
            path=path, error=exc.strerror or exc))
        return {}
    except ValueError as exc:
        notices.append(_("mcp: {path} is not valid JSON ({error}); its servers are not started").format(
            path=path, error=exc))
        return {}
    servers = data.get("mcpServers") if isinstance(data, dict) else None
    if not isinstance(servers, dict):
        notices.append(_('mcp: {path} has no "mcpServers" object; nothing to start').format(path=path))
        return {}
    return servers


def parse_entry(name: str, entry: Any, source: str, from_workspace: bool, environ: Mapping[str, str],
                workspace: Path) -> ServerConfig | None:
    """One entry as a ServerConfig; None when it is disabled; ValueError saying what is wrong."""
    if not isinstance(entry, dict):
        raise ValueError(_("an entry must be a JSON object"))
    if entry.get("disabled") is True:
        return None
    kind = str(entry.get("type") or entry.get("transport") or ("http" if "url" in entry else "stdio"))
    expand = _Expander(environ)
    common: dict[str, Any] = {
        "name": name, "source": source, "from_workspace": from_workspace,
        "auto_approve": frozenset(_strings(entry.get("autoApprove", []), "autoApprove")),
        "trusted": entry.get("trusted") is True,
        "start_timeout": _seconds(entry.get("startupTimeout", START_TIMEOUT), "startupTimeout"),
        "call_timeout": _seconds(entry.get("timeout", CALL_TIMEOUT), "timeout"),
    }
    if kind in HTTP_TYPES:
        url = expand(_string(entry.get("url"), "url"))
        if not re.match(r"https?://", url):
            raise ValueError(_("url must start with http:// or https://, got {url!r}").format(url=url))
        return ServerConfig(url=url, headers=expand.mapping(entry.get("headers", {}), "headers"),
                            shown=entry["url"], **common)
    if kind == "sse":
        raise ValueError(_('the old SSE transport is not supported; use "type": "http" (streamable HTTP)'))
    if kind != "stdio":
        raise ValueError(_('unknown type {kind!r} (use "stdio" or "http")').format(kind=kind))
    command = expand(_string(entry.get("command"), "command"))
    cwd = expand(str(entry.get("cwd") or ""))
    raw_args = _strings(entry.get("args", []), "args")
    return ServerConfig(command=command, args=tuple(expand(a) for a in raw_args),
                        env=expand.mapping(entry.get("env", {}), "env"),
                        cwd=str((workspace / cwd).resolve()) if cwd else "",
                        shown=" ".join([entry["command"], *raw_args]), **common)


def _string(value: Any, key: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ValueError(_('"{key}" must be a non-empty string').format(key=key))
    return value


def _strings(value: Any, key: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError(_('"{key}" must be a list of strings').format(key=key))
    return value


def _seconds(value: Any, key: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        raise ValueError(_('"{key}" must be a positive number of seconds').format(key=key))
    return float(value)


_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


class _Expander:
    """`${VAR}` / `${VAR:-default}` from the environment; an unset variable without a default is an error."""

    def __init__(self, environ: Mapping[str, str]) -> None:
        self.environ = environ

    def __call__(self, text: str) -> str:
        def one(match: re.Match[str]) -> str:
            value = self.environ.get(match.group(1))
            if value is None:
                if match.group(2) is None:
                    raise ValueError(_("${{{name}}} is not set in the environment").format(
                        name=match.group(1)))
                return match.group(2)
            return value

        return _VAR.sub(one, text)

    def mapping(self, value: Any, key: str) -> dict[str, str]:
        if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
            raise ValueError(_('"{key}" must be an object of strings').format(key=key))
        return {str(k): self(v) for k, v in value.items()}
