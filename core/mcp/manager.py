"""The MCP servers of one session: started, watched, restarted once, stopped, on one event loop.

The SDK is async (anyio) and the agent's core is synchronous threads, so every server lives on
one background thread that runs an anyio event loop with a blocking portal; the agent calls
through small synchronous wrappers that always return (bounded by a timeout, or by the turn's
cancel). A server that fails to start (missing binary, crash, timeout, protocol error) is
`failed` with one line saying why; the others go on. A ready server is pinged, so one that dies
is noticed between calls too; it is restarted once, and its tools answer a clear error until it
is back. The SDK (`mcp`) is imported on that thread, only when there is a server to run: it
costs about a second to import.
"""

from __future__ import annotations

import os
import re
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from core import __version__
from core.cancel import Cancel
from core.i18n import N_, Deferred, _, ngettext
from core.mcp.config import ServerConfig
from core.mcp.sdk import load_client

# (command, args) -> the (command, args) that runs it confined: the sandbox's hook. Trusted
# servers, and every server while there is no sandbox, run as configured.
Confine = Callable[[str, list[str]], tuple[str, list[str]]]

WAITING, STARTING, READY, RESTARTING, FAILED, STOPPED = "waiting", "starting", "ready", "restarting", "failed", "stopped"
HEALTH_INTERVAL = 2.0  # seconds between pings of a ready server
PING_TIMEOUT = 10.0
STOP_TIMEOUT = 6.0  # seconds close() waits for every server to stop (the SDK kills what lingers)
MAX_TOOL_PAGES = 100


class McpUnavailable(Exception):
    """A call could not reach its server; the message is for the model."""


@dataclass(frozen=True)
class McpTool:
    server: str
    name: str
    description: str
    schema: dict[str, Any]
    read_only: bool


@dataclass
class ServerView:
    """A snapshot of one server, for /mcp and the tool list."""

    name: str
    state: str
    reason: str
    transport: str
    source: str
    tools: list[McpTool]
    from_workspace: bool


@dataclass
class _Server:
    config: ServerConfig
    state: str = STARTING
    reason: str = ""
    tools: list[McpTool] = field(default_factory=list)
    session: Any = None
    running: bool = False  # its lifecycle task is alive
    auto_restarts: int = 0
    restart_asked: bool = False
    stopping: bool = False
    scope: Any = None  # the cancel scope of the current attempt
    dead: Any = None  # an anyio.Event set when a call saw the connection close
    settled: threading.Event = field(default_factory=threading.Event)  # the first attempt is over

    def view(self) -> ServerView:
        return ServerView(self.config.name, self.state, self.reason, self.config.transport, self.config.source,
                          list(self.tools), self.config.from_workspace)


