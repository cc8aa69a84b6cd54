"""The README and docs/: the README stays short and keeps the two commands, every relative link
lands on a file and heading that exist, and docs/measurements.md is only ever changed block by block."""

from __future__ import annotations

import io
import itertools
import re
import sys
import typing
from pathlib import Path

import pytest

from bench import ci_figures, measurements, unit_tier
from core import protocol
from tests import windows

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
RUN_AGENT = "python3 -m pip install -r requirements.lock && python3 agent.py"
RUN_TESTS = "python3 -m pip install -r requirements.lock && python3 -m pytest"

FENCE = re.compile(r"^(```|~~~).*?^\1[^\n]*$", re.MULTILINE | re.DOTALL)
INLINE_CODE = re.compile(r"`[^`\n]*`")
LINK = re.compile(r"\[[^\]\n]*\]\(([^)\s]+)\)")
HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$", re.MULTILINE)
CODE = re.compile(r"```.*?```|`[^`\n]+`", re.DOTALL)
# A measurements block named in prose: the "sandbox" block of [measurements.md](measurements.md)
NAMED_BLOCK = re.compile(r"[\"'`]([a-z][\w-]*)[\"'`] blocks? (?:of|in) \[?(?:docs/)?measurements\.md")
BLOCK_START = re.compile(r"^<!-- BEGIN ([\w-]+) -->$", re.MULTILINE)
# A path of this repository named in code (`core/tools/cmdline.py`, `python3 tests/windows.py`)
REPO_PATH = re.compile(r"(?<![\w/~.$%-])((?:core|ui|tests|bench|docs|\.ci|\.github)/[\w./-]*[\w/])")


def pages() -> list[Path]:
    return [README, *sorted((ROOT / "docs").glob("*.md"))]


def prose(text: str) -> str:
    """The text without code blocks and inline code, where brackets are not links."""
    return INLINE_CODE.sub("", FENCE.sub("", text))


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading).replace("`", "").lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    found: set[str] = set()
    for heading in HEADING.findall(FENCE.sub("", page.read_text(encoding="utf-8"))):
        base = slug(heading)
        name, n = base, 0
        while name in found:
            n += 1
            name = f"{base}-{n}"
        found.add(name)
    return found


def missing_blocks(page: Path, measurements_page: Path) -> list[str]:
    """The measurements blocks `page` sends its reader to that the measurements page does not hold."""
    present = set(BLOCK_START.findall(measurements_page.read_text(encoding="utf-8")))
    named = NAMED_BLOCK.findall(" ".join(page.read_text(encoding="utf-8").split()))
    return sorted(set(named) - present)


def broken_links(page: Path) -> list[str]:
    broken = []
    for target in LINK.findall(prose(page.read_text(encoding="utf-8"))):
        if re.match(r"[a-z][a-z0-9+.-]*:", target):
            continue  # a URL, not a file of this repository
        path, _, anchor = target.partition("#")
        file = (page.parent / path).resolve() if path else page
        if not file.exists():
            broken.append(f"{target} (no such file)")
        elif anchor and file.suffix == ".md" and anchor not in anchors(file):
            broken.append(f"{target} (no heading #{anchor} in {file.name})")
    return broken


def test_readme_is_at_most_15000_bytes() -> None:
    assert len(README.read_bytes()) <= 15_000, "move detail into docs/ and link it"


def test_readme_gives_the_two_commands_verbatim_and_ci_runs_the_test_one() -> None:
    lines = README.read_text(encoding="utf-8").splitlines()
    assert RUN_AGENT in lines
    assert RUN_TESTS in lines
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert RUN_TESTS in [re.sub(r" 2>&1 \| tee \S+$", "", line) for line in ci], "its output may be kept with | tee"


