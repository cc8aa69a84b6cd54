"""What a confined command may touch: the folders it may write, what it may read in the home folder
and beside the workspace, the places it may never read, the files inside the workspace it may not
change, the Unix sockets it may use, and whether it may open network connections. The same policy
drives every backend.

Reads in the home folder are by allowlist: a denylist of credential files closes one spelling at a
time, and every tool keeps its tokens somewhere new. What tools need there was found by running
the test suites of small projects in five languages under the sandbox (docs/safety.md lists it
with the reasons)."""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from core.config import Settings, default_env_file
from core.sandbox import session_temp
from core.session.journal import sessions_root

# Credentials a command never needs to read: relative to the home folder.
# Also outside READABLE_HOME: kept here so that a folder the user makes readable does not bring them.
SECRET_PLACES = (".ssh", ".aws", ".gnupg", ".config/gh", ".netrc", ".git-credentials", ".docker/config.json",
                 ".kube", ".npmrc", ".pypirc", ".cargo/credentials", ".cargo/credentials.toml",
                 ".config/git/credentials", ".vault-token", ".pgpass", ".local/share/keyrings", ".config/gcloud",
                 ".azure", ".m2/settings.xml", ".gradle/gradle.properties", ".bash_history", ".zsh_history")
# What a confined command may read in the home folder, relative to it: toolchains, package caches
# and plain configuration, never a file a tool keeps a token in (~/.npmrc, ~/.pypirc, pip.conf,
# ~/.cargo/credentials*, ~/.m2/settings.xml, ~/.gradle/gradle.properties, git's credential store).
READABLE_HOME = (
    # toolchains and the programs they install
    ".pyenv", ".rustup", ".cargo/bin", ".cargo/env", ".nvm", ".sdkman", ".deno", ".bun/bin", "go/bin",
    ".local/bin", ".local/lib", ".local/include", ".local/share/pipx", ".local/share/uv", ".local/share/pnpm",
    ".local/share/virtualenvs", ".volta", ".asdf", ".rbenv", ".gem",
    # package caches that builds read offline
    ".cargo/registry", ".cargo/git", ".npm/_cacache", ".cache/pip", ".cache/uv", ".cache/go-build", "go/pkg/mod",
    ".cache/yarn", ".cache/pnpm", ".cache/node-gyp", ".cache/pypoetry", ".cache/pre-commit", ".bun/install/cache",
    ".gradle/caches", ".gradle/wrapper", ".m2/repository", ".cache/ms-playwright", ".cache/deno",
    # configuration that holds no credential
    ".gitconfig", ".config/git/config", ".config/git/ignore", ".config/git/attributes", ".gitignore_global",
    ".editorconfig",
)
# Devices every command may write. No terminal: a command writing the user's /dev/pts/N could fill
# the paste buffer or redraw the screen; it is neither read nor written (see TERMINALS).
DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom")
TERMINALS = ("/dev/pts", "/dev/ptmx", "/dev/tty", "/dev/console")
# Shared temp folders: readable, not writable (commands get a folder of the session's own as TMPDIR).
TEMP_FOLDERS = ("/tmp", "/var/tmp", "/dev/shm")
# Inside the workspace, what programs outside the sandbox run or trust later: the user's git runs
# hooks and what .git/config names, the next session reads .mcp.json. Commands may not change them.
PROTECTED = (".git/config", ".git/hooks", ".git/info", ".gitmodules", ".mcp.json")


