"""What the pruner does before any family: code-page decoding, translated diagnostic words, and
diagnostics glued to the end of another line."""

from __future__ import annotations

import subprocess
import sys

import pytest

from core.prune import prune
from core.prune.clean import decode, guess_code_page
from core.prune.glued import split
from core.prune.rules import WARNING_RE, is_error_line
from tests.support.codepages import needs_code_page_guess

NOISE = "".join(f"processed batch {i} of 400: 128 records, checksum {i * 7919 % 65536:04x}\n" for i in range(400))


# --- code pages -----------------------------------------------------------------------------------

@pytest.mark.parametrize(("text", "code_page"), [
    ("src/parse.c:5:26: 错误：expected ‘;’ before ‘return’\n", "gbk"),
    ("驱动器 C 中的卷没有标签。\n 卷的序列号是 4300-0000\n", "gbk"),
    ("檔案找不到。錯誤：無法開啟 設定.ini\n", "big5"),
])
@needs_code_page_guess
def test_a_legacy_code_page_is_read_as_such(text: str, code_page: str) -> None:
    data = text.encode(code_page)
    assert guess_code_page(data) is not None
    assert decode(data) == text


@needs_code_page_guess
def test_utf8_and_gbk_lines_in_one_output_are_each_read_right() -> None:
    data = "Python 说：开始\n".encode() + "dir 说：找不到文件\n".encode("gbk") + "结束\n".encode()
    assert decode(data) == "Python 说：开始\ndir 说：找不到文件\n结束\n"


def test_western_bytes_are_not_taken_for_chinese() -> None:
    data = "Fichier introuvable : été.txt\n".encode("cp1252")
    text = decode(data)
    assert "Fichier introuvable" in text
    assert not any("\u4e00" <= ch <= "\u9fff" for ch in text)


@needs_code_page_guess
def test_a_gbk_error_survives_pruning_as_chinese() -> None:
    data = NOISE.encode() + "make: *** [Makefile:3：src/parse.o] 错误 1\n".encode("gbk") + NOISE.encode()
    assert "make: *** [Makefile:3：src/parse.o] 错误 1" in prune(data, command="make", exit_code=2).text


# --- translated diagnostic words ----------------------------------------------------------------------

@pytest.mark.parametrize("line", [
    "src/a.c:1:33: 错误：‘y’未声明(在此函数内第一次使用)",
    "致命错误：不是 git 仓库（或者任何父目录）：.git",
    "自动合并失败，修正冲突然后提交修正的结果。",
    "冲突（内容）：合并冲突于 f1.txt",
    " ! [rejected] main -> main (fetch first)  远程拒绝",
    "bash: 行 1: nosuchcmd: 未找到命令",
    "cat: /nonexist: 没有那个文件或目录",
    "E: 无法定位软件包 libfoo-dev",
    "src\\a.c(3): 錯誤 C2065: 'y': 未宣告的識別項",
    "main.c:3:5: エラー: 'y' が宣言されていません",
])
def test_translated_error_lines_are_error_lines(line: str) -> None:
    assert is_error_line(line)


@pytest.mark.parametrize("line", ["编译完成：0 个错误，2 个警告", "检查通过，没有错误", "処理完了：0 個のエラー"])
def test_a_count_of_no_errors_is_not_an_error(line: str) -> None:
    assert not is_error_line(line)


@pytest.mark.parametrize("line", ["src/a.c:7:1: 警告：在有返回值的函数中，控制流程到达函数尾", "a.c:2:1: 警告: 未使用的变量"])
def test_translated_warnings_are_warnings(line: str) -> None:
    assert WARNING_RE.search(line)


def test_a_translated_compiler_error_is_pinned_among_noise() -> None:
    error = "src/mod03.c:4:45: 错误：‘missing_factor’未声明(在此函数内第一次使用)"
    result = prune(NOISE + error + "\n" + NOISE, command="make -j4", exit_code=2)
    assert error in result.text
    assert len(result.text) < len(NOISE)


# --- glued diagnostics ------------------------------------------------------------------------------------

@pytest.mark.parametrize("line", [
    "mean=  49.4==25552== Invalid write of size 8",
    "mean=  49.5=================================================================",
    "progress 50%Traceback (most recent call last):",
    "loaded 30 customersPHP Fatal error:  Uncaught DomainException: invoice total must be positive",
    "step 3 of 9panic: runtime error: index out of range [4] with length 4",
    "warming cachethread 'main' panicked at src/main.rs:4:5:",
    "reserved sku-24Exception in thread \"main\" java.lang.IllegalStateException: unknown sku",
])
def test_a_glued_diagnostic_becomes_a_line_of_its_own_for_selection(line: str) -> None:
    lines, glued = split(f"before\n{line}\nafter", ["before", line, "after"])
    assert len(lines) == 4 and glued == frozenset({2})
    assert lines[1] + lines[2] == line


@pytest.mark.parametrize("line", ["a==b", "x == 3 == y", "see docs: panic: is a Go word", "=====", "C==1==2"])
def test_ordinary_text_is_not_split(line: str) -> None:
    assert split(line, [line]) == ([line], frozenset())


def test_a_python_traceback_glued_to_unfinished_output_is_kept_with_it() -> None:
    program = ("import sys\n"
               "for i in range(300): print(f'step {i}: ok')\n"
               "print('progress 50%', end='', flush=True)\n"
               "raise ValueError('bad rate: -3')\n")
    proc = subprocess.run([sys.executable, "-c", program], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          check=False)
    assert b"progress 50%Traceback (most recent call last):" in proc.stdout
    result = prune(proc.stdout, command="python job.py", exit_code=proc.returncode)
    assert "progress 50%Traceback (most recent call last):" in result.text
    assert "ValueError: bad rate: -3" in result.text
    assert len(result.text) < len(proc.stdout) / 3
