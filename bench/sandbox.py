"""Sandbox overhead, and what still runs: a command confined against the same command unconfined
and against the filesystem rules alone, in one run; then ordinary work and the blocked set counted.

Run from the repository root: `python3 -m bench.sandbox [--runs 40] [--command "true"]`. Each cost
row is the median wall time of `--runs` runs of `run_command` (the shell, its pipes and its reaping
included), the runs of every row interleaved so the machine's load falls on all alike. Each backend
has two rows: with the network open (`AGENT_NETWORK=on`, as before the proxy) and proxied (the
default: a network namespace with the proxy's door); then the proxy's cost per connection
(`bench.proxy`). "files only"
is Landlock's filesystem rules without the layers around them (the seccomp filter, the mount
namespace with the protected files bound read-only, and their check-and-restore): the sandbox as it
was before those layers, the baseline the full sandbox must stay within 2x of. The set-up row is
building the Landlock ruleset alone, which every confined command pays before its fork.

Then, per backend: how many of the ordinary tasks (tests/support/ordinary_work.py) the gate lets
run unasked in `auto` and succeed confined, and how many of the blocked set (a Unix socket of the
bench's own, prlimit/renice/taskset on a process of its own, the shared /tmp, the workspace's
.git/config and hooks) the sandbox refused.
"""

from __future__ import annotations

import argparse
import dataclasses
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # runs as `python3 bench/sandbox.py` and as `python3 -m bench.sandbox`

from bench.measurements import recorded
from bench.proxy import connection_costs
from core.cancel import Cancel
from core.config import load_settings
from core.network.hosts import HostRules
from core.network.proxy import Proxy
from core.sandbox import Confinement, landlock, mountns, probe, seccomp
from core.tools.safety import command_question
from core.tools.shell import run_command
from tests.support.ordinary_work import ORDINARY_WORK


def _median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


def _timed(action: Callable[[], object]) -> float:
    start = time.perf_counter()
    action()
    return time.perf_counter() - start


def _build_ruleset(confinement: Confinement) -> None:
    with landlock.ruleset(confinement.policy, confinement.info.abi):
        pass


@contextmanager
def _files_only() -> Iterator[None]:
    """Landlock without the seccomp filter and the mount namespace, for the baseline row."""
    installer, available = seccomp.installer, mountns.available
    seccomp.installer = lambda *_a, **_k: None  # type: ignore[assignment]
    mountns.available = lambda *_a, **_k: False  # type: ignore[assignment]
    try:
        yield
    finally:
        seccomp.installer, mountns.available = installer, available


def _run(command: str, workspace: Path, confinement: Confinement | None, files_only: bool = False) -> object:
    if files_only:
        with _files_only():
            return run_command(command, workspace, 30, Cancel(), confinement=confinement)
    return run_command(command, workspace, 30, Cancel(), confinement=confinement)


def _costs(workspace: Path, command: str, runs: int, proxy: Proxy) -> None:
    rows: dict[str, tuple[Confinement | None, bool]] = {"unconfined": (None, False)}
    for backend in ("landlock", "bwrap"):
        if probe(backend).backend == backend:
            confinement = Confinement.for_workspace(workspace, load_settings(
                environ={"AGENT_SANDBOX": backend, "AGENT_NETWORK": "on"}))
            if backend == "landlock":
                assert confinement is not None
                rows["files only"] = (dataclasses.replace(confinement, policy=dataclasses.replace(
                    confinement.policy, protected=())), True)
            rows[backend] = (confinement, False)
            rows[f"{backend} proxied"] = (Confinement.for_workspace(workspace, load_settings(
                environ={"AGENT_SANDBOX": backend}), proxy), False)
        else:
            print(f"{backend}: not available here ({probe(backend).describe()})")
    samples: dict[str, list[float]] = {name: [] for name in rows}
    setup: list[float] = []
    for _ in range(runs):
        for name, (confinement, files_only) in rows.items():
            samples[name].append(_timed(lambda c=confinement, f=files_only: _run(command, workspace, c, f)))
        landlocked = rows.get("landlock")
        if landlocked is not None and landlocked[0] is not None:
            setup.append(_timed(lambda c=landlocked[0]: _build_ruleset(c)))
    base = _median_ms(samples["unconfined"])
    print(f"`{command}` through run_command, median of {runs} runs:")
    for name, values in samples.items():
        ms = _median_ms(values)
        print(f"  {name:<16} {ms:7.2f} ms   x{ms / base:5.2f}   (+{ms - base:5.2f} ms)")
    if "files only" in samples and "landlock" in samples:
        ratio = _median_ms(samples["landlock"]) / _median_ms(samples["files only"])
        print(f"  landlock with every layer against files only: x{ratio:.2f} (must stay within x2)")
    for backend in ("landlock", "bwrap"):
        if backend in samples:
            ratio = _median_ms(samples[f"{backend} proxied"]) / _median_ms(samples[backend])
            print(f"  {backend} proxied against network on: x{ratio:.2f}")
    if setup:
        print(f"  Landlock ruleset set-up alone: {_median_ms(setup):.2f} ms")


