"""What the user allowed for a workspace, for good: "always allow `pytest` here".

Kept in the agent's data folder (one small JSON file per workspace, named by a hash of its path),
never in the repository: a cloned project cannot allow itself anything. A rule is a command prefix
in words: `pytest` allows `pytest -x tests/`, `npm run` allows `npm run build`. A line is allowed
when each of its commands starts with a rule's words.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from pathlib import Path

from core.i18n import _
from core.private import make_folder
from core.tools.cmdline import PARSERS, Unparsed

# Tools whose first word says little: the rule offered for them keeps the subcommand too.
_UMBRELLAS = {"git", "npm", "npx", "pnpm", "yarn", "cargo", "go", "uv", "pip", "pip3", "docker", "kubectl",
              "dotnet", "make", "bundle", "poetry", "gradle", "mvn"}


class AllowRules:
    """The allow rules of one workspace. Thread-safe; every change is written at once."""

    def __init__(self, data_dir: Path | None, workspace: Path, extra: tuple[str, ...] = ()) -> None:
        self.workspace = workspace
        self.extra = tuple(" ".join(rule.split()) for rule in extra if rule.strip())  # --allow: this run only
        self.path = None
        if data_dir is not None:
            key = hashlib.sha256(str(workspace.resolve()).encode("utf-8", "surrogatepass")).hexdigest()[:16]
            self.path = data_dir / "allow" / f"{key}.json"
        self._lock = threading.Lock()
        self.commands: list[str] = self._load("commands")
        self.hosts: list[str] = self._load("hosts")  # hosts commands may reach (core/network/session.py)

    def _load(self, key: str) -> list[str]:
        if self.path is None:
            return []
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return []
        rules = data.get(key) if isinstance(data, dict) else None
        return [r for r in rules if isinstance(r, str) and r.strip()] if isinstance(rules, list) else []

    def add(self, rule: str, kind: str = "commands") -> str | None:
        """Remember `rule` (a command prefix, or with `kind` "hosts" a host); a sentence when it could
        not be saved (it still holds for this run)."""
        rule = " ".join(rule.split())
        with self._lock:
            kept = self.hosts if kind == "hosts" else self.commands
            if rule and rule not in kept:
                kept.append(rule)
            if self.path is None:
                return None
            try:
                make_folder(self.path.parent)
                tmp = self.path.with_suffix(f".{os.getpid()}.tmp")
                tmp.write_text(json.dumps({"workspace": str(self.workspace), "commands": self.commands,
                                           **({"hosts": self.hosts} if self.hosts else {})},
                                          ensure_ascii=False, indent=1), encoding="utf-8")
                os.replace(tmp, self.path)
            except OSError as exc:
                return _("the rule holds for this run only: {path} could not be written ({error})").format(
                    path=self.path, error=exc.strerror or exc)
        return None

    def allows(self, command: str, dialect: str) -> bool:
        """Every command of the line starts with the words of a rule."""
        if not self.commands and not self.extra:
            return False
        try:
            simples = PARSERS[dialect](command)
        except Unparsed:
            return False
        rules = [rule.split() for rule in (*self.commands, *self.extra)]
        for simple in simples:
            words = [w.literal for w in simple.words]
            if not words or any(w is None for w in words[:max(map(len, rules))]):
                return False
            if not any(words[:len(rule)] == rule for rule in rules):
                return False
        return bool(simples)


def rule_for(command: str, dialect: str) -> str | None:
    """The rule "always allow" offers for a command line: its first command's name (with the
    subcommand for umbrella tools such as `npm run`); None when the line has no plain name."""
    try:
        simples = PARSERS[dialect](command)
    except Unparsed:
        return None
    lines = [[w.literal for w in s.words] for s in simples if s.words]
    names = {words[0] for words in lines}
    if len(names) != 1 or None in names:
        return None  # several programs, or a name only known when it runs: no one rule names them
    (name,) = names
    subs = {words[1] if len(words) > 1 else None for words in lines}
    if name in _UMBRELLAS and len(subs) == 1:
        (sub,) = subs
        if sub and not sub.startswith("-"):
            return f"{name} {sub}"
    return name
