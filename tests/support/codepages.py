"""When a test may rely on the pruner guessing a legacy Chinese code page.

Bytes that are not UTF-8 are read in the console's own code page when there is one (Windows); GBK
or Big5 are guessed only where no page is known. A Chinese Windows console's page is 936, but
under wine (and on a western Windows) it is 437 or 1252, and GBK bytes read as that page."""

from __future__ import annotations

import sys

import pytest

from core.console import console_encoding

WESTERN_CONSOLE = sys.platform == "win32" and (console_encoding() or "").lower() not in ("cp936", "gbk", "cp950", "big5")
needs_code_page_guess = pytest.mark.skipif(
    WESTERN_CONSOLE, reason="this Windows console's own code page is not Chinese: non-UTF-8 bytes are read in it")
