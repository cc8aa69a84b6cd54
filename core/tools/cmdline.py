"""Command lines as the shell will see them: POSIX sh, PowerShell and cmd.exe split into simple commands.

The approval gate (`core.tools.safety`) judges what a command will do from its argv, not from its
text, so quoting (`"${HOME}"`), mixed flags (`-r --force`) and wrappers cannot hide a target. This
module only splits and labels; it runs nothing. A word keeps its parts (literal, wildcard, variable,
`~`, command substitution) so the judge can expand them with what it knows and treat the rest as
unknown. Command substitutions and here-documents are kept as text for the judge to parse in turn.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, field

LIT, GLOB, VAR, TILDE, SUB = "lit", "glob", "var", "tilde", "sub"
_RAW = "raw"  # an unquoted `{`, `,`, `}` or `~` inside a word, until brace and tilde expansion place it
MAX_BRACE_WORDS = 256  # a brace expansion that makes more words than this stands for unknown text
MAX_BRACE_CHARS = 4096  # a word with more unquoted `{`, `,`, `}` stands for unknown text too


@dataclass
class Word:
    parts: list[tuple[str, str]] = field(default_factory=list)  # (kind, text)

    def add(self, kind: str, text: str) -> None:
        if kind == LIT and self.parts and self.parts[-1][0] == LIT:
            self.parts[-1] = (LIT, self.parts[-1][1] + text)
        else:
            self.parts.append((kind, text))

    @property
    def literal(self) -> str | None:
        """The word's text when it has no expansion at all (wildcards count as text)."""
        if any(kind in (VAR, TILDE, SUB) for kind, _ in self.parts):
            return None
        return "".join(text for _, text in self.parts)

    @classmethod
    def of(cls, text: str) -> Word:
        return cls([(LIT, text)])


class _Builder:
    """A word being read: literal text collects in a list, so a word of a million escaped
    characters costs a million appends, not a million ever-longer copies."""

    def __init__(self) -> None:
        self.parts: list[tuple[str, str]] = []
        self._text: list[str] = []

    def add(self, kind: str, text: str) -> None:
        if kind == LIT:
            self._text.append(text)
            return
        self._flush()
        self.parts.append((kind, text))

    @property
    def empty(self) -> bool:
        return not self.parts and not self._text

    def word(self) -> Word:
        self._flush()
        return Word(self.parts)

    def _flush(self) -> None:
        if self._text:
            self.parts.append((LIT, "".join(self._text)))
            self._text = []


@dataclass
class Simple:
    """One simple command: its words, its redirections, and how its stdin is fed."""

    words: list[Word] = field(default_factory=list)
    redirects: list[tuple[str, Word]] = field(default_factory=list)  # (operator, target)
    piped: bool = False  # stdin is another command's output
    heredoc: str | None = None  # stdin is this literal text
    substitutions: list[str] = field(default_factory=list)  # $(...) and `...` bodies, to be judged too
    dialect: str = "posix"


class _Commands:
    """The simple commands found so far; a separator ends the current one."""

    def __init__(self, dialect: str) -> None:
        self.dialect = dialect
        self.done: list[Simple] = []
        self.current = Simple(dialect=dialect)

    def end(self, piped: bool) -> None:
        if self.current.words or self.current.redirects:
            self.done.append(self.current)
        self.current = Simple(dialect=self.dialect, piped=piped)


class Unparsed(Exception):
    """The text is not a well-formed command line (an unclosed quote or substitution)."""


# -- POSIX sh -------------------------------------------------------------------------------------
_OPERATORS = ("&&", "||", ";;", "|&", ";", "&", "|", "(", ")", "\n")
# Runs of characters that mean nothing special, read at once.
_PLAIN = re.compile(r"[^ \t\n;&|()<>'\"\\$`*?\[{,}~]+")
_PLAIN_QUOTED = re.compile(r'[^"\\$`]+')
_TILDE = re.compile(r"~([A-Za-z0-9_.-]*)")
_REDIRECT = re.compile(r"(?:\d*|&)(?:>>|>\||>&|<<<|<<-|<<|<>|<&|>|<)")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def parse_posix(text: str) -> list[Simple]:
    """Split a POSIX shell command line into simple commands, in order."""
    return _PosixParser(text).parse()


