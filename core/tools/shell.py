"""Running shell commands (in the shell `core.tools.shells` chooses): a clean environment, output
decoded as the console would show it, and a whole process tree killed on timeout or interrupt."""

from __future__ import annotations

import dataclasses
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from core import protocol as ev
from core.cancel import Cancel
from core.console import OutputDecoder, console_encoding
from core.i18n import _
from core.network.proxy import direct_note, refusal_note
from core.sandbox import Confinement, confine, sandbox_denial
from core.sandbox.blocked import how_to_allow
from core.sandbox.protected import Snapshot
from core.sandbox.reaper import become_subreaper, end_adopted
from core.secrets import EnvPolicy, scrub_env
from core.session.items import ToolOutcome
from core.tools.base import Printed, ToolContext, ToolError, ToolResult
from core.tools.safety import NOT_KNOWN_READ_ONLY, Question, command_question
from core.tools.shells import detect_shell

# Keeps memory bounded for commands that print gigabytes; the archive on disk keeps every byte.
MAX_CAPTURE_BYTES = 32 * 1024 * 1024
KILL_GRACE_SECONDS = 2.0
BACKGROUND_GRACE_SECONDS = 0.5
# Process groups whose background jobs outlived their command; killed when the session closes.
_lingering: set[int] = set()  # POSIX: process groups of background jobs to end with the session
_lingering_jobs: list[Any] = []  # Windows: their Job Objects (core.tools.winjob)
_subreaper = False  # whether this process adopts its orphaned descendants yet (Linux)


@dataclass
class ShellRun:
    output: bytes  # stdout and stderr interleaved, as a terminal would show them
    exit_code: int | None  # None when killed
    duration: float
    timed_out: bool = False
    interrupted: bool = False
    truncated_bytes: int = 0  # bytes left out of `output` (they are in the archive)
    background: bool = False  # a background job still runs (stopped when the session ends)
    holds_output: bool = False  # ... and holds the output pipe: what it prints later is not captured
    reverted: tuple[str, ...] = ()  # protected files of the workspace the command changed, put back


def child_env(policy: EnvPolicy | None = None) -> dict[str, str]:
    """The child's environment: the user's, minus secrets (`policy`), with pagers and prompts disabled.

    On Windows a Python child writes to a pipe in the ANSI code page (cp1252 cannot even hold
    Chinese): it is told to write UTF-8."""
    env = scrub_env(os.environ, policy)
    env.update({"PAGER": "cat", "GIT_PAGER": "cat", "GIT_TERMINAL_PROMPT": "0"})
    if sys.platform == "win32":
        env.setdefault("PYTHONIOENCODING", "utf-8")
    return env


def run_command(command: str, cwd: Path, timeout: float, cancel: Cancel,
                sink: BinaryIO | None = None, on_output: Callable[[bytes], None] | None = None,
                env_policy: EnvPolicy | None = None, confinement: Confinement | None = None) -> ShellRun:
    """Run `command` in the platform shell, inside `confinement` when given; every byte also goes
    to `sink` (the output archive)."""
    shell = detect_shell(cwd)
    _adopt_orphans()
    kwargs: dict = {}
    if sys.platform == "win32":
        # A console of its own, never shown: a child that opens CONIN$/CONOUT$ (a password prompt,
        # `pause`, a progress bar drawn on the screen buffer) cannot take the user's keystrokes or
        # draw over the agent's screen; it waits unseen until the time limit or Esc ends it.
        kwargs["creationflags"] = subprocess.CREATE_NEW_PROCESS_GROUP | subprocess.CREATE_NO_WINDOW
    else:
        kwargs["start_new_session"] = True  # its own process group: the whole tree can be killed
    start = time.monotonic()
    before = Snapshot.take(confinement.policy.workspace, confinement.policy.protected) if confinement else None
    door = None
    with shell.invocation(command) as argv:
        try:
            with confine(argv, confinement) as launch:  # a Landlock ruleset is needed only until the fork
                door = launch.door
                proc = launch.popen(launch.argv, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                        stderr=subprocess.STDOUT, env=launch.environment(child_env(env_policy)), **kwargs,
                                        **launch.popen_kwargs)
            if door is not None:  # the way out of the command's own network namespace
                door.open(wait=confinement is not None and confinement.info.backend == "bwrap")
            run = _collect(proc, _job_of(proc), start, timeout, cancel, sink, on_output)
        except subprocess.SubprocessError:  # the child could not enter the sandbox: nothing ran
            raise ToolError("the command did not run: it could not enter the sandbox; the user can run commands "
                            "unconfined with --no-sandbox") from None
        finally:
            if door is not None:
                door.close()
    if before is not None:
        run.reverted = tuple(before.restore())
    return run