class McpManager:
    def __init__(self, servers: list[ServerConfig], log_folder: Path | None = None,
                 confine: Confine | None = None, health_interval: float = HEALTH_INTERVAL) -> None:
        self._servers = {s.name: _Server(s, state=WAITING) for s in servers}
        self._log_folder = log_folder
        self._confine = confine
        self._health_interval = health_interval
        self._portal: Any = None
        self._thread: threading.Thread | None = None
        self._loop_ready = threading.Event()
        self._loop_error = ""
        self._lock = threading.Lock()
        self._queued: list[_Server] = []  # to start once the loop is up (the SDK's import takes a second)
        self._closed = False

    # -- from the agent's threads --------------------------------------------------------------
    def confines(self, config: ServerConfig) -> bool:
        """Whether this stdio server runs in the sandbox (there is one, and it is not `trusted`)."""
        return self._confine is not None and config.transport == "stdio" and not config.trusted

    def outside_the_sandbox(self, config: ServerConfig) -> bool:
        """Whether this stdio server would leave a sandbox that exists: it is marked `trusted`."""
        return self._confine is not None and config.transport == "stdio" and config.trusted

    def start(self, names: list[str]) -> None:
        """Start these servers (those not started yet) in parallel; returns at once."""
        servers = [self._servers[name] for name in names if self._servers[name].state == WAITING]
        for server in servers:
            server.state = STARTING
        with self._lock:
            if self._portal is None:
                self._queued += servers
                self._spawn_loop()
                return
        for server in servers:
            self._portal.start_task_soon(self._run, server)

    def starting(self) -> list[str]:
        return [s.config.name for s in self._servers.values() if s.state in (STARTING, RESTARTING)]

    def wait_started(self, cancel: Cancel | None = None, within: float | None = None) -> None:
        """Block until every starting server is ready or failed (each is bounded by its start
        timeout), the turn is cancelled, or `within` seconds have passed."""
        pending = [s for s in self._servers.values() if s.state in (STARTING, RESTARTING)]
        longest = max((s.config.start_timeout for s in pending), default=0) + 5
        deadline = time.monotonic() + (min(within, longest) if within is not None else longest)
        for server in pending:
            while not server.settled.wait(min(0.1, max(0.0, deadline - time.monotonic()))):
                if time.monotonic() >= deadline or (cancel is not None and cancel.cancelled):
                    return

    def views(self) -> list[ServerView]:
        return [s.view() for s in self._servers.values()]

    def offered_tools(self) -> list[McpTool]:
        """The tools to offer: those of servers that are ready or coming back after a crash."""
        return [t for s in self._servers.values() if s.state in (READY, RESTARTING) for t in s.tools]

    def call(self, server: str, tool: str, arguments: dict[str, Any], cancel: Cancel) -> Any:
        """The server's CallToolResult; McpUnavailable when the server cannot answer."""
        entry = self._servers.get(server)
        if entry is None:
            raise McpUnavailable(f"there is no MCP server named {server!r}")
        if entry.state != READY or entry.session is None:
            raise McpUnavailable(_unavailable(entry))
        future: Future[Any] = self._portal.start_task_soon(self._call, entry, tool, arguments)
        with cancel.on_cancel(future.cancel):
            try:
                return future.result()
            except Exception as exc:
                if future.cancelled():
                    raise McpUnavailable("the call was interrupted by the user") from None
                raise McpUnavailable(_describe(exc)) from None

    def restart(self, name: str) -> str:
        entry = self._servers.get(name)
        if entry is None:
            known = ", ".join(self._servers) or _("none")
            return _("There is no MCP server named {name!r} (configured: {known}).").format(name=name, known=known)
        if entry.state == WAITING:
            return _("{name} has not been allowed to start (it comes from the workspace's .mcp.json).").format(name=name)
        if not self._ensure_loop():
            return _("Cannot restart {name}: {problem}").format(name=name, problem=_(self._loop_error))
        entry.settled.clear()
        entry.auto_restarts = 0
        if entry.running:
            self._portal.call(self._restart_running, entry)
        else:
            entry.stopping = False
            entry.state, entry.reason = STARTING, ""
            self._portal.start_task_soon(self._run, entry)
        entry.settled.wait(entry.config.start_timeout + 5)
        return f"{name}: {state_line(entry.view())}"

    def close(self) -> None:
        """Stop every server and its process tree; returns within STOP_TIMEOUT and a little."""
        with self._lock:
            self._closed = True  # servers still queued never start
            thread = self._thread
        if thread is None:
            return
        self._loop_ready.wait(STOP_TIMEOUT)
        if self._portal is None:
            return
        try:
            self._portal.call(self._stop_all)
            self._portal.call(self._portal.stop, True)
        except Exception:  # the loop is gone already: nothing left to stop
            pass
        if self._thread is not None:
            self._thread.join(2)

    # -- the event loop's thread ---------------------------------------------------------------
    def _ensure_loop(self) -> bool:
        """Start the loop if needed and wait until it runs; False when the SDK cannot be imported."""
        with self._lock:
            self._spawn_loop()
        self._loop_ready.wait()
        return self._portal is not None

    def _spawn_loop(self) -> None:
        """Start the loop's thread, once (the caller holds the lock)."""
        if self._thread is None:
            self._thread = threading.Thread(target=self._thread_main, name="mcp", daemon=True)
            self._thread.start()

    def _thread_main(self) -> None:
        try:
            import anyio
            import anyio.from_thread

            load_client()  # the SDK, imported here and only when needed
        except ImportError as exc:
            self._loop_error = Deferred(N_("the MCP client is not available ({problem})"), problem=str(exc))
            with self._lock:
                queued, self._queued = self._queued, []
            for server in queued:
                self._fail_now(server, self._loop_error)
            self._loop_ready.set()
            return

        async def main() -> None:
            async with anyio.from_thread.BlockingPortal() as portal, anyio.create_task_group() as group:
                with self._lock:
                    self._portal = portal
                    queued, self._queued = ([] if self._closed else self._queued), []
                for server in queued:
                    group.start_soon(self._run, server)
                self._loop_ready.set()
                await portal.sleep_until_stopped()
                group.cancel_scope.cancel()

        try:
            anyio.run(main)
        finally:
            self._loop_ready.set()

    async def _run(self, server: _Server) -> None:
        """One server's life: attempts until it is stopped, fails, or died twice."""
        server.running = True
        try:
            while not server.stopping:
                server.restart_asked = False
                ended, why = await self._attempt(server)
                if server.stopping:
                    break
                if server.restart_asked:
                    continue
                if ended == "error":
                    server.state, server.reason = FAILED, why
                    break
                # It died while ready: once it comes back, twice it stays down.
                if server.auto_restarts >= 1:
                    server.state, server.reason = FAILED, N_("stopped unexpectedly again after a restart")
                    break
                server.auto_restarts += 1
                server.state, server.reason = RESTARTING, N_("it stopped unexpectedly; restarting it")
        finally:
            server.running = False
            server.session = None
            if server.stopping:
                server.state, server.reason = STOPPED, ""
            server.settled.set()

    async def _attempt(self, server: _Server) -> tuple[str, str]:
        """Connect, serve until the connection ends: ("died" | "stopped" | "error", why it was an error)."""
        import anyio

        ready = anyio.Event()
        outcome: dict[str, str] = {}
        server.dead = anyio.Event()
        async with anyio.create_task_group() as group:
            server.scope = group.cancel_scope
            group.start_soon(self._connection, server, ready, outcome)
            with anyio.move_on_after(server.config.start_timeout):
                await ready.wait()
            if not ready.is_set():
                _failed(outcome, Deferred(N_("did not start within {seconds} s"),
                                          seconds=f"{server.config.start_timeout:g}"))
                group.cancel_scope.cancel()
        server.scope = None
        return outcome.get("end", "stopped"), outcome.get("why", "")

    async def _connection(self, server: _Server, ready: Any, outcome: dict[str, str]) -> None:
        from mcp.client.session import ClientSession
        from mcp_types import Implementation

        try:
            async with AsyncExitStack() as stack:
                log = stack.enter_context(self._log(server.config))
                read, write = await stack.enter_async_context(self._transport(server.config, log))
                session = await stack.enter_async_context(
                    ClientSession(read, write, client_info=Implementation(name="deepseek-agent", version=__version__)))
                await session.initialize()
                server.tools = await _list_tools(server.config.name, session)
                server.session = session
                server.state, server.reason = READY, ""
                server.settled.set()
                ready.set()
                outcome["end"] = await self._watch(server, session)
        except Exception as exc:
            _failed(outcome, _describe(exc, server.config))
        finally:
            server.session = None
            ready.set()

    def _transport(self, config: ServerConfig, log: TextIO) -> Any:
        if config.transport == "http":
            from mcp.client.streamable_http import streamable_http_client
            from mcp.shared._httpx_utils import create_mcp_http_client

            return _http(streamable_http_client, create_mcp_http_client, config)
        from mcp.client.stdio import StdioServerParameters, stdio_client

        command, args = config.command, list(config.args)
        if self.confines(config):
            command, args = self._confine(command, args)  # type: ignore[misc]
        return stdio_client(StdioServerParameters(command=command, args=args, env=dict(config.env) or None,
                                                  cwd=config.cwd or None), errlog=log)

    def _log(self, config: ServerConfig) -> TextIO:
        """Where the server's stderr goes: a file in the session folder (else nowhere); the caller closes it."""
        if self._log_folder is not None:
            try:
                self._log_folder.mkdir(parents=True, exist_ok=True)
                return open(self._log_folder / f"{re.sub(r'[^A-Za-z0-9_.-]', '_', config.name)}.log", "a",
                            encoding="utf-8", errors="replace")
            except OSError:
                pass
        return open(os.devnull, "w", encoding="utf-8")

    async def _watch(self, server: _Server, session: Any) -> str:
        """Until the connection ends: "died" when a ping or a call found it closed."""
        import anyio

        while True:
            with anyio.move_on_after(self._health_interval):
                await server.dead.wait()
            if server.dead.is_set():
                return "died"
            try:
                with anyio.fail_after(PING_TIMEOUT):
                    await session.send_ping()
            except TimeoutError:
                continue  # busy, not dead
            except Exception:
                return "died"

    async def _call(self, server: _Server, tool: str, arguments: dict[str, Any]) -> Any:
        import anyio
        from mcp.shared.exceptions import MCPError
        from mcp_types import CONNECTION_CLOSED

        session = server.session
        if session is None:
            raise McpUnavailable(_unavailable(server))
        try:
            with anyio.fail_after(server.config.call_timeout):
                return await session.call_tool(tool, arguments)
        except TimeoutError:
            raise McpUnavailable(f"{server.config.name} did not answer within {server.config.call_timeout:g} s "
                                 "(the server's \"timeout\" setting)") from None
        except MCPError as exc:
            if exc.code == CONNECTION_CLOSED:
                server.dead.set()
                raise McpUnavailable(f"the MCP server {server.config.name} stopped during the call; "
                                     "it is being restarted, try again in a moment") from None
            raise

    async def _restart_running(self, server: _Server) -> None:
        server.restart_asked = True
        server.state, server.reason = RESTARTING, N_("restarting, as asked")
        if server.scope is not None:
            server.scope.cancel()

    async def _stop_all(self) -> None:
        import anyio

        for server in self._servers.values():
            server.stopping = True
            if server.scope is not None:
                server.scope.cancel()
        with anyio.move_on_after(STOP_TIMEOUT):
            while any(s.running for s in self._servers.values()):
                await anyio.sleep(0.05)

    def _fail_now(self, server: _Server, reason: str) -> None:
        server.state, server.reason = FAILED, reason
        server.settled.set()