class _PosixParser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.i = 0
        self.out = _Commands("posix")
        self.heredocs: list[tuple[str, bool, Simple]] = []  # (delimiter, strip tabs, owner)

    def parse(self) -> list[Simple]:
        text = self.text
        while self.i < len(text):
            char = text[self.i]
            if char in " \t":
                self.i += 1
            elif char == "#":
                end = text.find("\n", self.i)
                self.i = len(text) if end < 0 else end
            elif char == "\\" and text[self.i + 1:self.i + 2] == "\n":
                self.i += 2
            elif char in "<>" and text.startswith("(", self.i + 1):  # <(...): a word, not a redirection
                self.current.words.extend(expand_braces(self._word()))
            elif redirect := _REDIRECT.match(text, self.i):
                self.i = redirect.end()
                self._redirect(redirect.group())
            elif op := next((o for o in _OPERATORS if text.startswith(o, self.i)), None):
                self.i += len(op)
                self.out.end(piped=op in ("|", "|&"))
                if op == "\n":
                    self._read_heredocs()
            else:
                self.current.words.extend(expand_braces(self._word()))
        self.out.end(piped=False)
        return self.out.done

    @property
    def current(self) -> Simple:
        return self.out.current

    def _redirect(self, op: str) -> None:
        while self.i < len(self.text) and self.text[self.i] in " \t":
            self.i += 1
        target = self._word()
        if op.lstrip("0123456789").startswith("<<") and not op.endswith("<<<"):
            delimiter = "".join(text for _, text in target.parts)
            self.heredocs.append((delimiter, op.endswith("-"), self.current))
            return
        for word in expand_braces(target) or [Word.of("")]:
            self.current.redirects.append((op.lstrip("0123456789"), word))

    def _read_heredocs(self) -> None:
        for delimiter, strip, owner in self.heredocs:
            body: list[str] = []
            while self.i < len(self.text):
                end = self.text.find("\n", self.i)
                end = len(self.text) if end < 0 else end
                line = self.text[self.i:end]
                self.i = end + 1
                if (line.lstrip("\t") if strip else line) == delimiter:
                    break
                body.append(line)
            owner.heredoc = "\n".join(body)
        self.heredocs.clear()

    def _word(self) -> Word:
        word = _Builder()
        text = self.text
        start = self.i
        while self.i < len(text):
            char = text[self.i]
            if char in " \t\n;&|()<>" and not (char in "<>" and text.startswith("(", self.i + 1)):
                break
            if char == "'":
                end = text.find("'", self.i + 1)
                if end < 0:
                    raise Unparsed("an unclosed single quote")
                word.add(LIT, text[self.i + 1:end])
                self.i = end + 1
            elif char == '"':
                self.i += 1
                self._double_quoted(word)
            elif char == "\\":
                word.add(LIT, text[self.i + 1:self.i + 2])
                self.i += 2
            elif char in "$`":
                self._expansion(word)
            elif char in "<>":  # <(...) or >(...): process substitution
                end = _closing(text, self.i + 2)
                self._substitution(word, text[self.i + 2:end])
                self.i = end + 1
            elif char in "*?[":
                word.add(GLOB, char)
                self.i += 1
            elif char == "~" and self.i == start:
                match = _TILDE.match(text, self.i)
                assert match is not None
                word.add(TILDE, match.group(1))
                self.i = match.end()
            elif char in "{,}~":
                word.add(_RAW, char)
                self.i += 1
            else:
                run = _PLAIN.match(text, self.i)
                end = run.end() if run else self.i + 1
                word.add(LIT, text[self.i:end])
                self.i = end
        built = word.word()
        if text.startswith("(", self.i) and len(built.parts) == 1 and built.parts[0][0] == LIT \
                and re.fullmatch(r"[A-Za-z_]\w*\+?=", built.parts[0][1]):  # NAME=(array items)
            end = _closing(text, self.i + 1)
            body = text[self.i + 1:end]
            for simple in parse_posix(body):
                self.current.substitutions.extend(simple.substitutions)
            built.parts.append((SUB, body))
            self.i = end + 1
        return built

    def _double_quoted(self, word: _Builder) -> None:
        text = self.text
        while self.i < len(text):
            char = text[self.i]
            if char == '"':
                self.i += 1
                if word.empty:
                    word.add(LIT, "")
                return
            if char == "\\" and text[self.i + 1:self.i + 2] in ('"', "\\", "$", "`", "\n"):
                word.add(LIT, text[self.i + 1])
                self.i += 2
            elif char in "$`":
                self._expansion(word)
            else:
                run = _PLAIN_QUOTED.match(text, self.i)
                end = run.end() if run else self.i + 1
                word.add(LIT, text[self.i:end])
                self.i = end
        raise Unparsed("an unclosed double quote")

    def _expansion(self, word: _Builder) -> None:
        """`$...` or a backquoted command at the current position."""
        if self.text[self.i] == "$":
            self._dollar(word)
            return
        end = self.text.find("`", self.i + 1)
        if end < 0:
            raise Unparsed("an unclosed backquote")
        self._substitution(word, self.text[self.i + 1:end])
        self.i = end + 1

    def _dollar(self, word: _Builder) -> None:
        text = self.text
        nxt = text[self.i + 1:self.i + 2]
        if text.startswith("$((", self.i):
            end = _closing(text, self.i + 2)
            word.add(SUB, text[self.i + 3:end])  # arithmetic: a number nobody can know in advance
            self.i = end + 1
            if text[self.i:self.i + 1] == ")":
                self.i += 1
        elif nxt == "(":
            end = _closing(text, self.i + 2)
            self._substitution(word, text[self.i + 2:end])
            self.i = end + 1
        elif nxt == "{":
            end = text.find("}", self.i + 2)
            if end < 0:
                raise Unparsed("an unclosed ${")
            inner = text[self.i + 2:end]
            self.i = end + 1
            if _NAME.fullmatch(inner) or inner.isdigit():
                word.add(VAR, inner)
            else:  # ${X:-default}, ${#X}, ${X/a/b}: known only when it runs
                word.add(SUB, inner)
        elif nxt == "'":  # $'...': ANSI-C quoting
            end = self.i + 2
            while end < len(text) and text[end] != "'":
                end += 2 if text[end] == "\\" else 1
            body = text[self.i + 2:end]
            try:
                word.add(LIT, body.encode("latin-1", "backslashreplace").decode("unicode_escape"))
            except (UnicodeDecodeError, UnicodeEncodeError):
                word.add(SUB, body)
            self.i = end + 1
        elif match := _NAME.match(text, self.i + 1):
            word.add(VAR, match.group())
            self.i = match.end()
        elif nxt.isdigit():  # a positional parameter: known only where something sets it
            word.add(VAR, nxt)
            self.i += 2
        elif nxt and nxt in "@*#?$!-":
            word.add(SUB, nxt)
            self.i += 2
        else:
            word.add(LIT, "$")
            self.i += 1

    def _substitution(self, word: _Builder, body: str) -> None:
        word.add(SUB, body)
        self.current.substitutions.append(body)


