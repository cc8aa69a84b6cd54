"""A command's output bytes to text (core/console.py OutputDecoder): UTF-8 first, line by line, else
the console code page (GBK on a Chinese Windows), across any read boundary, never an exception."""

from __future__ import annotations

import random

from core.console import OutputDecoder

GBK_LINE = "编译成功：3 个文件\r\n".encode("gbk")
UTF8_LINE = "UTF-8 行 ✓\n".encode()


def _in_reads(decoder: OutputDecoder, data: bytes, sizes: list[int]) -> str:
    parts, start = [], 0
    for size in sizes:
        parts.append(decoder.decode(data[start:start + size]))
        start += size
    return "".join(parts) + decoder.decode(data[start:], final=True)


def test_a_gbk_line_is_read_in_the_console_code_page_and_a_utf8_line_as_utf8() -> None:
    assert OutputDecoder("gbk").decode(GBK_LINE + UTF8_LINE, final=True) == "编译成功：3 个文件\r\nUTF-8 行 ✓\n"
    assert OutputDecoder("gbk").decode(UTF8_LINE + GBK_LINE, final=True) == "UTF-8 行 ✓\n编译成功：3 个文件\r\n"


def test_every_read_boundary_gives_the_same_text() -> None:
    data = UTF8_LINE + GBK_LINE + UTF8_LINE + "末行没有换行".encode("gbk")
    whole = OutputDecoder("gbk").decode(data, final=True)
    assert whole == "UTF-8 行 ✓\n编译成功：3 个文件\r\nUTF-8 行 ✓\n末行没有换行"
    for cut in range(1, len(data)):
        assert _in_reads(OutputDecoder("gbk"), data, [cut]) == whole, cut
    rng = random.Random(7)
    for _ in range(200):
        sizes = [rng.randint(1, 7) for _ in range(20)]
        assert _in_reads(OutputDecoder("gbk"), data, sizes) == whole, sizes


def test_an_unfinished_line_shows_what_is_certain() -> None:
    encoded = "你好".encode()
    posix = OutputDecoder(None)
    assert posix.decode(encoded[:4]) == "你"  # the half character waits for its rest
    assert posix.decode(encoded[4:] + b" world") == "好 world"
    windows = OutputDecoder("gbk")  # the line could still turn out to be GBK: its ASCII is shown
    assert windows.decode(b"progress " + encoded[:4]) == "progress "
    assert windows.decode(encoded[4:] + b"\n") == "你好\n"


def test_without_a_code_page_bytes_that_are_not_utf8_become_replacement_characters() -> None:
    assert OutputDecoder(None).decode(GBK_LINE, final=True).count("\ufffd") >= 4


def test_a_huge_line_that_is_not_utf8_is_not_held_forever() -> None:
    decoder = OutputDecoder("gbk")
    shown = decoder.decode("很长".encode("gbk") * (OutputDecoder.HOLD_LIMIT // 2))
    assert shown.startswith("很长很长")


def test_random_bytes_never_raise() -> None:
    rng = random.Random(3)
    for page in ("gbk", "cp1252", "cp437", None):
        decoder = OutputDecoder(page)
        for _ in range(300):
            decoder.decode(bytes(rng.randrange(256) for _ in range(rng.randint(0, 40))))
        decoder.decode(b"", final=True)