def _failed(outcome: dict[str, str], why: str) -> None:
    """The attempt ends in an error, unless it ended already (the first end is the one kept)."""
    if "end" not in outcome:
        outcome.update(end="error", why=why)


def _http(client: Any, make_http: Any, config: ServerConfig) -> Any:
    """The streamable HTTP transport, its HTTP client (with the entry's headers) closed with it."""
    from contextlib import asynccontextmanager

    @asynccontextmanager
    async def connect() -> Any:
        async with make_http(headers=dict(config.headers)) as http, client(config.url, http_client=http) as streams:
            yield streams

    return connect()


async def _list_tools(server: str, session: Any) -> list[McpTool]:
    from mcp_types import PaginatedRequestParams

    tools: list[McpTool] = []
    cursor = None
    for _page in range(MAX_TOOL_PAGES):
        page = await session.list_tools(params=PaginatedRequestParams(cursor=cursor) if cursor else None)
        for tool in page.tools:
            annotations = tool.annotations
            tools.append(McpTool(server, tool.name, tool.description or tool.title or "",
                                 dict(tool.input_schema or {"type": "object", "properties": {}}),
                                 bool(annotations is not None and annotations.read_only_hint is True)))
        cursor = page.next_cursor
        if not cursor:
            break
    return tools


def _describe(exc: BaseException, config: ServerConfig | None = None) -> str:
    """One line for a failure, the innermost useful exception of an exception group (in English, shown
    translated; the exception's own words are kept as they are)."""
    while getattr(exc, "exceptions", None):  # an exception group (Python 3.11+, or anyio's backport)
        exc = exc.exceptions[0]  # type: ignore[attr-defined]
    if isinstance(exc, McpUnavailable):
        return str(exc)
    if isinstance(exc, FileNotFoundError) and config is not None and config.transport == "stdio":
        return Deferred(N_("cannot run {command}: no such program (is it installed and on PATH?)"),
                        command=repr(config.command))
    if isinstance(exc, OSError):
        return Deferred(N_("cannot start it: {problem}"), problem=exc.strerror or str(exc))
    name = type(exc).__name__
    if name == "MCPError":
        return Deferred(N_("protocol error: {problem}"), problem=str(exc))
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    if name in ("ConnectError", "ConnectTimeout"):
        if config is None:
            return Deferred(N_("cannot connect to it: {problem}"), problem=text or name)
        return Deferred(N_("cannot connect to {url}: {problem}"), url=config.url, problem=text or name)
    if name == "HTTPStatusError" or "HTTP" in name:
        return Deferred(N_("HTTP error: {problem}"), problem=text or name)
    if name in ("ClosedResourceError", "BrokenResourceError", "EndOfStream"):
        return N_("it closed the connection (crashed at start?)")
    return f"{name}: {text}" if text else name


def _unavailable(server: _Server) -> str:
    name = server.config.name
    if server.state == RESTARTING:
        return f"the MCP server {name} stopped unexpectedly and is being restarted; try again in a moment"
    if server.state in (STARTING, WAITING):
        return f"the MCP server {name} is not ready yet"
    if server.state == FAILED:
        return f"the MCP server {name} is not available: {server.reason}"
    return f"the MCP server {name} is stopped"


# The states as a person reads them.
STATE_WORDS = {WAITING: N_("waiting"), STARTING: N_("starting"), READY: N_("ready"), RESTARTING: N_("restarting"),
               FAILED: N_("failed"), STOPPED: N_("stopped")}


def state_line(view: ServerView) -> str:
    if view.state == READY:
        return ngettext("ready with {count} tool", "ready with {count} tools", len(view.tools)).format(
            count=len(view.tools))
    if view.state == WAITING:
        return _("not started: it comes from the workspace's .mcp.json and needs a yes (/mcp allow {name})").format(
            name=view.name)
    state = _(STATE_WORDS.get(view.state, view.state))
    return _("{state}: {reason}").format(state=state, reason=_(view.reason)) if view.reason else state