def expand_braces(word: Word) -> list[Word]:
    """The words bash makes of one word by brace expansion (`{~,}` is `~` and nothing, `x{a,b}` is
    `xa xb`), then tilde expansion of a `~` that starts a word or follows `NAME=` (`of=~/x`)."""
    if not any(kind == _RAW for kind, _ in word.parts):
        return [word] if word.parts else []
    tokens = [(kind, char) for kind, text in word.parts for char in (text if kind == _RAW else [text])]
    results = _brace_alternatives(tokens)
    if results is None:
        return [Word([(SUB, "".join(text for _, text in word.parts))])]
    return [out for out in (_settle(item) for item in results) if out.parts]


def _brace_alternatives(tokens: list[tuple[str, str]]) -> list[list[tuple[str, str]]] | None:
    """Every expansion of the first well-formed brace group, recursively; None when too many, or
    when the word has more brace characters than any real command needs."""
    if sum(kind == _RAW for kind, _ in tokens) > MAX_BRACE_CHARS:
        return None
    for start, end, commas in _brace_groups(tokens):
        if commas:
            bounds = [start, *commas, end]
            choices = [tokens[a + 1:b] for a, b in itertools.pairwise(bounds)]
        else:
            choices = _sequence(tokens[start + 1:end])
            if choices is None:
                continue
        out: list[list[tuple[str, str]]] = []
        for choice in choices:
            more = _brace_alternatives(tokens[:start] + choice + tokens[end + 1:])
            if more is None or len(out) + len(more) > MAX_BRACE_WORDS:
                return None
            out.extend(more)
        return out
    return [tokens]


def _brace_groups(tokens: list[tuple[str, str]]) -> list[tuple[int, int, list[int]]]:
    """Each matched `{`...`}` as (start, end, its top-level commas), by start, found in one pass."""
    open_groups: list[tuple[int, list[int]]] = []
    groups: list[tuple[int, int, list[int]]] = []
    for index, (kind, char) in enumerate(tokens):
        if kind != _RAW:
            continue
        if char == "{":
            open_groups.append((index, []))
        elif char == "," and open_groups:
            open_groups[-1][1].append(index)
        elif char == "}" and open_groups:
            start, commas = open_groups.pop()
            groups.append((start, index, commas))
    return sorted(groups)


