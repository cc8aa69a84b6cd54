"""The raw output archive: ids, streaming writes, paging, grep, errors, the size cap."""

from __future__ import annotations

import re
import threading
from pathlib import Path

import pytest

from core.prune.archive import OutputArchive


def test_ids_count_up_and_continue_after_a_resumed_session(tmp_path: Path) -> None:
    archive = OutputArchive(tmp_path / "outputs")
    assert [archive.new_id() for _ in range(3)] == ["out-1", "out-2", "out-3"]
    (tmp_path / "outputs" / "out-41.log").write_bytes(b"old")
    resumed = OutputArchive(tmp_path / "outputs")
    assert resumed.new_id() == "out-42"
    assert (tmp_path / "outputs" / "out-41.log").read_bytes() == b"old"


def test_concurrent_new_ids_never_collide(tmp_path: Path) -> None:
    archives = [OutputArchive(tmp_path), OutputArchive(tmp_path)]
    ids: list[str] = []
    lock = threading.Lock()

    def take(a: OutputArchive) -> None:
        for _ in range(20):
            new = a.new_id()
            with lock:
                ids.append(new)

    threads = [threading.Thread(target=take, args=(a,)) for a in archives]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(set(ids)) == 40


def test_writer_streams_while_the_command_runs(tmp_path: Path) -> None:
    archive = OutputArchive(tmp_path)
    out_id = archive.new_id()
    with archive.writer(out_id) as sink:
        sink.write(b"first\n")
        sink.flush()
        assert archive.read(out_id).endswith("     1\tfirst")  # readable before the command ends
        sink.write(b"second\n")
    assert archive.read(out_id) == f"{out_id}: lines 1-2 of 2\n     1\tfirst\n     2\tsecond"


def test_read_pages_cleaned_numbered_lines(tmp_path: Path) -> None:
    archive = OutputArchive(tmp_path)
    out_id = archive.new_id()
    archive.write(out_id, "".join(f"\x1b[32mline {i}\x1b[0m 10%\rline {i} done\r\n" for i in range(1, 501)).encode())
    page = archive.read(out_id, offset=200, limit=3)
    assert page.split("\n") == [
        f"{out_id}: lines 200-202 of 500",
        "   200\tline 200 done", "   201\tline 201 done", "   202\tline 202 done",
        f"… 298 more lines; read_output id={out_id} offset=203",
    ]
    assert archive.read(out_id, offset=499).endswith("   500\tline 500 done")
    assert "offset 600 is past the end" in archive.read(out_id, offset=600)


def test_grep_returns_matching_lines_with_numbers_capped(tmp_path: Path) -> None:
    archive = OutputArchive(tmp_path)
    out_id = archive.new_id()
    archive.write(out_id, "".join(f"ok {i}\n" if i % 100 else f"FAIL case {i}\n" for i in range(1, 1001)))
    hits = archive.read(out_id, grep=r"FAIL case \d+", limit=4)
    lines = hits.split("\n")
    assert lines[0] == f"{out_id}: 10 lines match /FAIL case \\d+/"
    assert lines[1:5] == ["   100\tFAIL case 100", "   200\tFAIL case 200", "   300\tFAIL case 300",
                          "   400\tFAIL case 400"]
    assert "narrow the regex, or pass offset=401" in lines[5]
    assert "no line matches" in archive.read(out_id, grep="nothing here")


def test_errors_are_value_errors_that_say_what_to_do(tmp_path: Path) -> None:
    archive = OutputArchive(tmp_path)
    out_id = archive.new_id()
    archive.write(out_id, b"x\n")
    with pytest.raises(ValueError, match="invalid regular expression"):
        archive.read(out_id, grep="(unclosed")
    with pytest.raises(ValueError, match=re.escape("unknown output id 'out-9'; the archive holds out-1..out-1")):
        archive.read("out-9")
    with pytest.raises(ValueError, match="ids look like 'out-7'"):
        archive.read("../../etc/passwd")
    with pytest.raises(ValueError, match="count lines from 1"):
        archive.read(out_id, offset=0)


def test_cap_drops_the_oldest_with_a_notice(tmp_path: Path) -> None:
    archive = OutputArchive(tmp_path, max_total_bytes=250_000)
    ids = [archive.new_id() for _ in range(4)]
    notices = [archive.write(i, b"y" * 100_000) for i in ids]
    assert notices[:2] == [None, None]
    assert notices[2] == "dropped out-1 (98 KB) to stay under the 244 KB archive cap"
    assert notices[3] == "dropped out-2 (98 KB) to stay under the 244 KB archive cap"
    assert archive.ids() == ["out-3", "out-4"]
    with pytest.raises(ValueError, match=re.escape("out-1 is gone: dropped out-1")):
        archive.read("out-1")
    assert archive.notices == notices[2:]


def test_cap_names_a_range_and_keeps_the_current_archive(tmp_path: Path) -> None:
    archive = OutputArchive(tmp_path, max_total_bytes=3 * 1024 * 1024)
    for _ in range(3):
        archive.write(archive.new_id(), b"z" * 1024 * 1024)
    big = archive.new_id()
    notice = archive.write(big, b"z" * 5 * 1024 * 1024)
    assert notice == ("dropped out-1..out-3 (3.0 MB) to stay under the 3.0 MB archive cap; out-4 reached the "
                      "3.0 MB archive cap; the rest of its output is not kept")
    assert archive.ids() == [big] and archive.path(big).stat().st_size <= 3 * 1024 * 1024


def test_huge_lines_are_read_in_bounded_pieces(tmp_path: Path) -> None:
    archive = OutputArchive(tmp_path)
    out_id = archive.new_id()
    with archive.writer(out_id) as sink:
        sink.write(b"head\n")
        for _ in range(30):
            sink.write(b"m" * 1024 * 1024)  # one 30 MB line
        sink.write(b"\ntail\n")
    page = archive.read(out_id).split("\n")
    assert page[0] == f"{out_id}: lines 1-3 of 3"
    assert page[2].endswith("… [line cut: 31,457,280 chars]") and len(page[2]) < 2_000
    assert page[3] == "     3\ttail"
    assert archive.read(out_id, grep="tail").endswith("     3\ttail")
