"""Provider errors, classified once so every layer agrees on what is retryable and what it means."""

from __future__ import annotations

import errno
import json
import re
import socket
import ssl
from typing import TYPE_CHECKING, Any

from core.i18n import _
from core.provider.overflow import is_context_overflow

if TYPE_CHECKING:
    from core.config import Settings

# HTTP statuses worth another try (the OpenAI SDK's policy: 408, 409, 429 and 5xx).
RETRYABLE_STATUS = frozenset({408, 409, 429})
# Error codes inside a stream that a new attempt may cure.
RETRYABLE_CODES = frozenset({"server_error", "rate_limit_exceeded", "service_unavailable_error",
                             "server_is_overloaded", "slow_down", "internal_error"})
# A local server (llama.cpp) fails the response when the model's tool call cannot be parsed. Sending
# the same request again gets the same answer; the agent loop asks again with a correction instead.
_UNREADABLE_OUTPUT = re.compile(r"does not match the expected [\w-]+ format|Failed to parse tool call", re.IGNORECASE)


class ApiError(Exception):
    """A request or stream failed. `kind` names the cause for the UI and the exit code.

    kinds: auth, balance, rate_limit, server, invalid_request, context_overflow, network,
    stream (a broken or malformed stream), model_output (the model's answer could not be parsed),
    incomplete, aborted.
    """

    def __init__(self, message: str, *, kind: str, status: int | None = None, code: str | None = None,
                 type: str | None = None, retryable: bool = False, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.kind = kind
        self.status = status
        self.code = code
        self.type = type
        self.retryable = retryable
        self.retry_after = retry_after


def error_fields(payload: Any) -> tuple[str, str | None, str | None]:
    """(message, code, type) from any of the error shapes servers send.

    Handles the envelope `{"error": {...}}`, the flat `error` event `{code, message, param}`,
    `response.failed`'s `response.error`, and a bare string.
    """
    if isinstance(payload, dict):
        inner = payload.get("error")
        if isinstance(inner, dict):
            payload = inner
        elif isinstance(inner, str) and not payload.get("message"):
            return inner, None, None
        message = payload.get("message") or payload.get("detail") or ""
        code = payload.get("code")
        etype = payload.get("type") if payload.get("type") != "error" else None
        return str(message), (str(code) if code is not None else None), (str(etype) if etype else None)
    if isinstance(payload, str):
        return payload, None, None
    return "", None, None


def from_http(status: int, body: bytes, key_source: str = "") -> ApiError:
    """Turn an HTTP error response into an ApiError with the provider's own message.

    DeepSeek sends its JSON envelope as `application/octet-stream`, so the body is parsed as JSON
    whatever the content type claims.
    """
    text = body.decode("utf-8", errors="replace").strip()
    try:
        message, code, etype = error_fields(json.loads(text))
    except ValueError:
        message, code, etype = text[:500], None, None
    message = message or f"HTTP {status}"
    if _UNREADABLE_OUTPUT.search(message):
        return unreadable_output(message, code, etype, status)
    if status == 401:
        where = _(" (the key came from {source})").format(source=key_source) if key_source else ""
        return ApiError(_("The API key was rejected{where}: {message}").format(where=where, message=message),
                        kind="auth", status=status,
                        code=code, type=etype)
    if status == 402:
        return ApiError(_("The account's balance is exhausted; top it up to continue: {message}").format(message=message),
                        kind="balance", status=status, code=code, type=etype)
    if status == 403:
        return ApiError(_("Access denied (HTTP 403): {message}").format(message=message), kind="auth", status=status,
                        code=code, type=etype)
    if is_context_overflow(code, etype, message):
        return ApiError(_("The request is too long for the model: {message}").format(message=message),
                        kind="context_overflow", status=status, code=code, type=etype)
    if status == 429:
        return ApiError(_("Rate limited (HTTP 429): {message}").format(message=message), kind="rate_limit",
                        status=status, code=code,
                        type=etype, retryable=True)
    if status >= 500 or status in RETRYABLE_STATUS:
        return ApiError(_("Server error (HTTP {status}): {message}").format(status=status, message=message),
                        kind="server", status=status, code=code,
                        type=etype, retryable=True)
    return ApiError(_("The server refused the request (HTTP {status}): {message}").format(status=status, message=message),
                    kind="invalid_request",
                    status=status, code=code, type=etype)


def from_stream(payload: Any) -> ApiError:
    """An `error` event or `response.failed` inside a 200 stream."""
    message, code, etype = error_fields(payload)
    message = message or _("the server reported a failure without a message")
    if _UNREADABLE_OUTPUT.search(message):
        return unreadable_output(message, code, etype)
    if is_context_overflow(code, etype, message):
        return ApiError(_("The request is too long for the model: {message}").format(message=message),
                        kind="context_overflow", code=code, type=etype)
    if code in ("insufficient_quota",) or etype == "insufficient_quota":
        return ApiError(_("The account's quota is exhausted: {message}").format(message=message), kind="balance",
                        code=code, type=etype)
    retryable = code in RETRYABLE_CODES or etype in RETRYABLE_CODES
    return ApiError(_("The server failed the response: {message}").format(message=message),
                    kind="server" if retryable else "invalid_request",
                    code=code, type=etype, retryable=retryable)


def unreadable_output(message: str, code: str | None, etype: str | None, status: int | None = None) -> ApiError:
    return ApiError(_("The server could not parse the model's answer: {message}").format(message=message),
                    kind="model_output",
                    status=status, code=code, type=etype)


# getaddrinfo failures that are worth another try: the resolver itself is down or busy (EAI_AGAIN on
# POSIX, WSATRY_AGAIN on Windows). Every other lookup failure means the name does not exist.
_TRANSIENT_LOOKUP = frozenset({getattr(socket, "EAI_AGAIN", -3), 11002})


def from_connect(exc: BaseException, settings: Settings) -> ApiError:
    """A failure to reach the server, classified by its root cause (the chain under httpx's error).

    What cannot heal by waiting is not retried and names the URL and the setting to fix: a host name
    that does not resolve, nothing listening on this machine, a certificate that does not verify.
    What is retried says why a retry may help.
    """
    from core.config import is_loopback

    where = f"DEEPSEEK_BASE_URL={settings.base_url} ({settings.origin('base_url')})"
    cause = _root(exc)
    if isinstance(cause, socket.gaierror):
        if cause.errno in _TRANSIENT_LOOKUP:
            return ApiError(_("Cannot look up the server's name in {where} right now ({problem}); the network or "
                              "its name server may be down").format(where=where, problem=cause.strerror),
                            kind="network", retryable=True)
        return ApiError(_("The server's name in {where} does not exist ({problem}); check the spelling of the "
                          "URL").format(where=where, problem=cause.strerror), kind="network")
    if isinstance(cause, ConnectionRefusedError) or getattr(cause, "errno", None) == errno.ECONNREFUSED:
        if is_loopback(settings.base_url):
            return ApiError(_("Nothing is listening at {where}: start the local server, or fix the port").format(
                where=where), kind="network")
        return ApiError(_("The server at {where} refused the connection; it may be restarting").format(where=where),
                        kind="network", retryable=True)
    if isinstance(cause, ssl.SSLCertVerificationError):
        return ApiError(_("The certificate of the server at {where} cannot be verified ({problem})").format(
            where=where, problem=cause.verify_message), kind="network")
    detail = f"{type(exc).__name__}: {cause}" if str(cause) else type(exc).__name__
    return ApiError(_("Cannot reach the server at {where} ({problem}); the network may be down").format(
        where=where, problem=detail), kind="network", retryable=True)


def _root(exc: BaseException) -> BaseException:
    """The innermost cause (httpx wraps httpcore's error, which wraps the socket's)."""
    seen = {id(exc)}
    while (inner := exc.__cause__ or exc.__context__) is not None and id(inner) not in seen:
        seen.add(id(inner))
        exc = inner
    return exc

