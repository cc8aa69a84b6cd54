"""What a confined command may touch: the folders it may write, the places it may not read, and
whether it may open network connections. The same policy drives every backend."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from core.config import Settings, default_env_file
from core.session.journal import sessions_root

# Credentials a command never needs to read: relative to the home folder.
SECRET_PLACES = (".ssh", ".aws", ".gnupg", ".config/gh", ".netrc", ".git-credentials", ".docker/config.json",
                 ".kube")
# Devices every command may write (and the terminal ones a pty-using program opens).
DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty", "/dev/ptmx",
           "/dev/pts")
TEMP_FOLDERS = ("/tmp", "/var/tmp", "/dev/shm")


@dataclass(frozen=True)
class Policy:
    """Resolved, existing paths only: Landlock and bind mounts act on what exists."""

    workspace: Path
    writable: tuple[Path, ...]  # the workspace first, then temp folders and the user's extra folders
    denied: tuple[Path, ...]  # neither read nor written (nor listed, under bubblewrap)
    devices: tuple[Path, ...] = ()
    network: bool = True

    @classmethod
    def for_workspace(cls, workspace: Path, settings: Settings) -> Policy:
        """The policy for commands run in `workspace` under `settings` (AGENT_SANDBOX_WRITABLE,
        AGENT_NETWORK, the agent's own .env and session folders)."""
        root = workspace.resolve()
        home = Path.home()
        temp = [tempfile.gettempdir(), os.environ.get("TMPDIR", ""), *TEMP_FOLDERS]
        extra = [os.path.expanduser(p.strip()) for p in settings.sandbox_writable.split(os.pathsep) if p.strip()]
        secrets = [home / p for p in SECRET_PLACES]
        config = Path(os.environ.get("XDG_CONFIG_HOME") or home / ".config") / "deepseek-agent"
        secrets += [settings.env_file, default_env_file(), config, sessions_root(settings.sessions_dir),
                    sessions_root().parent]
        temp_folders = _existing(temp)
        # Inside a temp folder a denied path would take the reading of new temp files with it (see
        # `landlock.split_grants`): temp folders stay whole, and a sessions folder put there is not hidden.
        denied = [p for p in _existing(secrets) if not (root == p or root.is_relative_to(p))
                  and not any(p.is_relative_to(t) for t in temp_folders)]
        return cls(workspace=root, writable=tuple(_existing([root, *temp_folders, *extra])), denied=tuple(denied),
                   devices=tuple(_existing(DEVICES)), network=settings.network != "off")

    def may_write(self, path: Path) -> bool:
        return any(path == w or path.is_relative_to(w) for w in self.writable) and not self.is_denied(path)

    def is_denied(self, path: Path) -> bool:
        return any(path == d or path.is_relative_to(d) for d in self.denied)


def _existing(paths: Iterable[str | Path]) -> list[Path]:
    """Each path resolved (a symlinked ~/.ssh is denied where it really is), once, if it exists."""
    out: list[Path] = []
    for raw in paths:
        if not str(raw):
            continue
        path = Path(raw).resolve()
        if path.exists() and path not in out:
            out.append(path)
    return out
