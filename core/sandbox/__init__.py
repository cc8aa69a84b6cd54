"""Kernel confinement for the commands the agent runs: Landlock, else bubblewrap, else none.

    probe(settings.sandbox).describe()                       # which sandbox, what it enforces
    confinement = Confinement.for_workspace(workspace, settings)  # per command; None: no sandbox
    with confine(argv, confinement) as launch:
        Popen(launch.argv, **kwargs, **launch.popen_kwargs)
    sandbox_denial(output, exit_code, confinement.policy)    # was a failure the sandbox's doing?
"""

from core.sandbox.blocked import Blocked, sandbox_denial
from core.sandbox.launch import Confinement, Launch, confine
from core.sandbox.policy import Policy
from core.sandbox.probe import SandboxInfo, probe

__all__ = ["Blocked", "Confinement", "Launch", "Policy", "SandboxInfo", "confine", "probe", "sandbox_denial"]