def _sequence(inner: list[tuple[str, str]]) -> list[list[tuple[str, str]]] | None:
    """`{1..3}` and `{a..c}`; None when the braces hold no sequence (then they are plain text)."""
    if any(kind != LIT for kind, _ in inner):
        return None
    match = re.fullmatch(r"(-?\d+|[A-Za-z])\.\.(-?\d+|[A-Za-z])", "".join(text for _, text in inner))
    if match is None:
        return None
    first, last = match.groups()
    numbers = first.lstrip("-").isdigit()
    if numbers != last.lstrip("-").isdigit():
        return None  # {1..z}: not a sequence
    low, high = (int(first), int(last)) if numbers else (ord(first), ord(last))
    step = 1 if high >= low else -1
    if abs(high - low) >= MAX_BRACE_WORDS:
        return [[(SUB, "{sequence}")]]
    return [[(LIT, str(n) if numbers else chr(n))] for n in range(low, high + step, step)]


def _settle(tokens: list[tuple[str, str]]) -> Word:
    """A word from expanded tokens: a leading `~` (or one after `NAME=`) is the home folder."""
    word = Word()
    for index, (kind, text) in enumerate(tokens):
        if kind == _RAW and text == "~" and _tilde_may_start(word):
            after = tokens[index + 1] if index + 1 < len(tokens) else (LIT, "")
            name = re.match(r"[A-Za-z0-9_.-]*", after[1]) if after[0] == LIT else None
            if name is not None and after[1][name.end():name.end() + 1] in ("", "/", ":"):
                word.add(TILDE, name.group())
                if name.group():
                    tokens[index + 1] = (LIT, after[1][name.end():])
                continue
        word.add(LIT if kind == _RAW else kind, text)
    return word


def _tilde_may_start(word: Word) -> bool:
    if not word.parts:
        return True
    return len(word.parts) == 1 and word.parts[0][0] == LIT and re.fullmatch(r"[A-Za-z_]\w*=", word.parts[0][1]) \
        is not None


def _closing(text: str, start: int) -> int:
    """Index of the `)` that closes a `(` just before `start`, skipping quoted text."""
    depth, i = 1, start
    while i < len(text):
        char = text[i]
        if char == "\\":
            i += 2
            continue
        if char in "'\"":
            end = text.find(char, i + 1)
            if end < 0:
                raise Unparsed("an unclosed quote")
            i = end + 1
            continue
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    raise Unparsed("an unclosed parenthesis")


# -- PowerShell and cmd.exe -----------------------------------------------------------------------
_PS_KEYWORDS = {"if", "elseif", "while", "until", "for", "foreach", "switch", "catch", "function", "filter", "param",
                "trap"}  # their `(...)` is a condition or a parameter list, judged as a command of its own
_PS_SEPARATORS = ("&&", "||", ";", "|", "\n", "{", "}", "(", ")")
_PS_REDIRECT = re.compile(r"(?:[1-6*])?(?:>>|>)(?!&)")
_PS_VAR = re.compile(r"\$(?:\{([^}]*)\}|(env:[A-Za-z_][A-Za-z0-9_]*|[A-Za-z_][A-Za-z0-9_:]*))", re.IGNORECASE)


def parse_powershell(text: str) -> list[Simple]:
    """Split a PowerShell command line into simple commands (script blocks are judged as commands)."""
    out = _Commands("powershell")
    i = 0
    while i < len(text):
        char = text[i]
        if char in " \t\r,":
            i += 1
        elif char == "#":
            stop = text.find("\n", i)
            i = len(text) if stop < 0 else stop
        elif redirect := _PS_REDIRECT.match(text, i):
            i = redirect.end()
            while i < len(text) and text[i] in " \t":
                i += 1
            target, i = _ps_word(text, i, out.current)
            out.current.redirects.append((">>" if redirect.group().endswith(">>") else ">", target))
        elif char == "(" and out.current.words and (out.current.words[0].literal or "").lower() not in _PS_KEYWORDS:
            end = _closing(text, i + 1)  # `Remove-Item (Join-Path $HOME x)`: an argument computed in place
            body = text[i + 1:end]
            out.current.words.append(Word([(SUB, body)]))
            out.current.substitutions.append(body)
            i = end + 1
        elif op := next((o for o in _PS_SEPARATORS if text.startswith(o, i)), None):
            i += len(op)
            out.end(piped=op == "|")
        else:
            word, i = _ps_word(text, i, out.current)
            if word.parts:
                out.current.words.append(word)
    out.end(False)
    return out.done