def _adopt_orphans() -> None:
    """Once per process: descendants that leave their command's session (`setsid`, a double fork)
    become the agent's children, so `kill_lingering` can end them with the session."""
    global _subreaper
    if not _subreaper:
        _subreaper = True
        become_subreaper()


def _job_of(proc: subprocess.Popen) -> Any:
    """On Windows, the Job Object holding the command's whole tree (None elsewhere, or when
    Windows refuses one: then `taskkill /T` is the fallback)."""
    if sys.platform != "win32":
        return None
    from core.tools.winjob import Job

    try:
        job = Job()
    except OSError:
        return None
    if job.add(proc):
        return job
    job.close()
    return None


def _collect(proc: subprocess.Popen, job: Any, start: float, timeout: float, cancel: Cancel,
             sink: BinaryIO | None, on_output: Callable[[bytes], None] | None) -> ShellRun:
    """Read the command's output until it ends (or is killed); see `run_command`."""
    captured = bytearray()
    dropped = 0
    lock = threading.Lock()
    finished = False  # set once the command is over: later output (from background jobs) is drained unseen

    def pump() -> None:
        nonlocal dropped
        assert proc.stdout is not None
        for chunk in iter(lambda: proc.stdout.read1(65536), b""):  # type: ignore[union-attr]
            with lock:
                if finished:
                    continue  # keep reading so a background job never blocks on a full pipe
                if sink is not None:
                    sink.write(chunk)
                room = max(MAX_CAPTURE_BYTES - len(captured), 0)
                captured.extend(chunk[:room])
                dropped += max(0, len(chunk) - room)
                if on_output is not None:
                    on_output(chunk)

    reader = threading.Thread(target=pump, daemon=True)
    reader.start()
    timed_out = False
    with cancel.on_cancel(lambda: kill_tree(proc, block=False, job=job)):
        try:
            timed_out = not _wait(proc, timeout, cancel)
            if timed_out:
                kill_tree(proc, job=job)
        except KeyboardInterrupt:
            cancel.cancel()
            kill_tree(proc, job=job)
    proc.wait()
    # A background job the command started (`server &`) may hold the pipe open: don't wait for it.
    reader.join(timeout=BACKGROUND_GRACE_SECONDS)
    with lock:
        finished = True
        output = bytes(captured)
    holds_output = reader.is_alive()
    # A job whose output goes elsewhere (`server > log 2>&1 &`) holds no pipe but still runs.
    background = holds_output or (job.active() > 0 if job is not None else
                                  sys.platform != "win32" and _signal_group(proc.pid, 0))
    if background:
        if job is not None:
            _lingering_jobs.append(job)
        else:
            _lingering.add(proc.pid)
    elif job is not None:
        job.close()
    if sink is not None:
        sink.flush()
    killed = timed_out or cancel.cancelled
    return ShellRun(output=output, exit_code=None if killed else proc.returncode,
                    duration=time.monotonic() - start, timed_out=timed_out, interrupted=cancel.cancelled,
                    truncated_bytes=dropped, background=background, holds_output=holds_output)