@pytest.mark.parametrize("page", pages(), ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_relative_link_lands(page: Path) -> None:
    assert broken_links(page) == []


def missing_paths(page: Path) -> list[str]:
    named = (path for code in CODE.findall(page.read_text(encoding="utf-8")) for path in REPO_PATH.findall(code))
    return [path for path in dict.fromkeys(named) if not (ROOT / path).exists()]


@pytest.mark.parametrize("page", pages(), ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_measurements_block_a_doc_names_exists(page: Path) -> None:
    assert missing_blocks(page, ROOT / "docs" / "measurements.md") == []


def test_the_block_check_sees_a_missing_block_across_lines(tmp_path: Path) -> None:
    figures = tmp_path / "measurements.md"
    figures.write_text("# M\n\n<!-- BEGIN startup -->\nx\n<!-- END startup -->\n", encoding="utf-8")
    page = tmp_path / "page.md"
    page.write_text('See the "startup" block of [measurements.md](measurements.md), and the "sandbox"\n'
                    "block of\n[measurements.md](measurements.md); `cost` blocks in docs/measurements.md too.\n",
                    encoding="utf-8")
    assert missing_blocks(page, figures) == ["cost", "sandbox"]


@pytest.mark.parametrize("page", pages(), ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_repository_path_named_in_code_exists(page: Path) -> None:
    """Files move: a doc that still names the old place fails here."""
    assert missing_paths(page) == []


def test_the_path_check_sees_moved_files_and_ignores_other_paths(tmp_path: Path) -> None:
    page = tmp_path / "p.md"
    page.write_text("`core/protocol.py` `core/events.py` `python3 tests/windows.py`\n"
                    "```sh\npython3 -m pytest tests/nowhere\n```\n"
                    "`~/.cache/deepseek-agent/exe` `$XDG_STATE_HOME/deepseek-agent/sessions` `dist/x` core/gone.py\n",
                    encoding="utf-8")
    assert missing_paths(page) == ["core/events.py", "tests/nowhere"]


def test_the_link_check_sees_a_broken_file_a_broken_anchor_and_skips_code(tmp_path: Path) -> None:
    (tmp_path / "other.md").write_text("# Other page\n\n## Tests: `pytest` tiers, 中文\n", encoding="utf-8")
    page = tmp_path / "page.md"
    page.write_text(
        "# Top\n\n"
        "[ok](other.md) [ok](other.md#tests-pytest-tiers-中文) [ok](#top) [url](https://example.com/x.md)\n"
        "[gone](missing.md) [bad anchor](other.md#nope) [bad self](#nowhere)\n"
        "`[code](not-a-link.md)`\n```\n[fenced](not-a-link-either.md)\n```\n",
        encoding="utf-8")
    assert broken_links(page) == ["missing.md (no such file)", "other.md#nope (no heading #nope in other.md)",
                                  "#nowhere (no heading #nowhere in page.md)"]


def test_repeated_headings_get_numbered_anchors(tmp_path: Path) -> None:
    page = tmp_path / "p.md"
    page.write_text("## Measured\n\n## Measured\n\n## The `.env`: where?\n", encoding="utf-8")
    assert anchors(page) == {"measured", "measured-1", "the-env-where"}


def test_the_protocol_page_names_every_event_and_op_and_no_other() -> None:
    text = (ROOT / "docs" / "protocol.md").read_text(encoding="utf-8")
    section = text.split("## Events", 1)[1].split("\n## ", 1)[0]
    documented = {name for row in section.splitlines() if row.startswith("| `")
                  for name in re.findall(r"`(\w+)`", row.split(" | ")[0])}
    assert documented == set(protocol.EVENT_TYPES)
    ops = [cls.__name__ for cls in typing.get_args(protocol.Op)]
    assert [op for op in ops if f"| `{op}(" not in text] == []


DOCUMENT = ("# Measurements\r\n\r\nhand-kept intro, CRLF and 中文 kept\r\n\r\n"
            "<!-- BEGIN soak -->\nold soak\n<!-- END soak -->\n\n"
            "<!-- BEGIN soak2 -->\nother\n<!-- END soak2 -->\ntrailing text without newline")


def test_replace_block_keeps_every_byte_outside_it() -> None:
    new = measurements.replace_block(DOCUMENT, "soak", "new soak\n| a | b |\n")
    before, _, rest = DOCUMENT.partition("<!-- BEGIN soak -->")
    _, _, after = rest.partition("<!-- END soak -->")
    assert new == before + "<!-- BEGIN soak -->\nnew soak\n| a | b |\n<!-- END soak -->" + after
    assert measurements.replace_block(new, "soak", "old soak") == DOCUMENT


def test_replace_block_appends_a_missing_block_and_leaves_the_rest() -> None:
    new = measurements.replace_block(DOCUMENT, "startup", "figures")
    assert new.startswith(DOCUMENT)
    assert new.endswith("<!-- BEGIN startup -->\nfigures\n<!-- END startup -->\n")
    assert measurements.replace_block("", "x", "y") == "<!-- BEGIN x -->\ny\n<!-- END x -->\n"


@pytest.mark.parametrize("name", ["", " soak", "a -->", "a<b", "two\nlines"])
def test_a_block_name_that_could_not_be_found_again_is_refused(name: str) -> None:
    with pytest.raises(ValueError, match="block name"):
        measurements.replace_block(DOCUMENT, name, "x")


def test_a_block_without_its_end_is_an_error_not_a_truncation() -> None:
    with pytest.raises(ValueError, match="END soak"):
        measurements.replace_block("<!-- BEGIN soak -->\nno end", "soak", "x")


def test_write_block_creates_the_file_then_changes_only_its_block(tmp_path: Path) -> None:
    target = tmp_path / "docs" / "measurements.md"
    measurements.write_block("a", "first", target)
    measurements.write_block("b", "second", target)
    text = target.read_text(encoding="utf-8")
    assert text.startswith(measurements.HEADER)
    measurements.write_block("a", "третий 第三", target)
    assert target.read_text(encoding="utf-8") == text.replace("first", "третий 第三")
    assert [p.name for p in target.parent.iterdir()] == ["measurements.md"]


def test_recorded_writes_what_was_printed_with_its_provenance(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "m.md"
    with measurements.recorded("demo", "Demo: a title", "python3 -m bench.demo --runs 3", target):
        print("setup line\n| n | ms |\n|---:|---:|\n| 1 | 2 |\nlast line")
    assert "setup line" in capsys.readouterr().out  # still printed as before
    block = target.read_text(encoding="utf-8").split("<!-- BEGIN demo -->")[1]
    assert block.startswith("\n## Demo: a title\n\nMeasured ")
    assert "Reproduce: `python3 -m bench.demo --runs 3`" in block
    assert "```text\nsetup line\n```\n\n| n | ms |\n|---:|---:|\n| 1 | 2 |\n\n```text\nlast line\n```" in block


@pytest.mark.parametrize("failure", [RuntimeError("broken"), SystemExit(1), SystemExit("bad figures")])
def test_recorded_keeps_the_old_figures_when_the_run_fails(tmp_path: Path, failure: BaseException) -> None:
    target = tmp_path / "m.md"
    measurements.write_block("demo", "good figures", target)
    with pytest.raises(type(failure)), measurements.recorded("demo", "Demo", "cmd", target):
        print("half a table")
        raise failure
    text = target.read_text(encoding="utf-8")
    assert "good figures" in text and "half a table" not in text


def test_recorded_writes_on_a_clean_exit(tmp_path: Path) -> None:
    target = tmp_path / "m.md"
    with pytest.raises(SystemExit), measurements.recorded("demo", "Demo", "cmd", target):
        print("figures")
        sys.exit(0)
    assert "figures" in target.read_text(encoding="utf-8")


def test_the_command_line_puts_stdin_into_a_block(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "m.md"
    target.write_bytes(DOCUMENT.encode("utf-8"))
    monkeypatch.setattr(sys, "stdin", io.StringIO("from stdin\n"))
    assert measurements.main(["soak", "--file", str(target)]) == 0
    assert target.read_bytes() == DOCUMENT.replace("old soak", "from stdin").encode("utf-8")
    monkeypatch.setattr(sys, "stdin", io.StringIO("x"))
    assert measurements.main(["bad -->", "--file", str(target)]) == 2
    assert "block name" in capsys.readouterr().err


@pytest.mark.parametrize(("line", "counts"), [
    ("==== 992 passed, 7 skipped in 328.12s (0:05:28) ====", "992 passed, 7 skipped"),
    ("901 passed, 82 skipped in 498.01s (0:08:18)", "901 passed, 82 skipped"),
    ("\x1b[32m3 passed\x1b[0m\x1b[32m in 0.01s\x1b[0m", "3 passed"),
    ("= 1 failed, 2 passed, 3 warnings in 1.00s =", "1 failed, 2 passed, 3 warnings"),
])
def test_ci_figures_reads_pytests_summary_line(line: str, counts: str) -> None:
    log = f"tests/unit/test_x.py ....\n12 passed in 9.0s\nmore output\n{line}\n"
    assert ci_figures.pytest_summary(log) == counts


def test_ci_figures_reads_a_windows_tier_that_ran_again_what_wine_could_not_start() -> None:
    log = (f"....F....\n1 failed, 3256 passed, 958 skipped in 855.78s (0:14:15)\n{windows.rerun_note(1)}\n"
           "Windows CPython under wine: pytest -q tests/e2e/test_exe.py::test_x\n.\n1 passed in 2.99s\n")
    assert ci_figures.pytest_summary(log) == ("1 failed, 3256 passed, 958 skipped; run again, as wine could not start "
                                              "a process: 1 passed")


def test_ci_figures_writes_the_ci_block(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = tmp_path / "linux.log"
    log.write_text("....\n===== 10 passed, 1 skipped in 61.20s (0:01:01) =====\n", encoding="utf-8")
    target = tmp_path / "m.md"
    argv = ["--step", "Linux exe build", "22", "--step", "Linux suite", "328", str(log),
            "--step", "whole run", "920", "--file", str(target)]
    assert ci_figures.main(argv) == 0
    text = target.read_text(encoding="utf-8")
    assert "| Linux exe build |  | 22 s |\n| Linux suite | 10 passed, 1 skipped | 5 min 28 s |\n" in text
    assert "| whole run |  | 15 min 20 s |" in text and "Reproduce: `CI=true ./.ci/run`" in text


@pytest.mark.parametrize("step", [["Linux suite"], ["Linux suite", "5m"], ["a", "1", "log", "extra"]])
def test_ci_figures_refuses_a_malformed_step(tmp_path: Path, step: list[str],
                                             capsys: pytest.CaptureFixture[str]) -> None:
    assert ci_figures.main(["--step", *step, "--file", str(tmp_path / "m.md")]) == 2
    assert "NAME SECONDS [LOG]" in capsys.readouterr().err
    assert not (tmp_path / "m.md").exists()


def test_ci_figures_says_when_a_log_has_no_summary(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = tmp_path / "cut.log"
    log.write_text("collecting ...\nKilled\n", encoding="utf-8")
    assert ci_figures.main(["--step", "Linux suite", "5", str(log), "--file", str(tmp_path / "m.md")]) == 2
    assert "no pytest summary line" in capsys.readouterr().err


def test_the_unit_block_holds_what_pytest_printed_and_the_time_it_took(tmp_path: Path) -> None:
    log = "tests/unit/test_x.py ....\n===== 1541 passed, 31 skipped, 2 xfailed in 258.62s (0:04:18) =====\n"
    target = tmp_path / "m.md"
    measurements.write_block("unit", unit_tier.unit_block(log, 259), target)
    text = target.read_text(encoding="utf-8")
    assert "| unit (`python3 -m pytest tests/unit`) | 1541 passed, 31 skipped, 2 xfailed | 4 min 19 s |" in text
    assert "Reproduce: `python3 -m bench.unit_tier`" in text and "<!-- BEGIN unit -->" in text
    with pytest.raises(ValueError, match="no pytest summary line"):
        unit_tier.unit_block("collecting ...\nKilled\n", 5)


README_ZH = ROOT / "README.zh-CN.md"
USAGE_ZH = ROOT / "docs" / "usage.zh-CN.md"
# Each English page with its Simplified Chinese version, which must not fall behind it
TRANSLATIONS = [(README, README_ZH), (ROOT / "docs" / "usage.md", USAGE_ZH)]
# A flag (`--resume`) or a slash command (`/undo`) a page names, not `--` alone, a path, a URL or a ratio;
# ASCII-only look-arounds, since a Chinese character counts as \w but may touch a name in Chinese prose
FLAG = re.compile(r"(?<![A-Za-z0-9_-])--[a-z][a-z-]*[a-z]")
SLASH_COMMAND = re.compile(r"(?<![A-Za-z0-9_./~$%:-])/[a-z]+(?![A-Za-z0-9_/]|\.\w)")


def named_commands(text: str) -> set[str]:
    """The flags and slash commands a page names, in prose and code alike."""
    return set(FLAG.findall(text)) | set(SLASH_COMMAND.findall(text))


def missing_names(english: Path, chinese: Path) -> list[str]:
    """The flags and slash commands the English page names that its Chinese version does not."""
    names = named_commands(english.read_text(encoding="utf-8"))
    return sorted(names - named_commands(chinese.read_text(encoding="utf-8")))


def pair_id(pair: tuple[Path, Path]) -> str:
    return pair[1].relative_to(ROOT).as_posix()


def test_the_chinese_readme_gives_the_same_two_commands_verbatim() -> None:
    lines = README_ZH.read_text(encoding="utf-8").splitlines()
    assert RUN_AGENT in lines
    assert RUN_TESTS in lines


@pytest.mark.parametrize("page", [README_ZH, USAGE_ZH], ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_relative_link_and_repository_path_of_a_chinese_page_lands(page: Path) -> None:
    assert broken_links(page) == []
    assert missing_paths(page) == []


@pytest.mark.parametrize("pair", TRANSLATIONS, ids=pair_id)
def test_the_chinese_page_names_every_flag_and_slash_command_of_the_english_one(pair: tuple[Path, Path]) -> None:
    assert missing_names(*pair) == []


@pytest.mark.parametrize("pair", TRANSLATIONS, ids=pair_id)
def test_each_language_links_the_other_right_under_the_title(pair: tuple[Path, Path]) -> None:
    for page, other in (pair, pair[::-1]):
        top = "\n".join(page.read_text(encoding="utf-8").splitlines()[:4])
        assert other.name in LINK.findall(top), f"{page.name} does not link {other.name} at its top"


def test_the_name_check_sees_flags_and_commands_and_skips_paths_and_urls() -> None:
    text = ("`--one [TASK]`、`--mode auto\\|ask\\|yes`，用--no-network。`/undo [N]`，`/diff`。/mode or Shift-Tab;\n"
            "切换/model（`/mcp`). prune -- CMD; |---|---|; <!-- BEGIN x -->; ~/.ssh /path/.env core/modes.py\n"
            "v/bin/pip http://127.0.0.1:8080/v1 https://example.com/mcp 5/8 `/` /etc/hosts ./agent.py -q /a.md\n")
    assert named_commands(text) == {"--one", "--mode", "--no-network", "/undo", "/diff", "/mode", "/model", "/mcp"}


def test_the_name_check_sees_what_a_translation_left_out(tmp_path: Path) -> None:
    english, chinese = tmp_path / "usage.md", tmp_path / "usage.zh-CN.md"
    english.write_text("`--lang zh|en`, `--plain`; `/lang [zh]` and `/help`\n", encoding="utf-8")
    chinese.write_text("`--plain`：按行交互；`/help` 列出命令，`/lang`。\n", encoding="utf-8")
    assert missing_names(english, chinese) == ["--lang"]
    chinese.write_text("`--plain`，`/help`\n", encoding="utf-8")
    assert missing_names(english, chinese) == ["--lang", "/lang"]


# CJK characters and full-width punctuation
WIDE = re.compile(r"[\u3000-\u9fff\uff00-\uffef]")


def cjk_line_breaks(text: str) -> list[str]:
    """Prose lines broken between two wide characters: rendered, the break becomes a stray space."""
    lines = FENCE.sub("", text).splitlines()
    return [f"{a[-2:]}⏎{b.strip()[:2]}" for a, b in itertools.pairwise(lines)
            if a.strip() and b.strip() and not b.lstrip().startswith(("|", "#", "- "))
            and WIDE.match(a[-1]) and WIDE.match(b.strip()[0])]


@pytest.mark.parametrize("page", [README_ZH, USAGE_ZH], ids=lambda p: p.relative_to(ROOT).as_posix())
def test_chinese_prose_is_not_broken_between_two_chinese_characters(page: Path) -> None:
    assert cjk_line_breaks(page.read_text(encoding="utf-8")) == []


def test_the_line_break_check_sees_only_breaks_inside_chinese_text() -> None:
    text = ("会话边进行边保存，\n继续其中一个。\n\n单文件\nexe 运行\n\n用 `py`\n代替\n\n表格：\n| a |\n## 标题\n"
            "```\n代码\n块\n```\n- 第一项\n- 第二项\n  续行（\n  括号）\n")
    assert cjk_line_breaks(text) == ["存，⏎继续", "二项⏎续行", "行（⏎括号"]
