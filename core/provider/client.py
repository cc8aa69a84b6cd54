"""The Responses-API client: one streamed request per model turn, with retries that never repeat output.

A turn is retried (exponential backoff with jitter, capped, honouring `retry-after-ms` and
`Retry-After`) on 408/409/429/5xx, transport errors and streams that break early, but only while
nothing of the turn has reached the user: once a delta has been emitted a retry would show it
twice, so the turn ends with a clear error and the partial output is kept.
"""

from __future__ import annotations

import contextlib
import email.utils
import json
import random
import socket
import sys
import time
from collections.abc import Callable, Iterable
from typing import Any

from core import __version__
from core import protocol as ev
from core.cancel import Cancel
from core.config import Settings, is_loopback
from core.i18n import _
from core.protocol import Emit
from core.provider._httpx import httpx
from core.provider.assembler import TurnAssembler, TurnResult
from core.provider.errors import ApiError, from_connect, from_http
from core.provider.sse import EventTooLarge, ServerEvent, SSEDecoder

MAX_RETRY_AFTER = 120.0  # a server asking for a longer pause is not worth waiting for in a session
MAX_BACKOFF = 30.0
MAX_ERROR_BODY = 64 * 1024


class ResponsesClient:
    """Streams `POST {base_url}/responses`; see `stream()`."""

    def __init__(self, settings: Settings, http: httpx.Client | None = None,
                 sleep: Callable[[float], None] | None = None) -> None:
        self.settings = settings
        self._key = settings.require_key()
        self._http = http or httpx.Client(
            timeout=httpx.Timeout(connect=settings.connect_timeout, read=settings.idle_timeout,
                                  write=60.0, pool=settings.connect_timeout),
            # A loopback server (a local model) must not be sent through the user's proxy.
            trust_env=not is_loopback(settings.base_url),
            follow_redirects=True,
        )
        self._sleep = sleep
        self._socket: socket.socket | None = None  # the connection opened last (requests are sequential)

    def close(self) -> None:
        self._http.close()

    def headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json", "Accept": "text/event-stream",
                   "User-Agent": f"deepseek-agent/{__version__}"}
        if self._key:
            headers["Authorization"] = f"Bearer {self._key}"
        return headers

    def stream(self, body: dict[str, Any], emit: Emit, cancel: Cancel | None = None) -> TurnResult:
        """Run one model turn; never raises for provider or network trouble (see `TurnResult`)."""
        cancel = cancel or Cancel()
        attempts = self.settings.max_retries + 1
        # errors="replace": a lone surrogate that slipped into the history must not crash the session.
        payload = json.dumps({**body, "stream": True}, ensure_ascii=False).encode("utf-8", errors="replace")
        for attempt in range(1, attempts + 1):
            assembler = TurnAssembler(emit)
            if cancel.cancelled:  # never send (and pay for) a request the user already stopped
                return TurnResult(status="aborted", error=ApiError(cancel.reason or "interrupted", kind="aborted"))
            emit(ev.RequestSent(attempt=attempt, max_attempts=attempts))
            try:
                error = self._attempt(payload, assembler, emit, cancel)
            except KeyboardInterrupt:
                cancel.cancel()
                error = None
            if cancel.cancelled:
                result = assembler.result(cut_off=True)
                result.status = "aborted"
                result.error = ApiError(cancel.reason or "interrupted", kind="aborted")
                return result
            if error is None:
                return assembler.result()
            result = assembler.result(cut_off=True)
            if result.emitted or not error.retryable or attempt == attempts:
                if result.emitted and error.retryable:
                    error.message += " (not retried: part of the answer was already shown; it is kept)"
                result.status, result.error = "error", error
                return result
            delay = self._delay(attempt, error.retry_after)
            if delay is None:
                result.status, result.error = "error", error
                error.message += _(" (the server asked to wait {seconds:.0f} s; not retrying)").format(
                    seconds=error.retry_after)
                return result
            emit(ev.Notice(kind="retry", message=_("{problem}; retrying in {delay}, attempt {attempt} of {attempts}").format(
                problem=error.message, delay=_seconds(delay), attempt=attempt + 1, attempts=attempts),
                             delay=round(delay, 3), attempt=attempt + 1, max_attempts=attempts,
                             error_kind=error.kind))
            if self._wait(delay, cancel):
                return TurnResult(status="aborted", error=ApiError(cancel.reason or "interrupted", kind="aborted"))
        raise AssertionError("unreachable")  # pragma: no cover - the loop always returns

    # -- one attempt ------------------------------------------------------------------------
    def _attempt(self, payload: bytes, assembler: TurnAssembler, emit: Emit, cancel: Cancel) -> ApiError | None:
        """Send the request and consume the stream; the error to act on, or None when complete.

        Cancellation shuts down the connection's socket, which the trace hook captured when it was
        opened: that works while waiting for the response headers too, not only during the body."""
        sockets: list[socket.socket] = []
        started = time.monotonic()

        def trace(event: str, info: dict[str, Any]) -> None:
            if event in ("connection.connect_tcp.complete", "connection.start_tls.complete"):
                stream = info.get("return_value")
                sock = stream.get_extra_info("socket") if stream is not None else None
                if sock is not None:
                    self._socket = sock
            elif event == "http11.send_request_headers.started" and self._socket is not None:
                sockets.append(self._socket)  # a pooled connection: the one opened last is in use

        try:
            with cancel.on_cancel(lambda: _shutdown(sockets)), self._http.stream(
                    "POST", self.settings.responses_url, content=payload, headers=self.headers(),
                    extensions={"trace": trace}) as response:
                if response.status_code >= 400:
                    error = from_http(response.status_code, _read_bounded(response), self.settings.api_key_source)
                    error.retry_after = _retry_after(response.headers)
                    if response.headers.get("x-should-retry") in ("true", "false"):
                        error.retryable = response.headers["x-should-retry"] == "true"
                    return error
                return self._consume(response, assembler, emit, cancel, started)
        except EventTooLarge as exc:
            return ApiError(_("The stream broke: {problem}; the turn was stopped").format(problem=exc),
                            kind="stream")
        except httpx.TimeoutException as exc:
            if cancel.cancelled:
                return None
            if isinstance(exc, httpx.ConnectTimeout):
                return from_connect(exc, self.settings)
            return ApiError(_("The server did not answer in time ({problem})").format(
                problem=type(exc).__name__), kind="network", retryable=True)
        except httpx.TransportError as exc:
            if cancel.cancelled:
                return None
            if isinstance(exc, httpx.ConnectError):  # not yet connected: the cause decides (core.provider.errors)
                return from_connect(exc, self.settings)
            return ApiError(_("The connection failed ({problem})").format(problem=_describe(exc)),
                            kind="network", retryable=True)
        except httpx.StreamError as exc:
            if cancel.cancelled:
                return None
            return ApiError(_("The stream broke ({problem})").format(problem=_describe(exc)), kind="network",
                            retryable=True)
        except Exception:
            if cancel.cancelled:  # closing a response from another thread can surface as anything
                return None
            raise

    def _consume(self, response: httpx.Response, assembler: TurnAssembler, emit: Emit,
                 cancel: Cancel, started: float) -> ApiError | None:
        decoder = SSEDecoder()
        idle = self.settings.idle_timeout
        last_event = time.monotonic()
        malformed = _Malformed(emit)

        def handle(events: Iterable[ServerEvent]) -> bool:
            """Feed decoded events to the assembler; True once the response is over."""
            nonlocal last_event
            for event in events:
                last_event = time.monotonic()
                data = event.data.strip()
                if not data or data == "[DONE]":
                    continue
                try:
                    payload = json.loads(data)
                    if isinstance(payload, dict) and assembler.handle(payload):
                        return True
                except (ValueError, TypeError, AttributeError, KeyError):
                    malformed.note()  # not JSON, or fields of unexpected types: skip that one event
            return False

        first = True
        for chunk in response.iter_bytes():
            if first:
                first = False
                emit(ev.FirstByte(latency=round(time.monotonic() - started, 3)))
            if handle(decoder.feed(chunk)):
                return self._terminal_error(assembler)
            if cancel.cancelled:
                return None
            # Keep-alive comments are not progress: a server that only sends them is stuck.
            if time.monotonic() - last_event > idle:
                return ApiError(_("No progress from the server for {seconds:.0f} s (only keep-alives)")
                                .format(seconds=idle), kind="network", retryable=True)
        if handle(decoder.flush()):
            return self._terminal_error(assembler)
        if cancel.cancelled:
            return None
        return ApiError(_("The stream ended before the response was complete"), kind="stream", retryable=True)

    @staticmethod
    def _terminal_error(assembler: TurnAssembler) -> ApiError | None:
        error = assembler.result_.error
        return error if assembler.result_.status == "error" and error is not None else None

    # -- waiting ----------------------------------------------------------------------------
    def _delay(self, attempt: int, retry_after: float | None) -> float | None:
        if retry_after is not None:
            return retry_after if retry_after <= MAX_RETRY_AFTER else None
        base = self.settings.retry_base_delay * (2 ** (attempt - 1))
        return min(MAX_BACKOFF, base) * (1 - 0.25 * random.random())

    def _wait(self, delay: float, cancel: Cancel) -> bool:
        if self._sleep is not None:
            self._sleep(delay)
            return cancel.cancelled
        try:
            return cancel.wait(delay)
        except KeyboardInterrupt:
            cancel.cancel()
            return True


