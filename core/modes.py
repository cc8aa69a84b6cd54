"""The approval modes: what the agent asks before it acts.

- `auto`: commands run confined by the kernel's sandbox, unasked; a command the sandbox blocked may
  run again outside it after a yes; only what no sandbox stops asks (the workspace's own git history,
  work git would discard, remote refs). The default where a sandbox works.
- `ask`: known read-only commands and the workspace's allow rules run; everything else asks. The
  default where no sandbox works (Windows today, old kernels, --no-sandbox).
- `yes`: every question of the gate is answered yes (--yes). Commands are still confined where a
  sandbox works, and leaving it is never the mode's to answer (core/agent/approvals.py).
"""

from __future__ import annotations

from core.config import ConfigError, Settings
from core.i18n import _
from core.sandbox import probe

AUTO, ASK, YES = "auto", "ask", "yes"
MODES = (AUTO, ASK, YES)


def default_mode(sandboxed: bool, yes: bool) -> str:
    return YES if yes else AUTO if sandboxed else ASK


def resolve_mode(settings: Settings) -> str:
    """The mode asked for (AGENT_MODE, --mode, --yes), else the default for this machine. `auto`
    where no sandbox works is a ConfigError that says why there is none."""
    sandbox = probe(settings.sandbox, settings.network)
    if settings.mode == AUTO and not sandbox.active:
        raise ConfigError(_("the auto mode runs commands in a sandbox, and none works here ({reason}); use "
                            "--mode ask, or --yes").format(reason=_(sandbox.reason)))
    # The Windows token keeps writes in but reads and the network open: it is not enough to run
    # commands unasked by default, only when the user asks for auto.
    return settings.mode or default_mode(sandbox.active and sandbox.backend != "wintoken", yes=False)