def _blocked_set(workspace: Path, outsider: int, sock: Path) -> dict[str, Callable[[], bool]]:
    """Each blocked command, and how to see it did no harm (True: harmless)."""
    config = (workspace / ".git" / "config").read_bytes()
    name = f"bench-sandbox-{outsider}"
    limits = Path(f"/proc/{outsider}/limits").read_text

    def limits_same(before: str = limits()) -> bool:
        return limits() == before

    return {
        f"python3 -c 'import socket; socket.socket(socket.AF_UNIX).connect(\"{sock}\")'": lambda: True,
        f"prlimit --pid {outsider} --nofile=3": limits_same,
        f"renice -n 19 -p {outsider}": lambda: Path(f"/proc/{outsider}/stat").read_text().rsplit(")", 1)[1].split()[16]
        == "0",
        f"taskset -p 1 {outsider}": lambda: True,
        f"echo x > /tmp/{name}": lambda: not Path(f"/tmp/{name}").exists(),
        "git config core.fsmonitor 'touch ran #'": lambda: (workspace / ".git" / "config").read_bytes() == config,
        "echo x > .git/hooks/pre-commit": lambda: not (workspace / ".git" / "hooks" / "pre-commit").exists(),
    }


def _counts() -> None:
    outsider = subprocess.Popen(["sleep", "600"])
    server = socket.socket(socket.AF_UNIX)
    sock = Path(tempfile.mkdtemp(prefix="bench-sandbox-")) / "bench.sock"
    server.bind(str(sock))
    server.listen(8)
    reached: list[bool] = []

    def accept() -> None:
        try:
            server.accept()
            reached.append(True)
        except OSError:
            return  # closed at the end

    threading.Thread(target=accept, daemon=True).start()
    try:
        for backend in ("landlock", "bwrap"):
            if probe(backend).backend != backend:
                continue
            settings = load_settings(environ={"AGENT_SANDBOX": backend})
            workspace = _workspace()
            unasked = ran = 0
            for command in ORDINARY_WORK.values():
                fresh = Confinement.for_workspace(workspace, settings)
                if command_question(command, workspace, "auto", policy=fresh.policy, allowed=lambda *_: False) is None:
                    unasked += 1
                    ran += run_command(command, workspace, 120, Cancel(), confinement=fresh).exit_code == 0
            blocked = _blocked_set(workspace, outsider.pid, sock)
            held = 0
            for command, harmless in blocked.items():
                done = run_command(command, workspace, 30, Cancel(), confinement=Confinement.for_workspace(
                    workspace, settings))
                held += harmless() and not reached and done.exit_code != 0
            shutil.rmtree(workspace.parent, ignore_errors=True)
            print(f"{backend}: ordinary work {ran} of {len(ORDINARY_WORK)} ran unasked in auto "
                  f"({unasked} not asked); blocked set {held} of {len(blocked)} refused "
                  "and harmless")
    finally:
        outsider.kill()
        outsider.wait()
        server.close()
        shutil.rmtree(sock.parent, ignore_errors=True)


def _workspace() -> Path:
    base = Path(tempfile.mkdtemp(prefix="bench-sandbox-", dir=Path.home() / ".cache"))
    workspace = base / "ws"
    workspace.mkdir()
    for args in (["init", "-q"], ["config", "user.name", "b"], ["config", "user.email", "b@b"],
                 ["commit", "-q", "--allow-empty", "-m", "start"]):
        subprocess.run(["git", *args], cwd=workspace, check=True)
    return workspace


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument("--command", default="true")
    args = parser.parse_args()
    workspace = _workspace()
    try:
        with Proxy(HostRules.of()) as proxy:
            _costs(workspace, args.command, args.runs, proxy)
    finally:
        shutil.rmtree(workspace.parent, ignore_errors=True)
    connection_costs(args.runs * 5)
    _counts()


if __name__ == "__main__":
    with recorded("sandbox", "Sandbox: the cost of a command, confined against unconfined; what still runs"):
        main()
