"""Terminal-output pruner: what a command printed, cut down to what the model needs.

`prune()` cleans the output (escapes, progress redraws, giant lines), recognises the tool from the
command line and the text, and applies that tool family's rules: aggressive on success (summaries
only), faithful on failure (every error, failing test, location and summary line verbatim).
"""

from core.prune.pipeline import Pruned, prune

__all__ = ["Pruned", "prune"]