def _retry_after(headers: httpx.Headers) -> float | None:
    """Seconds to wait from `retry-after-ms` or `Retry-After` (seconds or an HTTP date)."""
    value = headers.get("retry-after-ms")
    if value:
        try:
            return max(0.0, float(value) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        return max(0.0, email.utils.parsedate_to_datetime(value).timestamp() - time.time())
    except (TypeError, ValueError):
        return None


class _Malformed:
    """Says once per response that the server sent something unreadable (and that it was skipped)."""

    def __init__(self, emit: Emit) -> None:
        self._emit = emit
        self._said = False

    def note(self) -> None:
        if not self._said:
            self._said = True
            self._emit(ev.Notice(kind="warning", message=_("skipped a malformed event from the server")))


def _shutdown(sockets: list[socket.socket]) -> None:
    """Unblock a send or read in progress (on this thread from a signal handler, or another).

    Closing the response alone waits for the blocked `recv` to return, which may be the next event
    or minutes away; shutting the socket down makes it return at once. Winsock's shutdown does not
    abort a call in progress (it waited out the idle timeout); closing the socket does, failing that
    call. Elsewhere the socket stays open, as closing it would not wake the reader.
    """
    for sock in sockets:
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)
        if sys.platform == "win32":
            with contextlib.suppress(OSError):
                sock.close()


def _read_bounded(response: httpx.Response) -> bytes:
    body = bytearray()
    for chunk in response.iter_bytes():
        body += chunk
        if len(body) >= MAX_ERROR_BODY:
            break
    return bytes(body[:MAX_ERROR_BODY])


def _describe(exc: Exception) -> str:
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _seconds(delay: float) -> str:
    return f"{delay:.0f} s" if delay >= 1.5 else f"{delay:.1f} s"
