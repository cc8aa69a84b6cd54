"""The Responses-API client: one streamed request per model turn, with retries that never repeat output.

A turn is retried (exponential backoff with jitter, capped, honouring `retry-after-ms` and
`Retry-After`) on 408/409/429/5xx, transport errors and streams that break early, but only while
nothing of the turn has reached the user: once a delta has been emitted a retry would show it
twice, so the turn ends with a clear error and the partial output is kept.
"""

from __future__ import annotations

import email.utils
import json
import random
import socket
import time
from collections.abc import Callable
from typing import Any

from core import __version__
from core import events as ev
from core._httpx import httpx
from core.assembler import TurnAssembler, TurnResult
from core.cancel import Cancel
from core.config import Settings, is_loopback
from core.errors import ApiError, from_http
from core.events import Emit
from core.sse import EventTooLarge, SSEDecoder

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
        payload = json.dumps({**body, "stream": True}, ensure_ascii=False).encode("utf-8")
        for attempt in range(1, attempts + 1):
            assembler = TurnAssembler(emit)
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
                result.status, result.error = "failed", error
                return result
            delay = self._delay(attempt, error.retry_after)
            if delay is None:
                result.status, result.error = "failed", error
                error.message += f" (the server asked to wait {error.retry_after:.0f} s; not retrying)"
                return result
            emit(ev.NOTICE, {"kind": "retry", "message":
                             f"{error.message}; retrying in {_seconds(delay)}, attempt {attempt + 1} of {attempts}"})
            if self._wait(delay, cancel):
                return TurnResult(status="aborted", error=ApiError(cancel.reason or "interrupted", kind="aborted"))
        raise AssertionError("unreachable")  # pragma: no cover - the loop always returns

    # -- one attempt ------------------------------------------------------------------------
    def _attempt(self, payload: bytes, assembler: TurnAssembler, emit: Emit, cancel: Cancel) -> ApiError | None:
        """Send the request and consume the stream; the error to act on, or None when complete."""
        try:
            with self._http.stream("POST", self.settings.responses_url, content=payload,
                                   headers=self.headers()) as response, cancel.on_cancel(lambda: _abort(response)):
                if response.status_code >= 400:
                    error = from_http(response.status_code, _read_bounded(response), self.settings.api_key_source)
                    error.retry_after = _retry_after(response.headers)
                    if response.headers.get("x-should-retry") in ("true", "false"):
                        error.retryable = response.headers["x-should-retry"] == "true"
                    return error
                return self._consume(response, assembler, emit, cancel)
        except EventTooLarge as exc:
            return ApiError(f"The stream broke: {exc}; the turn was stopped", kind="stream")
        except httpx.TimeoutException as exc:
            if cancel.cancelled:
                return None
            return ApiError(f"The server did not answer in time ({type(exc).__name__})", kind="network",
                            retryable=True)
        except httpx.TransportError as exc:
            if cancel.cancelled:
                return None
            return ApiError(f"The connection failed ({_describe(exc)})", kind="network", retryable=True)
        except httpx.StreamError as exc:
            if cancel.cancelled:
                return None
            return ApiError(f"The stream broke ({_describe(exc)})", kind="network", retryable=True)
        except Exception:
            if cancel.cancelled:  # closing a response from another thread can surface as anything
                return None
            raise

    def _consume(self, response: httpx.Response, assembler: TurnAssembler, emit: Emit,
                 cancel: Cancel) -> ApiError | None:
        decoder = SSEDecoder()
        idle = self.settings.idle_timeout
        last_event = time.monotonic()
        warned_malformed = False
        for chunk in response.iter_bytes():
            for event in decoder.feed(chunk):
                last_event = time.monotonic()
                data = event.data.strip()
                if not data or data == "[DONE]":
                    continue
                try:
                    payload = json.loads(data)
                except ValueError:
                    if not warned_malformed:
                        emit(ev.NOTICE, {"kind": "warning",
                                         "message": "skipped a malformed event from the server"})
                        warned_malformed = True
                    continue
                if isinstance(payload, dict) and assembler.handle(payload):
                    return self._terminal_error(assembler)
            if cancel.cancelled:
                return None
            # Keep-alive comments are not progress: a server that only sends them is stuck.
            if time.monotonic() - last_event > idle:
                return ApiError(f"No progress from the server for {idle:.0f} s (only keep-alives)",
                                kind="network", retryable=True)
        for event in decoder.flush():
            try:
                payload = json.loads(event.data)
            except ValueError:
                continue
            if isinstance(payload, dict) and assembler.handle(payload):
                return self._terminal_error(assembler)
        if cancel.cancelled:
            return None
        return ApiError("The stream ended before the response was complete", kind="stream", retryable=True)

    @staticmethod
    def _terminal_error(assembler: TurnAssembler) -> ApiError | None:
        error = assembler.result_.error
        return error if assembler.result_.status == "failed" and error is not None else None

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


def _abort(response: httpx.Response) -> None:
    """Unblock a read in progress on another thread: shut the socket down, then close.

    `response.close()` alone waits for the blocked `recv` to return (the next event); shutting the
    socket down makes it return at once, so an interrupt takes effect within milliseconds.
    """
    stream = response.extensions.get("network_stream")
    sock = stream.get_extra_info("socket") if stream is not None else None
    if sock is not None:
        try:
            sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


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