def _ps_word(text: str, i: int, current: Simple) -> tuple[Word, int]:
    word = _Builder()
    while i < len(text):
        char = text[i]
        if char in " \t\r\n;|{}(),>":
            break
        if char == "'":
            end = i + 1
            chunk = []
            while True:
                stop = text.find("'", end)
                if stop < 0:
                    raise Unparsed("an unclosed single quote")
                chunk.append(text[end:stop])
                if text[stop + 1:stop + 2] == "'":
                    chunk.append("'")
                    end = stop + 2
                    continue
                break
            word.add(LIT, "".join(chunk))
            i = stop + 1
        elif char == '"':
            i += 1
            while True:
                if i >= len(text):
                    raise Unparsed("an unclosed double quote")
                c = text[i]
                if c == '"':
                    if text[i + 1:i + 2] == '"':
                        word.add(LIT, '"')
                        i += 2
                        continue
                    i += 1
                    break
                if c == "`" and i + 1 < len(text):
                    word.add(LIT, text[i + 1])
                    i += 2
                elif c == "$":
                    i = _ps_dollar(text, i, word, current)
                else:
                    word.add(LIT, c)
                    i += 1
            if word.empty:
                word.add(LIT, "")
        elif char == "`" and i + 1 < len(text):
            word.add(LIT, text[i + 1])
            i += 2
        elif char == "$":
            i = _ps_dollar(text, i, word, current)
        elif char in "*?[":
            word.add(GLOB, char)
            i += 1
        elif char == "~" and word.empty:
            word.add(TILDE, "")
            i += 1
        else:
            word.add(LIT, char)
            i += 1
    return word.word(), i


def _ps_dollar(text: str, i: int, word: _Builder, current: Simple) -> int:
    if text.startswith("$(", i):
        end = _closing(text, i + 2)
        body = text[i + 2:end]
        word.add(SUB, body)
        current.substitutions.append(body)
        return end + 1
    match = _PS_VAR.match(text, i)
    if not match:
        word.add(LIT, "$")
        return i + 1
    word.add(VAR, match.group(1) or match.group(2))
    return match.end()


_CMD_SEPARATORS = ("&&", "||", "&", "|", "\n", "(", ")")
_CMD_VAR = re.compile(r"%([A-Za-z_][A-Za-z0-9_()]*)%")


def parse_cmd(text: str) -> list[Simple]:
    """Split a cmd.exe command line into simple commands."""
    out = _Commands("cmd")
    i = 0
    while i < len(text):
        char = text[i]
        if char in " \t\r":
            i += 1
        elif char in "<>" or (char in "12" and text[i + 1:i + 2] == ">"):
            op = re.compile(r"[12]?(?:>>|>|<)(?!&)").match(text, i)
            if op is None:  # 2>&1
                i += 4 if text.startswith("2>&1", i) else 1
                continue
            i = op.end()
            while i < len(text) and text[i] in " \t":
                i += 1
            target, i = _cmd_word(text, i)
            if ">" in op.group():
                out.current.redirects.append((">>" if ">>" in op.group() else ">", target))
        elif sep := next((s for s in _CMD_SEPARATORS if text.startswith(s, i)), None):
            i += len(sep)
            out.end(piped=sep == "|")
        else:
            word, i = _cmd_word(text, i)
            if word.parts:
                out.current.words.append(word)
    out.end(False)
    return out.done


def _cmd_word(text: str, i: int) -> tuple[Word, int]:
    word = _Builder()
    quoted = False
    while i < len(text):
        char = text[i]
        if not quoted and char in " \t\r\n&|()<>":
            break
        if char == '"':
            quoted = not quoted
            if word.empty:
                word.add(LIT, "")
            i += 1
        elif char == "^" and not quoted and i + 1 < len(text):
            word.add(LIT, text[i + 1])
            i += 2
        elif char == "%" and (match := _CMD_VAR.match(text, i)):
            word.add(VAR, "env:" + match.group(1))
            i = match.end()
        elif char in "*?":
            word.add(GLOB, char)
            i += 1
        else:
            word.add(LIT, char)
            i += 1
    return word.word(), i


PARSERS = {"posix": parse_posix, "powershell": parse_powershell, "cmd": parse_cmd}
