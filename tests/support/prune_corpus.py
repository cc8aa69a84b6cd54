"""The pruner's corpus, one layout for every case: `tests/corpus/prune/<set>/<case>/` holds `cmd.txt`,
`exit_code.txt`, `output.txt` (the exact bytes) and, in a labelled set, `must_keep.txt`. The sets:
`cases` (labelled, made by generate.py), `families` (generate_families.py) and `general`
(generate_general.sh). The shared benchmark's corpus has the same layout, so this reads it too."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from tests.support.paths import TESTS

CORPUS = TESTS / "corpus" / "prune"
SETS = ("cases", "families", "general")


@dataclass(frozen=True)
class Case:
    folder: Path

    @property
    def name(self) -> str:
        return self.folder.name

    @property
    def output(self) -> bytes:
        return (self.folder / "output.txt").read_bytes()

    @property
    def command(self) -> str:
        return (self.folder / "cmd.txt").read_text(encoding="utf-8").strip()

    @property
    def exit_code(self) -> int:
        return int((self.folder / "exit_code.txt").read_text())

    @property
    def must_keep(self) -> list[str]:
        """The labelled lines; a set without labels has none."""
        labels = self.folder / "must_keep.txt"
        if not labels.exists():
            return []
        return [line for line in labels.read_text(encoding="utf-8").split("\n") if line.strip()]


def cases(where: str | Path) -> list[Case]:
    """Every case of a set (by its name here, or any folder in this layout), by name."""
    folder = CORPUS / where if isinstance(where, str) else where
    return [Case(p.parent) for p in sorted(folder.glob("*/output.txt"))]


def case(where: str, name: str) -> Case:
    return Case(CORPUS / where / name)
