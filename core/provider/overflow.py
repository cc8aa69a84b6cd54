"""Recognising "the request did not fit the context window", whatever the server calls it.

The loop answers such an error by reshaping with force=True and retrying once, so the test must
catch every wording in the wild and nothing else: OpenAI's `context_length_exceeded`, DeepSeek's
plain `invalid_request_error` carrying "maximum context length" text, and llama.cpp's
`exceed_context_size_error`.
"""

from __future__ import annotations

import re

_CODES = frozenset({"context_length_exceeded", "exceed_context_size_error", "model_context_window_exceeded"})
_TEXT = re.compile(
    r"maximum context length|exceeds? the (?:model's )?context window|context[_ ]length[_ ]exceeded"
    r"|exceeds the available context size|context size has been exceeded|prompt is too long",
    re.IGNORECASE,
)


def is_context_overflow(error_code: str | None, error_type: str | None, message: str) -> bool:
    """True when an API error says the input was longer than the model's context window."""
    return error_code in _CODES or error_type in _CODES or bool(_TEXT.search(message or ""))