def _wait(proc: subprocess.Popen, timeout: float, cancel: Cancel) -> bool:
    """Wait for the process in short slices (Windows cannot interrupt a long wait with Ctrl-C);
    False on timeout. `Popen.wait` polls from half a millisecond up, so a quick command is seen
    to end at once rather than at the end of a slice."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            proc.wait(timeout=max(0.0, min(0.05, deadline - time.monotonic())))
            return True
        except subprocess.TimeoutExpired:
            pass
        if cancel.cancelled:
            return True
        if time.monotonic() >= deadline:
            return False


def end_turn_orphans(grace: float = BACKGROUND_GRACE_SECONDS) -> int:
    """End what the turn's commands left running outside their own jobs (`setsid`, a double fork,
    a cleared environment): those end with the turn. Background jobs a command started in its own
    process group (`server &`) are kept until the session closes. Returns how many were ended."""
    return end_adopted(grace, keep_groups=frozenset(_lingering)) if _subreaper else 0


def kill_lingering(grace: float = BACKGROUND_GRACE_SECONDS) -> None:
    """End the background jobs commands left running (called when the session closes): SIGTERM,
    then SIGKILL for those still there after `grace` seconds (a job may ignore SIGTERM); and the
    descendants that left their command's session (see `_adopt_orphans`)."""
    groups = set(_lingering)
    _lingering.clear()
    while _lingering_jobs:
        job = _lingering_jobs.pop()
        job.terminate()
        job.close()
    if sys.platform == "win32":
        for pid in groups:
            subprocess.run(["taskkill", "/T", "/F", "/PID", str(pid)], capture_output=True, check=False)
        return
    alive = {pid for pid in groups if _signal_group(pid, signal.SIGTERM)}
    deadline = time.monotonic() + grace
    while alive and time.monotonic() < deadline:
        time.sleep(0.05)
        alive = {pid for pid in alive if _signal_group(pid, 0)}
    for pid in alive:
        _signal_group(pid, signal.SIGKILL)
    if _subreaper:
        end_adopted(grace)


def _signal_group(pgid: int, sig: int) -> bool:
    """Send `sig` to a process group; False when the group is gone (0 only asks whether it exists)."""
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        return False
    return True


def kill_tree(proc: subprocess.Popen, block: bool = True, job: Any = None) -> None:
    """Terminate the process and everything it started; SIGKILL after a short grace period.

    `block=False` (from `Cancel.cancel()`, which must return at once, e.g. on a TUI's event loop)
    sends SIGTERM and leaves the SIGKILL to a timer. On Windows the command's Job Object ends the
    whole tree at once, `taskkill /T` where there is none."""
    if job is not None:
        job.terminate()
        return
    if sys.platform == "win32":
        if proc.poll() is None:
            subprocess.run(["taskkill", "/T", "/F", "/PID", str(proc.pid)], capture_output=True, check=False)
        return
    if not _signal_group(proc.pid, signal.SIGTERM):
        return
    if not block:
        timer = threading.Timer(KILL_GRACE_SECONDS, _signal_group, (proc.pid, signal.SIGKILL))
        timer.daemon = True
        timer.start()
        return
    try:
        proc.wait(timeout=KILL_GRACE_SECONDS)
    except subprocess.TimeoutExpired:
        pass
    _signal_group(proc.pid, signal.SIGKILL)


