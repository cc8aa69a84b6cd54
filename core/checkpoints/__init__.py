"""Checkpoints of the workspace: what the agent changed, shown by /diff and put back by /undo."""

from core.checkpoints.ledger import CHECKPOINT, UNDO, Checkpoints, UndoPlan

__all__ = ["CHECKPOINT", "UNDO", "Checkpoints", "UndoPlan"]
