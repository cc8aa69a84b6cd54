"""What a command's environment must not name: the sockets of the user's session.

A Unix-socket server of the session (tmux, ssh-agent, gpg-agent, the D-Bus session bus, Docker, a
display server) runs what a client asks in the user's name, outside any sandbox. The variables
that lead to one are left out by rule rather than by a list of programs: a name of a socket
family, a value that is or holds a socket's address, or a path inside the user's runtime folder
(where such sockets live). A socket the user allowed by name (AGENT_SANDBOX_SOCKETS) is kept.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterable, Mapping
from pathlib import Path

# Names whose variables point at a session's server whatever their value looks like.
_SESSION_NAMES = re.compile(
    r"^(?:TMUX(?:_.*)?|STY|DBUS_.*|SSH_AUTH_SOCK|SSH_AGENT_PID|SSH_CONNECTION_SOCK|GPG_AGENT_INFO|GNUPGHOME_SOCK"
    r"|WAYLAND_.*|DISPLAY|XAUTHORITY|XDG_RUNTIME_DIR|DOCKER_HOST|CONTAINER_HOST|PODMAN_.*|PULSE_SERVER"
    r"|PIPEWIRE_.*|KITTY_LISTEN_ON|KITTY_WINDOW_ID|WEZTERM_UNIX_SOCKET|NVIM(?:_LISTEN_ADDRESS)?|VSCODE_IPC_HOOK.*"
    r"|.*_SOCK|.*_SOCKET(?:_PATH)?)$")
# Values that are a socket's address: unix:path=…, unix:abstract=…, unix://…, an abstract @name.
_SOCKET_ADDRESS = re.compile(r"(?:^|[;,\s])(?:unix:(?:path|abstract|dir|tmpdir)?=?|unix://|npipe://)")


def without_session_sockets(environ: Mapping[str, str], allowed: Iterable[Path] = ()) -> dict[str, str]:
    """`environ` without the variables that name a socket of the user's session; a variable
    naming only sockets in `allowed` stays."""
    keep = {p.resolve() for p in allowed}
    runtime = _runtime_folders(environ)
    out = {}
    for name, value in environ.items():
        if _names_session(name, value, runtime) and not (keep and _only_allowed(value, keep)):
            continue
        out[name] = value
    return out


def _names_session(name: str, value: str, runtime: list[Path]) -> bool:
    if _SESSION_NAMES.match(name) or _SOCKET_ADDRESS.search(value):
        return True
    return any(_is_socket_or_runtime(part, runtime) for part in _path_parts(value))


def _runtime_folders(environ: Mapping[str, str]) -> list[Path]:
    folders = [Path(f"/run/user/{os.getuid()}")] if hasattr(os, "getuid") else []
    if environ.get("XDG_RUNTIME_DIR"):
        folders.append(Path(environ["XDG_RUNTIME_DIR"]))
    return folders


def _path_parts(value: str) -> list[str]:
    """The absolute paths in a value (a PATH-like list counts each entry)."""
    if "/" not in value or len(value) > 4096:
        return []
    return [part for part in re.split(r"[:;,]", value) if part.startswith("/")]


def _is_socket_or_runtime(part: str, runtime: list[Path]) -> bool:
    path = Path(part)
    if any(path == r or path.is_relative_to(r) for r in runtime):
        return True
    try:
        return stat.S_ISSOCK(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False


def _only_allowed(value: str, allowed: set[Path]) -> bool:
    """Whether every socket path the value names is one the user allowed."""
    found = [m.group(0) for m in re.finditer(r"/[^\s;,:=]+", value)]
    return bool(found) and all(Path(p).resolve() in allowed for p in found)