def run_shell(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
    """The `run_shell` tool: approval for destructive commands, then run and archive; its result
    declares what the command printed, for the finish step to prune."""
    command: str = args["command"]
    if not command.strip():
        raise ToolError("command is empty")
    confinement = Confinement.for_workspace(ctx.workspace.root, ctx.settings)
    if confinement is not None and confinement.policy.proxied and ctx.network is not None:
        confinement = dataclasses.replace(confinement, proxy=ctx.network.proxy())
    question = command_question(command, ctx.workspace.root, ctx.mode,
                                policy=confinement.policy if confinement else None, allowed=ctx.allowed,
                                cancel=ctx.cancel)
    if ctx.cancel.cancelled:
        return ToolResult("interrupted by the user before it ran", status="error", outcome=ToolOutcome(command=command))
    if question is not None and question.kind == "unconfined":
        refusal = (ctx.approve_unconfined or ctx.approve)(
            _("run outside the sandbox: {command}").format(command=command),
            _("the sandbox would block it: {why}").format(why=_(question.reason)))
        if refusal is None:
            confinement = None
    else:
        refusal = ctx.approve(_("run: {command}").format(command=command), question.reason) if question else None
    if refusal is not None:
        allow = (how_to_allow(question.paths, (), confinement.policy) + " "
                 if question is not None and question.kind == "unconfined" and confinement else "")
        return ToolResult(_("refused: {because} and was not approved ({refusal}). {allow}Find a narrower, reversible "
                            "way, or ask the user to run it themselves.").format(
                              because=_refused_because(question, ctx.mode), refusal=refusal, allow=allow),
                          status="refused", outcome=ToolOutcome(command=command))
    # The model may ask for less time, never more than the user allows (AGENT_SHELL_TIMEOUT).
    timeout = min(max(float(args.get("timeout") or ctx.settings.shell_timeout), 1.0), ctx.settings.shell_timeout)
    decided = len(confinement.proxy.decisions) if confinement and confinement.proxy else 0
    run, output, archive_id, dropped = _execute(command, ctx, timeout, confinement)
    network_note = _network_note(confinement, decided, output, run.exit_code)
    blocked = sandbox_denial(output, run.exit_code, confinement.policy) if confinement else None
    sandbox_note = ""
    if blocked is not None:
        approve = ctx.approve_unconfined or ctx.approve
        refusal = approve(_("run outside the sandbox: {command}").format(command=command),
                          _("the sandbox blocked {what}").format(what=blocked.describe()))
        if refusal is None:
            run, output, archive_id, dropped = _execute(command, ctx, timeout, None)
            sandbox_note = (f"[the sandbox blocked {blocked.describe(str)}; the user allowed running it outside "
                            "the sandbox, and this is the output of that second run]\n")
        else:
            sandbox_note = "[" + _("blocked by the sandbox: {what} is outside what commands may touch (they write only "
                                   "in the workspace and the session's temp folder, $TMPDIR, and never read secrets). "
                                   "Running it outside the sandbox was not approved: {refusal}. {how}").format(
                what=blocked.describe(), refusal=refusal,
                how=how_to_allow(blocked.kept_out, blocked.actions, confinement.policy)) + "]\n"
    head = sandbox_note + network_note
    if run.timed_out:
        head = (f"timed out after {timeout:.0f} s; the process tree was killed. Nothing can type into a command: "
                "if it waited for an answer (a prompt, a password, a pager), give it with a flag or on stdin\n" + head)
    elif run.interrupted:
        head = "interrupted by the user; the process tree was killed\n" + head
    tail = ""
    if run.holds_output:
        tail += ("\n[a background job is still running and holds the output; what it prints from now on is "
                 "not captured: redirect it to a file (`cmd > log 2>&1 &`) to read it later. It is stopped when "
                 "the session ends]")
    elif run.background:
        tail += "\n[a background job is still running; it is stopped when the session ends]"
    if run.reverted:
        tail += (f"\n[the sandbox put back {', '.join(run.reverted)}: commands may not change what the user's git "
                 "or the next session runs (.git/config, .git/hooks, .git/info, .gitmodules, .mcp.json); "
                 "ask the user to make that change]")
    if run.truncated_bytes:
        tail += f"\n[{run.truncated_bytes:,} more bytes were not kept in memory" + (
            f"; read them with read_output id={archive_id}]" if archive_id else "]")
    if dropped:
        tail += f"\n[output archive: {dropped}]"
    status = "ok" if run.exit_code == 0 else "error"
    # What it printed is pruned by the finish step (core/agent/results.py), between the notes.
    printed = Printed(len(head), len(head) + len(output), command, run.exit_code, archive_id or "")
    return ToolResult(head + output + tail, status=status, printed=printed, outcome=ToolOutcome(
        command=command, exit_code=run.exit_code, archive=archive_id or "",
        sandbox=confinement.info.backend if confinement else "none",
        sandbox_blocked=blocked.describe() if blocked is not None else ""))


def _network_note(confinement: Confinement | None, decided: int, output: str, exit_code: int | None) -> str:
    """What the model must know of the proxied network after a command: the hosts the proxy
    refused it (an HTTPS client shows only "403"), or, when it failed on a direct connection or a
    name lookup, that only the proxy leads out."""
    if confinement is None or not confinement.policy.proxied:
        return ""
    note = refusal_note(confinement.proxy.decisions_since(decided)) if confinement.proxy is not None else ""
    if not note and exit_code != 0:
        note = direct_note(output)
    return f"[network: {note.strip()}]\n" if note else ""


def _refused_because(question: Question | None, mode: str) -> str:
    if question is None:
        return _("the command")
    if question.reason == NOT_KNOWN_READ_ONLY:
        return _("in the {mode} mode only known read-only commands and the user's allow rules run unasked").format(
            mode=mode)
    if question.kind == "unconfined":
        return _("the sandbox would block this command ({why}: commands write only in the workspace and the "
                 "session's temp folder, $TMPDIR), running it outside the sandbox").format(why=_(question.reason))
    return _("this command looks destructive ({why})").format(why=_(question.reason))


def _execute(command: str, ctx: ToolContext, timeout: float,
             confinement: Confinement | None) -> tuple[ShellRun, str, str | None, str | None]:
    """Run the command with its output archived and shown live: (run, decoded output, archive id,
    the archive's notice of older outputs it removed)."""
    archive_id = ctx.archive.new_id() if ctx.archive is not None else None
    live = _LiveOutput(ctx)
    with (ctx.archive.writer(archive_id) if archive_id else nullcontext()) as sink:
        run = run_command(command, ctx.workspace.root, timeout, ctx.cancel, sink=sink, on_output=live,
                          env_policy=EnvPolicy.parse(ctx.settings.env_keep, ctx.settings.env_drop),
                          confinement=confinement)
    live.flush(final=True)
    dropped = getattr(sink, "notice", None)  # older archives removed to respect the size cap
    if dropped:
        ctx.emit(ev.Notice(kind="info", message=_("output archive: {notice}").format(notice=_(dropped))))
    return run, OutputDecoder(console_encoding()).decode(run.output, final=True), archive_id, dropped


class _LiveOutput:
    """Forwards a running command's output to the UI, at most a few times a second.

    Emitted from the reader thread, or from a timer thread when output stops arriving: what was
    held back is shown within INTERVAL, not when the command next prints. Bytes are decoded
    incrementally, so a character split across two reads is not shown as two U+FFFD; an escape
    sequence split across reads is held back until it is complete (the sanitiser then drops it)."""

    INTERVAL = 0.2
    _OPEN_ESCAPE = re.compile(r"\x1b(?:\[[0-?]*[ -/]*|\][^\x07\x1b]*|[()])?$")

    def __init__(self, ctx: ToolContext) -> None:
        self._ctx = ctx
        self._decoder = OutputDecoder(console_encoding())
        self._pending = ""
        self._last = 0.0
        self._lock = threading.Lock()
        self._timer: threading.Timer | None = None

    def __call__(self, chunk: bytes) -> None:
        with self._lock:
            self._pending += self._decoder.decode(chunk)
            wait = self.INTERVAL - (time.monotonic() - self._last)
            if wait > 0:
                if self._timer is None:
                    self._timer = threading.Timer(wait, self.flush)
                    self._timer.daemon = True
                    self._timer.start()
                return
        self.flush()

    def flush(self, final: bool = False) -> None:
        with self._lock:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
            text = self._pending + (self._decoder.decode(b"", final=True) if final else "")
            held = "" if final else (match.group() if (match := self._OPEN_ESCAPE.search(text)) else "")
            text, self._pending = text[:len(text) - len(held)], held
            if not text:
                return
            self._last = time.monotonic()
            self._ctx.emit(ev.ToolOutput(call_id=self._ctx.call_id, text=text))
