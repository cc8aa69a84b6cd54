"""Diagnostic words in the languages tools are translated into, as data.

gcc, make, git, apt, bash and coreutils print `错误：`, `警告：`, `没有那个文件或目录` under a Chinese
locale, and Windows programs do the same in the console's language. The generic rules find error
and warning lines by words; these tables add each language's words to the English ones, so a
translated tool is read like the English one without a rule per tool. Scripts without spaces
between words (Chinese, Japanese) are matched as plain substrings.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Words:
    errors: tuple[str, ...]  # a line with one of these reports a failure
    warnings: tuple[str, ...]
    zero: tuple[str, ...] = ()  # counts that say nothing failed (`0 个错误`)
    # The severity labels of compiler diagnostics (`a.c:5:3: 错误：…`), by the English level they stand for
    severities: tuple[tuple[str, str], ...] = ()
    # The counter words after a number (`20 个软件包`): two counts on one line make a summary line
    count_units: tuple[str, ...] = ()


LANGUAGES: dict[str, Words] = {
    "zh_CN": Words(
        errors=("错误", "致命错误", "致命", "失败", "冲突", "拒绝", "未找到", "找不到", "无法", "没有那个文件或目录", "权限不够",
                "未声明", "未定义", "段错误", "异常", "已放弃", "不是内部或外部命令", "语法错误"),
        warnings=("警告",),
        zero=("0 个错误", "0 个失败", "没有错误", "无错误"),
        severities=(("致命错误", "fatal error"), ("错误", "error"), ("警告", "warning"), ("附注", "note"),
                    ("备注", "note")),
        count_units=("个", "项", "条", "次"),
    ),
    "zh_TW": Words(
        errors=("錯誤", "失敗", "衝突", "拒絕", "找不到", "無法", "沒有此一檔案或目錄", "權限不足", "未宣告", "例外"),
        warnings=("警告",),
        zero=("0 個錯誤", "沒有錯誤"),
        severities=(("嚴重錯誤", "fatal error"), ("錯誤", "error"), ("警告", "warning"), ("附註", "note")),
        count_units=("個", "項", "條", "次"),
    ),
    "ja": Words(
        errors=("エラー", "失敗", "競合", "拒否", "見つかりません", "できません", "そのようなファイルやディレクトリはありません"),
        warnings=("警告",),
        zero=("0 個のエラー", "エラーはありません"),
        severities=(("致命的エラー", "fatal error"), ("エラー", "error"), ("警告", "warning"), ("備考", "note")),
        count_units=("個", "件", "回"),
    ),
}


def _alternation(words: set[str]) -> str:
    return "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True))


ERROR_WORDS = frozenset(w for lang in LANGUAGES.values() for w in lang.errors)
WARNING_WORDS = frozenset(w for lang in LANGUAGES.values() for w in lang.warnings)
ZERO_WORDS = frozenset(w for lang in LANGUAGES.values() for w in lang.zero)
ERROR_ALTERNATION = _alternation(set(ERROR_WORDS))
WARNING_ALTERNATION = _alternation(set(WARNING_WORDS))
ZERO_ALTERNATION = _alternation(set(ZERO_WORDS))
SEVERITIES = {word: level for lang in LANGUAGES.values() for word, level in lang.severities}
SEVERITY_ALTERNATION = _alternation(set(SEVERITIES))
COUNT_UNITS = tuple(sorted({u for lang in LANGUAGES.values() for u in lang.count_units}))
COUNT_ALTERNATION = r"\d[\d,]*\s?(?:" + _alternation(set(COUNT_UNITS)) + ")"