@dataclass(frozen=True)
class Policy:
    """Resolved, existing paths only: Landlock and bind mounts act on what exists."""

    workspace: Path
    writable: tuple[Path, ...]  # the workspace first, then temp folders and the user's extra folders
    denied: tuple[Path, ...]  # neither read nor written (nor listed, under bubblewrap)
    devices: tuple[Path, ...] = ()
    network: bool = True  # may reach the network at all
    proxied: bool = False  # ... only through the agent's proxy (AGENT_NETWORK=proxied): no direct connection
    temp: Path | None = None  # the session's own temp folder (TMPDIR), also in `writable`
    protected: tuple[Path, ...] = ()  # in the workspace, read-only to commands (they need not exist)
    sockets: tuple[Path, ...] = ()  # Unix sockets the user allowed (AGENT_SANDBOX_SOCKETS): then any may be used
    hidden: tuple[Path, ...] = ()  # the home folders and the workspace's parent: read only through `readable`
    # inside `hidden`, what tools need and AGENT_SANDBOX_READABLE; in a shared temp folder, the agent's own files
    readable: tuple[Path, ...] = ()

    @classmethod
    def for_workspace(cls, workspace: Path, settings: Settings) -> Policy:
        """The policy for commands run in `workspace` under `settings` (AGENT_SANDBOX_WRITABLE,
        AGENT_SANDBOX_READABLE, AGENT_NETWORK, the agent's own .env and session folders)."""
        root = workspace.resolve()
        homes = _existing([Path.home(), _account_home()])
        extra = _listed(settings.sandbox_writable)
        secrets = [home / p for home in homes for p in SECRET_PLACES]
        config = Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config") / "deepseek-agent"
        secrets += [settings.env_file, default_env_file(), config, sessions_root(settings.sessions_dir),
                    sessions_root().parent]
        if sys.platform == "win32":  # the low-integrity token labels the user's temp folder writable
            own_temp, temp_folders = None, _existing([tempfile.gettempdir(), os.environ.get("TMPDIR", "")])
        else:
            own_temp = session_temp.folder()
            temp_folders = _existing([own_temp, tempfile.gettempdir(), *TEMP_FOLDERS])
            secrets += TERMINALS
        # Inside a temp folder a denied path would take the reading of new temp files with it (see
        # `landlock.split_grants`): temp folders stay whole, and a sessions folder put there is not hidden.
        denied = [p for p in _existing(secrets) if not (root == p or root.is_relative_to(p))
                  and not any(p.is_relative_to(t) for t in temp_folders)]
        writable = _existing([root, own_temp, *extra] if own_temp else [root, *temp_folders, *extra])
        protected = [root / p for p in PROTECTED]
        if settings.mcp_config:
            protected.append(Path(settings.mcp_config).expanduser().resolve())
        # a home folder that is the workspace (or inside a writable folder) is the user's choice to share
        hidden = [h for h in [*homes, *_beside(root, homes)] if not any(h.is_relative_to(w) for w in writable)]
        interpreter = _existing(_interpreter())
        readable = [home / p for home in homes for p in READABLE_HOME]
        readable += [*interpreter, *_on_path(hidden), *_listed(settings.sandbox_readable)]
        readable = [p for p in _existing(readable) if _within(p, tuple(hidden))]
        readable += _own_in_shared_temp(interpreter, hidden)
        return cls(workspace=root, writable=tuple(writable), denied=tuple(denied),
                   devices=tuple(_existing(DEVICES)), network=settings.network != "off",
                   proxied=settings.network == "proxied", temp=own_temp,
                   protected=tuple(p for p in protected if p.is_relative_to(root)),
                   sockets=tuple(_existing(_listed(settings.sandbox_sockets))),
                   hidden=tuple(hidden),
                   readable=tuple(readable))

    def temp_environment(self) -> dict[str, str]:
        """TMPDIR, TMP and TEMP as a confined command gets them (nothing where it keeps the system's)."""
        return {name: str(self.temp) for name in ("TMPDIR", "TMP", "TEMP")} if self.temp is not None else {}

    def in_shared_temp(self, path: Path) -> bool:
        """Whether `path` lies in a shared temp folder (/tmp, /var/tmp, /dev/shm) commands may not write."""
        return any(path == Path(t) or path.is_relative_to(t) for t in TEMP_FOLDERS) and not self.may_write(path)

    def may_write(self, path: Path) -> bool:
        return (any(path == w or path.is_relative_to(w) for w in self.writable) and not self.is_denied(path)
                and not self.is_protected(path))

    @property
    def pinned(self) -> tuple[Path, ...]:
        """The folders holding protected paths below the workspace (`.git`), which bind mounts
        pin in place: a mount point cannot be renamed, so `.git` cannot be swapped for a copy."""
        folders = {p.parent for p in self.protected if p.parent != self.workspace and p.parent.is_dir()}
        return tuple(sorted(f for f in folders if not f.is_symlink()))

    def is_protected(self, path: Path) -> bool:
        return any(path == p or path.is_relative_to(p) for p in self.protected)

    def is_denied(self, path: Path) -> bool:
        return any(path == d or path.is_relative_to(d) for d in self.denied)

    def may_read(self, path: Path) -> bool:
        """Whether a confined command may read `path` (resolved)."""
        if self.is_denied(path):
            return False
        return not _within(path, self.hidden) or _within(path, self.readable) or _within(path, self.writable)


