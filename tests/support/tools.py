"""A tool context for calling the tools directly, without an agent or a model."""

from __future__ import annotations

from pathlib import Path

from core.cancel import Cancel
from core.checkpoints import Checkpoints
from core.protocol import discard
from core.tools.base import ToolContext
from core.tools.workspace import Workspace
from tests.conftest import make_settings


def tool_context(root: Path, approve: bool = False, checkpoints: Checkpoints | None = None) -> ToolContext:
    """The tools' context for workspace `root`; every question is answered yes when `approve`, else no."""
    return ToolContext(workspace=Workspace(root), settings=make_settings("http://127.0.0.1:1"),
                       emit=discard, approve=lambda what, why: None if approve else "the user said no",
                       cancel=Cancel(), checkpoints=checkpoints)