def _within(path: Path, folders: tuple[Path, ...]) -> bool:
    return any(path == f or path.is_relative_to(f) for f in folders)


# Folders whose other entries are the system's: a workspace directly inside one keeps its siblings
# readable (hiding /opt would hide the toolchains installed there).
SYSTEM_FOLDERS = ("/", "/usr", "/usr/local", "/opt", "/srv", "/var", "/etc", "/nix", "/snap", "/mnt", "/media")


def _account_home() -> str:
    """The home folder the user account names, which HOME may not be."""
    try:
        import pwd

        return pwd.getpwuid(os.getuid()).pw_dir
    except (ImportError, KeyError):
        return ""


def _beside(root: Path, homes: list[Path]) -> list[Path]:
    """The workspace's parent, whose other entries (sibling projects and their .env) commands may
    not read, unless it is a system folder or a home folder (hidden already)."""
    parent = root.parent
    if str(parent) in SYSTEM_FOLDERS or parent == root or parent in homes:
        return []
    return [parent]


def _own_in_shared_temp(interpreter: list[Path], hidden: list[Path]) -> list[Path]:
    """The agent's own files (`interpreter`) in a shared temp folder, which bubblewrap empties for
    commands: an exe run from /tmp, or unpacked there. Bound back only where no one else can swap
    them for a link to a secret before the sandbox is made (`private_path`), and never a folder that
    holds a hidden one."""
    if sys.platform == "win32":
        return []
    from core.frozen_imports import private_path

    shared = tuple(_existing(TEMP_FOLDERS))
    return [p for p in interpreter if _within(p, shared) and not _within(p, tuple(hidden))
            and private_path(str(p if p.is_dir() else p.parent)) and p.stat().st_uid in (os.geteuid(), 0)
            and not any(h.is_relative_to(p) for h in hidden)]


def _interpreter() -> list[Path]:
    """The Python the agent runs on: commands that call it (tests, `sys.executable`) need it, and so
    does the network door under bubblewrap (core/network/door.py). The exe is its own Python: the
    file, its unpacked runtime (`sys.prefix`) and the extensions it extracted (core/frozen_imports.py)."""
    found = [Path(sys.prefix), Path(sys.base_prefix)]
    if getattr(sys, "frozen", False):
        from core.frozen_imports import usable_cache_root

        cache = usable_cache_root()  # one others could change the exe does not use
        found += [Path(sys.executable), *([cache] if cache is not None else [])]
    return found


def _on_path(hidden: list[Path]) -> list[Path]:
    """The folders on PATH inside a hidden folder (~/bin, a pyenv shim folder), not the folder itself:
    what the user's shell runs, commands must find."""
    found = []
    for entry in os.environ.get("PATH", "").split(os.pathsep):
        path = Path(entry).expanduser()
        if entry and path.is_absolute() and any(path != h and path.is_relative_to(h) for h in hidden):
            found.append(path)
    return found


def _listed(setting: str) -> list[str]:
    """The paths of an os.pathsep-separated setting, with ~ expanded."""
    return [os.path.expanduser(p.strip()) for p in setting.split(os.pathsep) if p.strip()]


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
