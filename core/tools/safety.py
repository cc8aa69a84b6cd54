"""Which commands and writes need the user's yes before they run.

Judged on the parsed command (`core.tools.cmdline`), not on its text: the argv after quoting and
known expansions (including variables set earlier in the line by `X=`, `export`, `declare`, `printf -v`,
and symlinks made earlier by `ln -s`), looking through `sudo`, `env`, `flock`, `xargs`, `find -exec`,
`sh -c`, `eval`, functions and interpreter one-liners. Asked about:

- a delete, move, overwrite, in-place edit (`sed -i`, `perl -pi`), truncate or recursive permission
  change whose target is outside the workspace, is the workspace itself or a folder holding it (the
  system temp folder's contents and `/dev/null` are scratch space);
- a delete or move of the repository's history (`.git`, its objects, refs, logs);
- git commands that discard uncommitted work, rewrite history or destroy remote refs;
- disk and filesystem tools, raw device writes, shutdown, irrecoverable wipes, writes to credential
  files;
- what cannot be judged before it runs: a target or command name known only at run time, text
  piped into a shell, `eval` of something computed, an interpreter one-liner that deletes or spawns.

This is a guard rail against mistakes, not a sandbox: commands run with the user's rights, and
`--yes` approves everything. Fails closed: when nobody can answer (`--one` without `--yes`, piped
input), the action is refused and the model is told why, so it can choose a safer way.
"""

from __future__ import annotations

import base64
import binascii
import itertools
import os
import re
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from core.tools.cmdline import GLOB, LIT, PARSERS, SUB, TILDE, VAR, Simple, Unparsed, Word
from core.tools.oneliners import awk_in_place_files, perl_in_place_files, sed_in_place_files

MAX_DEPTH = 6  # nested sh -c / eval / $(...) levels before giving up (and asking)

# Files that hold credentials: writing to them needs a yes.
_CREDENTIAL_PATH = re.compile(
    r"(?:^|[/\\])(?:\.ssh[/\\]|\.aws[/\\]credentials|\.netrc$|_netrc$|\.git-credentials$|\.npmrc$|\.pypirc$"
    r"|\.docker[/\\]config\.json$|\.kube[/\\]config$|\.env(?!\.(?:example|sample|template|dist)$)(?:\.[\w.-]+)?$|id_(?:rsa|ed25519|ecdsa|dsa)\b"
    r"|\.gnupg[/\\]|credentials\.json$)",
    re.IGNORECASE,
)
_FORK_BOMB = re.compile(r":\(\)\s*\{\s*:\s*\|\s*:\s*&\s*\}\s*;\s*:")
_DEVICE = re.compile(r"^/dev/(?:sd|nvme|hd|disk|mmcblk|vd|xvd|md|dm-|mapper/)")
_HARMLESS_SINKS = {"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty", "$null", "nul"}
_WINDOWS_ABSOLUTE = re.compile(r"^(?:[A-Za-z][A-Za-z0-9]*:|\\\\|//)")

_SHELLS = {"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish"}
_INTERPRETERS = {"python": "-c", "python2": "-c", "python3": "-c", "py": "-c", "pypy": "-c", "pypy3": "-c",
                 "node": "-e", "nodejs": "-e", "deno": "eval", "bun": "-e", "perl": "-e", "ruby": "-e",
                 "php": "-r", "lua": "-e", "osascript": "-e"}
_CODE_DANGER = re.compile(
    r"rmtree|\bremove\s*\(|\bunlink|\brmdir|\brm\s*\(|rmSync|\brm_rf\b|\brm_r\b|FileUtils\.rm|File\.delete"
    r"|\brename|\breplace\s*\(|shutil\.move|\bmove\s*\(|truncate|\bsystem\b|subprocess|Popen|\bspawn|execSync"
    r"|child_process|\bexec\s*\(|\beval\s*\(|`|\bos\.exec|\bchmod|\bchown|Remove-Item|\bkill|\bqx\b"
    r"|__import__|\bgetattr|write_text|write_bytes|writeFile|open\s*\([^)]*,\s*(?:mode\s*=\s*)?['\"][rbt]*[wax+]",
    re.IGNORECASE)
_WRAPPERS_WITH_ARGS = {  # a command that runs the rest of its argv, and its options that take a value
    "sudo": {"-u", "-g", "-h", "-p", "-C", "-D", "-r", "-t", "-U", "-T", "--user", "--group", "--chdir"},
    "doas": {"-u", "-C"}, "nice": {"-n", "--adjustment"}, "nohup": set(), "time": {"-f", "-o"},
    "timeout": {"-s", "-k", "--signal", "--kill-after"}, "command": set(), "exec": {"-a"}, "builtin": set(),
    "stdbuf": {"-i", "-o", "-e"}, "ionice": {"-c", "-n", "-p"}, "chrt": set(), "setsid": set(),
    "caffeinate": set(), "unbuffer": set(), "strace": {"-o", "-e", "-p"}, "watch": {"-n", "-d"},
    "busybox": set(), "fakeroot": set(), "unshare": set(), "nsenter": {"-t", "--target"}, "npx": {"-p", "--package"},
    "runuser": {"-u", "-g", "-G", "--user", "--group"}, "systemd-run": {"-p", "--property", "-u", "--unit", "-E",
                                                                    "--setenv", "--uid", "--gid", "-M", "--machine"},
    "then": set(), "do": set(), "else": set(), "elif": set(), "if": set(),
    "while": set(), "until": set(), "!": set(), "{": set(), "}": set(), "&": set(), ".": set(),
}
_XARGS_ARGS = {"-I", "-i", "-n", "-P", "-d", "-E", "-e", "-L", "-l", "-s", "-a", "--max-args", "--max-procs",
               "--delimiter", "--arg-file", "--replace"}


@dataclass
class _State:
    workspace: Path
    cwd: Path | None
    home: Path
    env: dict[str, str]
    variables: dict[str, str | None] = field(default_factory=dict)
    depth: int = 0
    dialect: str = "posix"
    upstream: Simple | None = None  # the command whose output is piped into the one being judged
    # Symlinks made earlier in this command line (link -> what it points to). Shared with nested
    # shells: a link is on disk for every process, while variables and cwd are per process.
    links: dict[Path, Path] = field(default_factory=dict)


def destructive_reason(command: str, workspace: Path | None = None, dialect: str | None = None) -> str | None:
    """Why this shell command needs approval, or None when it does not.

    `dialect` is "posix", "powershell" or "cmd" (default: the platform shell's)."""
    root = Path(workspace or Path.cwd()).resolve()
    state = _State(workspace=root, cwd=root, home=Path(os.path.expanduser("~")), env=dict(os.environ))
    if _FORK_BOMB.search(command):
        return "fork bomb"
    return _script(command, dialect or _platform_dialect(), state)


def is_credential_path(path: str) -> bool:
    return bool(_CREDENTIAL_PATH.search(path.strip()))


def _platform_dialect() -> str:
    from core.tools.shell import detect_shell

    return "powershell" if "PowerShell" in detect_shell().dialect else "posix"


def _script(text: str, dialect: str, state: _State) -> str | None:
    if state.depth > MAX_DEPTH:
        return "nested too deeply to judge before it runs"
    try:
        commands = PARSERS[dialect](text)
    except Unparsed as exc:
        return f"cannot be parsed ({exc}), so it cannot be judged before it runs"
    state.depth += 1
    try:
        previous: Simple | None = None
        for simple in commands:
            state.upstream = previous if simple.piped else None
            why = _simple(simple, state)
            if why:
                return why
            previous = simple
    finally:
        state.depth -= 1
    return None


def _simple(cmd: Simple, state: _State) -> str | None:
    state.dialect = cmd.dialect
    for body in cmd.substitutions:
        why = _script(body, "powershell" if cmd.dialect == "powershell" else "posix", _nested(state))
        if why:
            return why
    for op, target in cmd.redirects:
        if op in (">&", "<&") or (target.literal or "").lstrip("-").isdigit() or op.startswith("<"):
            continue
        why = _target("writes to", target, state, cmd.dialect, write=True)
        if why:
            return why
    words = list(cmd.words)
    prefix: dict[str, str | None] = {}
    if cmd.dialect == "posix":
        while words and _assignment(words[0]):  # NAME=value before a command, or on its own
            name, _, _ = (words[0].parts[0][1]).partition("=")
            value = _value(Word(_after_equals(words[0])), state)
            if len(words) == 1:
                state.variables[name] = value
            else:
                prefix[name] = value
            words.pop(0)
    if cmd.dialect == "powershell" and len(words) >= 2 and words[1].literal == "=" and words[0].parts[:1] \
            and words[0].parts[0][0] == VAR:
        state.variables[words[0].parts[0][1].lower()] = _value(words[2], state) if len(words) > 2 else "$null"
        return None
    if not words:
        return None
    if not prefix:
        return _argv(words, cmd, state)
    # `X=~ sh -c 'rm -rf "$X"'`: the command (and what it starts) sees X, the rest of the line does not
    inner = _nested(state)
    inner.depth = state.depth
    inner.variables.update(prefix)
    why = _argv(words, cmd, inner)
    state.cwd = inner.cwd  # `X=1 cd /` still changes the folder
    return why


def _argv(words: list[Word], cmd: Simple, state: _State) -> str | None:
    name = _value(words[0], state)
    if name is None:
        return "runs a command whose name is only known when it runs"
    base = _command_name(name, cmd.dialect)
    args = words[1:]
    if base in _WRAPPERS_WITH_ARGS:
        return _argv(_skip_options(args, _WRAPPERS_WITH_ARGS[base]), cmd, state) if args else None
    if base == "env":
        return _env(args, cmd, state)
    if base in _WRAPPERS_AFTER_OPERAND:  # flock LOCKFILE command..., chroot NEWROOT command...
        rest = _skip_options(args, _WRAPPERS_AFTER_OPERAND[base])
        return _argv(rest[1:], cmd, state) if len(rest) > 1 else None
    if base == "parallel":
        return _parallel(args, cmd, state)
    if cmd.dialect == "posix" and base == "function":  # `function f { body; }`: the body is judged as if it ran
        return _argv(args[1:], cmd, state) if len(args) > 1 else None
    if cmd.dialect == "posix" and base in _DECLARERS:
        _declare(base, args, state)
        return None
    if base == "xargs":
        rest = _skip_options(args, _XARGS_ARGS)
        if not rest:
            return None
        return _argv(rest, cmd, state) or _unknown_args(rest, cmd, state)
    if base in ("cd", "pushd", "set-location", "sl", "chdir"):
        _change_dir(args, state)
        return None
    if cmd.dialect == "posix" and base in ("for", "select") and len(args) > 2 and args[1].literal == "in":
        _loop_variable(args[0].literal or "", args[2:], state)
        return None
    if cmd.dialect == "posix" and base in ("for", "read", "select"):
        for word in args:
            if (word.literal or "") in ("in", "do", ";"):
                break
            if word.literal and re.fullmatch(r"[A-Za-z_]\w*", word.literal):
                state.variables[word.literal] = None
        return None
    handler = _HANDLERS.get(base)
    if cmd.dialect == "powershell" and cmd.piped and (base in _PS_DELETE or base in _PS_MOVE):
        handler = _windows_command  # `gci ~ | rm -r`: PowerShell's rm takes its paths from the pipeline
    if handler is not None:
        return handler(base, args, cmd, state)
    if cmd.dialect != "posix":
        return _windows_command(base, args, cmd, state)
    return None


# -- nested code ----------------------------------------------------------------------------------
def _nested(state: _State) -> _State:
    return _State(state.workspace, state.cwd, state.home, state.env, dict(state.variables), state.depth + 1,
                  state.dialect, links=state.links)


def _shell(base: str, args: list[Word], cmd: Simple, state: _State) -> str | None:
    values = [_value(w, state) for w in args]
    command_mode, index = False, 0
    while index < len(values):  # options, as the shell reads them, up to the code or the script
        value = values[index]
        if value is None or value in ("-", "--", "+") or not value.startswith(("-", "+")):
            index += value in ("-", "--")
            break
        command_mode = command_mode or (not value.startswith("--") and "c" in value[1:])
        index += 2 if value in _SHELL_VALUE_OPTIONS else 1
    rest = values[index:]
    if command_mode:
        if not rest:
            return None
        if rest[0] is None:
            return f"{base} -c runs text that is only known when it runs"
        inner = _nested(state)
        for number, argument in enumerate(rest[1:10]):  # sh -c 'rm -rf "$1"' _ ~: $0, $1, ...
            inner.variables[str(number)] = argument
        return _script(rest[0], "posix", inner)
    if rest:
        return None  # `sh script.sh`: a file of the project, run like any program
    if cmd.heredoc is not None:
        return _script(cmd.heredoc, "posix", _nested(state))
    if cmd.piped:
        return f"pipes text into {base}, which runs it unseen"
    return None


_SHELL_VALUE_OPTIONS = {"-o", "+o", "-O", "+O", "--rcfile", "--init-file"}


def _eval(base: str, args: list[Word], cmd: Simple, state: _State) -> str | None:
    values = [_value(w, state) for w in args]
    if any(v is None for v in values):
        return "eval of text that is only known when it runs"
    return _script(" ".join(v for v in values if v is not None), "posix", _nested(state))


def _interpreter(base: str, args: list[Word], cmd: Simple, state: _State) -> str | None:
    flag = _INTERPRETERS.get(re.sub(r"[\d.]+$", "", base) or base, _INTERPRETERS.get(base, "-c"))
    values = [_value(w, state) for w in args]
    if base in ("perl", "ruby"):
        why = _in_place(perl_in_place_files(values), args, cmd, state)
        if why:
            return why
    for index, value in enumerate(values):
        if value in (flag, "-e", "-E", "--eval", "-p", "--print"):
            code = values[index + 1] if index + 1 < len(values) else ""
        elif value and flag == "-c" and (cluster := re.fullmatch(r"-[bBdEhiIOqsSuvx]*c(.*)", value, re.DOTALL)):
            code = cluster.group(1) or (values[index + 1] if index + 1 < len(values) else "")  # -c'code', -Ic code
        else:
            code = ""
        if code is None:
            return f"a {base} one-liner that is only known when it runs"
        if code:
            return _code(base, code)
        if value == "-m":
            return None
        if value is None or not value.startswith("-"):
            return None  # a script file
    if cmd.heredoc is not None:
        return _code(base, cmd.heredoc)
    if cmd.piped and values in ([], ["-"]):
        return f"pipes code into {base}, which runs it unseen"
    return None


def _sed(base: str, args: list[Word], cmd: Simple, state: _State) -> str | None:
    read = sed_in_place_files if base == "sed" else awk_in_place_files
    return _in_place(read([_value(w, state) for w in args]), args, cmd, state)


def _in_place(files: list[int] | None, args: list[Word], cmd: Simple, state: _State) -> str | None:
    """An in-place edit rewrites each of its files: judged as a write to each."""
    return _targets("rewrites", [args[i] for i in files], state, cmd.dialect, write=True) if files else None


def _code(base: str, code: str) -> str | None:
    match = _CODE_DANGER.search(code)
    if match:
        return f"a {base} one-liner that can delete files or run commands ({match.group()})"
    return None


_WRAPPERS_AFTER_OPERAND = {"flock": {"-w", "--wait", "--timeout", "-E", "--conflict-exit-code"},
                           "chroot": {"--userspec", "--groups"}}


def _parallel(args: list[Word], cmd: Simple, state: _State) -> str | None:
    """`parallel CMD ::: A B`: CMD runs once with each argument; without `:::` they come from stdin."""
    rest = _skip_options(args, {"-j", "--jobs", "-S", "--sshlogin", "--joblog", "-a", "--arg-file"})
    split = next((i for i, w in enumerate(rest) if w.literal in (":::", "::::")), None)
    if split is None:
        return (_argv(rest, cmd, state) or _unknown_args(rest, cmd, state)) if rest else None
    if rest[split].literal == "::::" and rest[:split]:
        return _unknown_args(rest[:split], cmd, state)
    for item in rest[split + 1:] or [Word.of("")]:
        why = _argv([*rest[:split], item], cmd, state) if rest[:split] else None
        if why:
            return why
    return None


def _su(base: str, args: list[Word], cmd: Simple, state: _State) -> str | None:
    """`su [user] -c CODE`: CODE runs in a shell."""
    values = [_value(w, state) for w in args]
    for index, value in enumerate(values[:-1]):
        if value in ("-c", "--command"):
            code = values[index + 1]
            return f"{base} -c runs text that is only known when it runs" if code is None else \
                _script(code, "posix", _nested(state))
    return None


_DECLARERS = {"export", "declare", "typeset", "readonly", "local", "printf"}


def _declare(base: str, args: list[Word], state: _State) -> None:
    """`export X=~` and `printf -v X ~` set X for the rest of the line, as a plain `X=~` does."""
    if base == "printf":
        values = [_value(w, state) for w in args]
        if len(values) >= 3 and values[0] == "-v" and values[1]:
            form = values[2]
            state.variables[values[1]] = (values[3] if len(values) > 3 else "") if form == "%s" \
                else form if form is not None and "%" not in form and "\\" not in form else None
        return
    for word in args:
        if _assignment(word):
            name, value = word.parts[0][1].partition("=")[0], _value(Word(_after_equals(word)), state)
            state.variables[name.rstrip("+")] = value


def _env(args: list[Word], cmd: Simple, state: _State) -> str | None:
    rest = list(args)
    while rest:
        value = _value(rest[0], state)
        if value in ("-u", "--unset", "-C", "--chdir", "-S", "--split-string"):
            if value in ("-S", "--split-string") and len(rest) > 1:
                code = _value(rest[1], state)
                return "env -S with text known only when it runs" if code is None else \
                    _script(code, "posix", _nested(state))
            if value in ("-C", "--chdir") and len(rest) > 1:
                _change_dir(rest[1:2], state)
            rest = rest[2:]
        elif value is not None and value.startswith("--chdir="):
            _change_dir([Word.of(value.partition("=")[2])], state)
            rest = rest[1:]
        elif value is not None and (value.startswith("-") or "=" in value):
            rest = rest[1:]
        else:
            break
    return _argv(rest, cmd, state) if rest else None


def _powershell(base: str, args: list[Word], cmd: Simple, state: _State) -> str | None:
    values = [_value(w, state) for w in args]
    for index, value in enumerate(values):
        lower = (value or "").lower()
        if lower in ("-encodedcommand", "-enc", "-ec", "-e", "-en", "-encoded"):
            encoded = values[index + 1] if index + 1 < len(values) else ""
            try:
                code = base64.b64decode(encoded or "", validate=True).decode("utf-16-le")
            except (binascii.Error, UnicodeDecodeError, ValueError):
                return "an encoded PowerShell command that cannot be read"
            return _script(code, "powershell", _nested(state))
        if lower in ("-command", "-c", "-com", "-comm", "-comma", "-comman") or (value and not value.startswith("-")):
            rest = values[index + 1:] if lower.startswith("-c") else values[index:]
            if lower and not lower.startswith("-c") and lower.endswith(".ps1"):
                return None  # a script file
            if any(v is None for v in rest):
                return "a PowerShell command that is only known when it runs"
            return _script(" ".join(v for v in rest if v is not None), "powershell", _nested(state))
        if lower in ("-file", "-f"):
            return None
    return None


def _cmd_exe(base: str, args: list[Word], cmd: Simple, state: _State) -> str | None:
    values = [_value(w, state) for w in args]
    for index, value in enumerate(values):
        if (value or "").lower() in ("/c", "/k", "/r"):
            rest = values[index + 1:]
            if any(v is None for v in rest):
                return "a cmd command that is only known when it runs"
            return _script(" ".join(v for v in rest if v is not None), "cmd", _nested(state))
    return None


# -- what a command does to files -----------------------------------------------------------------
def _rm(base: str, args: list[Word], cmd: Simple, state: _State) -> str | None:
    if base == "shred":
        return "irrecoverable file wipe"
    operands = _operands(args, state, with_value={"-s", "--size", "-r", "--reference"} if base == "truncate" else set())
    verb = {"truncate": "truncates", "rmdir": "deletes", "unlink": "deletes"}.get(base, "deletes")
    return _targets(verb, operands, state, cmd.dialect)


def _mv(base: str, args: list[Word], cmd: Simple, state: _State) -> str | None:
    operands, target_dir = _operands_and_target(args, state)
    if base == "mv":  # what is moved away is gone from where it was
        why = _targets("moves", operands, state, cmd.dialect)
        return why or (_target("moves into", target_dir, state, cmd.dialect) if target_dir else None)
    destination = target_dir or (operands[-1] if len(operands) > 1 else None)
    if base == "ln":
        _remember_link(args, operands, destination, state)
    if base == "ln" and not any((_value(w, state) or "").startswith("-") and "f" in (_value(w, state) or "")
                                for w in args):
        return None  # ln without -f never replaces anything
    if base == "rsync" and destination is not None and ":" in (destination.literal or ""):
        return None  # a remote destination
    return _target("overwrites", destination, state, cmd.dialect, write=True) if destination else None


def _tee(base: str, args: list[Word], cmd: Simple, state: _State) -> str | None:
    return _targets("writes to", _operands(args, state), state, cmd.dialect, write=True)


def _dd(base: str, args: list[Word], cmd: Simple, state: _State) -> str | None:
    for word in args:
        value = _value(word, state)
        if value is not None and value.startswith("of="):
            return _target("writes to", Word(_after_equals(word)), state, cmd.dialect, write=True)
        if value is None:
            return "dd with an output only known when it runs"
    return None


def _chmod(base: str, args: list[Word], cmd: Simple, state: _State) -> str | None:
    values = [_value(w, state) for w in args]
    recursive = any(v and (v in ("--recursive", "-R") or (re.fullmatch(r"-[A-Za-z]+", v) and "R" in v))
                    for v in values)
    if not recursive:
        return None
    operands = _operands(args, state)
    if not any((v or "").startswith("--reference") for v in values):
        operands = operands[1:]  # the mode or owner
    return _targets("recursive permission change of", operands, state, cmd.dialect)


def _find(base: str, args: list[Word], cmd: Simple, state: _State) -> str | None:
    values = [_value(w, state) for w in args]
    roots: list[Word] = []
    for word, value in zip(args, values, strict=True):
        if value is not None and (value.startswith("-") or value in ("(", "!", ")")):
            break
        roots.append(word)
    deletes = "-delete" in values
    for index, value in enumerate(values):
        if value in ("-exec", "-execdir", "-ok", "-okdir"):
            end = next((i for i in range(index + 1, len(values)) if values[i] in (";", "+")), len(values))
            inner = args[index + 1:end]
            name = _value(inner[0], state) if inner else ""
            deletes = deletes or name is None or _command_name(name, "posix") in _DELETERS
            # what -exec runs, judged on its own: `{}` is one found file (some file under the roots)
            found = _found_file(roots or [Word.of(".")], state)
            why = _argv([found if _value(w, state) == "{}" else w for w in inner], cmd, _nested(state)) \
                if inner and not deletes else None
            if why:
                return why
    if not deletes:
        return None
    if any(v == "-name" and n == ".git" for v, n in itertools.pairwise(values)):
        return "deletes the repository's history (.git)"
    some = any(v in _FIND_TESTS for v in values)  # only matching files go, as with a pattern under each root
    return _targets("deletes files under", roots or [Word.of(".")], state, cmd.dialect, some=some)


def _found_file(roots: list[Word], state: _State) -> Word:
    """A word for a file find found: under its root when there is one root, else unknown."""
    value = _value(roots[0], state) if len(roots) == 1 else None
    return Word.of(value.rstrip("/") + "/found") if value else Word([(SUB, "{}")])


def _extract(base: str, args: list[Word], cmd: Simple, state: _State) -> str | None:
    """`tar -xf a.tar -C DIR`, `unzip a.zip -d DIR`: extracting overwrites files in DIR."""
    values = [_value(w, state) or "" for w in args]
    if base == "tar" and not any(v in ("--extract", "--get") or re.fullmatch(r"-?[A-Za-z]*x[A-Za-z]*", v)
                                 for v in values[:1] + [v for v in values[1:] if v.startswith("-")]):
        return None
    flag = "-d" if base == "unzip" else "-C"
    for index, value in enumerate(values):
        if value in (flag, "--directory") and index + 1 < len(args):
            return _target("extracts over", args[index + 1], state, cmd.dialect, write=True)
        if value.startswith("--directory="):
            return _target("extracts over", Word(_after_equals(Word([(LIT, value[2:])]))), state, cmd.dialect,
                           write=True)
    return None


def _disk(base: str, args: list[Word], cmd: Simple, state: _State) -> str | None:
    if base == "format" and not any(re.match(r"[A-Za-z]:", _value(w, state) or "") for w in args):
        return None  # `format` is a project script unless it names a drive (format.com under Git Bash)
    return "disk or filesystem tool"


def _power(base: str, args: list[Word], cmd: Simple, state: _State) -> str | None:
    if base == "systemctl":
        sub = _value(args[0], state) if args else ""
        return "shuts the machine down" if sub in ("poweroff", "reboot", "halt", "kexec") else None
    if base == "init":
        return "shuts the machine down" if args and _value(args[0], state) in ("0", "6") else None
    return "shuts the machine down"


def _git(base: str, args: list[Word], cmd: Simple, state: _State) -> str | None:
    values = [v or "" for v in (_value(w, state) for w in args)]
    while values and values[0].startswith("-"):  # global options: -C dir, -c k=v, --git-dir=...
        values = values[2:] if values[0] in ("-C", "-c", "--git-dir", "--work-tree", "--namespace") else values[1:]
    if not values:
        return None
    sub, rest = values[0], values[1:]
    flags = {v for v in rest if v.startswith("-")}
    short = "".join(v[1:] for v in rest if re.fullmatch(r"-[A-Za-z]+", v))
    if sub == "push":
        if flags & {"--force", "--force-with-lease", "--mirror", "--delete", "--prune", "--force-if-includes"} \
                or any(v.startswith("--force-with-lease") for v in flags) or "f" in short or "d" in short:
            return "force push or deletes remote refs"
        if any(v.startswith("+") or (v.startswith(":") and len(v) > 1) for v in rest if not v.startswith("-")):
            return "force push or deletes remote refs"
        return None
    if sub == "reset" and ("--hard" in flags or "--merge" in flags or "--keep" in flags):
        return "discards uncommitted work"
    if sub == "clean" and ("f" in short or "--force" in flags) and not ("n" in short or "--dry-run" in flags):
        return "deletes untracked files"
    if sub == "checkout" and ("--" in rest or "f" in short or "--force" in flags or "." in rest
                              or any(_is_existing_path(v, state) for v in rest if not v.startswith("-"))):
        return "discards uncommitted work"
    if sub == "restore" and ("--staged" not in flags or "--worktree" in flags) and "S" not in short:
        return "discards uncommitted work"
    if sub == "switch" and ({"--discard-changes", "--force"} & flags or "f" in short):
        return "discards uncommitted work"
    if sub == "branch" and ("D" in short or "M" in short or "C" in short or
                            (("d" in short or "--delete" in flags) and ("f" in short or "--force" in flags))):
        return "deletes or overwrites a branch"
    if sub == "worktree" and rest[:1] == ["remove"] and ("--force" in flags or "f" in short):
        return "deletes a worktree with its uncommitted work"
    if sub == "stash" and rest[:1] in (["drop"], ["clear"]):
        return "deletes stashed work"
    if sub == "rebase" and not flags & {"--abort", "--continue", "--skip", "--quit", "--edit-todo", "--show-current-patch"}:
        return "rewrites history"
    if (sub == "commit" and "--amend" in flags) or sub in ("filter-branch", "filter-repo", "replace"):
        return "rewrites history"
    if sub == "reflog" and rest[:1] in (["expire"], ["delete"]):
        return "deletes history"
    if sub == "update-ref" and ("-d" in flags or "--stdin" in flags):
        return "deletes a ref"
    if sub == "gc" and any(v.startswith("--prune") for v in flags):
        return "deletes unreachable history"
    return None


_FIND_TESTS = {"-name", "-iname", "-path", "-ipath", "-wholename", "-regex", "-iregex", "-type", "-newer",
               "-mtime", "-mmin", "-atime", "-ctime", "-size", "-empty", "-user", "-group", "-perm", "-links"}
_DELETERS = {"rm", "rmdir", "unlink", "shred", "truncate", "mv", "srm", "wipe"}
_HANDLERS = {
    **dict.fromkeys(_SHELLS, _shell), "eval": _eval,
    **dict.fromkeys(_INTERPRETERS, _interpreter),
    "powershell": _powershell, "pwsh": _powershell, "cmd": _cmd_exe,
    **dict.fromkeys(("rm", "rmdir", "unlink", "shred", "srm", "wipe", "truncate", "rimraf", "trash", "trash-put"),
                    _rm), "su": _su,
    **dict.fromkeys(("mv", "cp", "install", "ln", "rsync"), _mv),
    "tee": _tee, "dd": _dd, **dict.fromkeys(("sed", "awk", "gawk"), _sed), **dict.fromkeys(("chmod", "chown", "chgrp", "setfacl"), _chmod), "find": _find,
    **dict.fromkeys(("mkfs", "mke2fs", "mkswap", "wipefs", "fdisk", "sfdisk", "parted", "diskpart", "format",
                     "gdisk", "sgdisk", "cryptsetup", "blkdiscard"), _disk),
    **dict.fromkeys(("shutdown", "reboot", "halt", "poweroff", "systemctl", "init"), _power),
    "git": _git, "tar": _extract, "unzip": _extract,
}


# -- PowerShell cmdlets and cmd.exe built-ins ----------------------------------------------------
_PS_DELETE = {"remove-item", "rm", "del", "erase", "rd", "rmdir", "ri", "clear-content", "clc",
              "clear-item", "cli", "remove-itemproperty", "rp"}
_PS_MOVE = {"move-item", "mv", "move", "mi", "rename-item", "ren", "rni"}
_PS_WRITE = {"copy-item", "cp", "copy", "cpi", "set-content", "sc", "out-file", "add-content", "ac", "xcopy",
             "robocopy", "new-item", "ni"}
_PS_DISK = {"format-volume", "clear-disk", "initialize-disk", "remove-partition", "set-partition", "format"}
_PS_POWER = {"stop-computer", "restart-computer"}
_PS_EVAL = {"invoke-expression", "iex", "start-process", "saps", "start", "invoke-command", "icm"}
_PS_LISTERS = {"get-childitem", "gci", "ls", "dir", "get-item", "gi"}
_PS_DOTNET_WRITE = re.compile(r"\[(?:system\.)?io\.(?:file|directory)\]::(?:delete|move|replace|write|append|copy"
                              r"|create|open|setattributes)", re.IGNORECASE)
_PS_VALUE_PARAMS = {"path", "literalpath", "destination", "filter", "include", "exclude", "erroraction", "ea",
                    "warningaction", "credential", "stream", "value", "encoding", "filepath", "itemtype", "name",
                    "newname", "target", "argumentlist", "scriptblock", "computername", "depth"}


def _windows_command(base: str, args: list[Word], cmd: Simple, state: _State) -> str | None:
    named: dict[str, list[Word]] = {}
    positional: list[Word] = []
    words = list(args)
    while words:
        word = words.pop(0)
        value = _value(word, state)
        if value and cmd.dialect == "powershell" and re.fullmatch(r"-[A-Za-z][\w-]*(?::.*)?", value):
            key, _, inline = value[1:].partition(":")
            key = key.lower()
            if inline:
                named.setdefault(key, []).append(Word.of(inline))
            elif key in _PS_VALUE_PARAMS and words:
                named.setdefault(key, []).append(words.pop(0))
            else:
                named.setdefault(key, [])
        elif value and cmd.dialect == "cmd" and re.fullmatch(r"/[A-Za-z0-9:-]+", value):
            named.setdefault(value[1:].lower(), [])
        else:
            positional.append(word)
    if "whatif" in named and not any((_value(w, state) or "").lower() in ("false", "0") for w in named["whatif"]):
        return None  # -WhatIf only tells what would happen; -WhatIf:$false does it
    if cmd.dialect == "powershell" and _PS_DOTNET_WRITE.match(base):
        return f"a .NET call that deletes, moves or writes files ({base})"
    if base in _PS_EVAL:
        code = [_value(w, state) for w in [*named.get("scriptblock", []), *named.get("argumentlist", []),
                                             *positional]]
        if base in ("start-process", "saps", "start"):
            return None if all(code) and not any(_command_name(c or "", "cmd") in _PS_DELETE for c in code) \
                else f"{base} of a command that is only known when it runs"
        if any(c is None for c in code):
            return f"{base} of text that is only known when it runs"
        return _script(" ".join(c for c in code if c), cmd.dialect, _nested(state))
    if base in _PS_DISK:
        return "disk or filesystem tool"
    if base in _PS_POWER:
        return "shuts the machine down"
    paths = [*named.get("path", []), *named.get("literalpath", []), *positional]
    if not paths and cmd.piped and cmd.dialect == "powershell" and (base in _PS_DELETE or base in _PS_MOVE):
        return _piped_items(base, cmd, state)
    if base in _PS_DELETE:
        return _targets("deletes", paths, state, cmd.dialect)
    if base in _PS_MOVE:
        return _targets("moves", [*paths, *named.get("destination", [])], state, cmd.dialect)
    if base in _PS_WRITE:
        copies = base in ("copy-item", "cp", "copy", "cpi", "xcopy", "robocopy")  # their -Path is the source
        destination = named.get("destination") or named.get("filepath") or (
            positional[1:2] if copies else named.get("path") or named.get("literalpath") or positional[:1])
        if base == "robocopy" and ({"mir", "purge", "move"} & set(named)):
            return _targets("deletes or moves", positional[:2], state, cmd.dialect)
        return _targets("writes to", list(destination or []), state, cmd.dialect, write=True)
    return None


# -- words and paths ------------------------------------------------------------------------------
def _value(word: Word, state: _State) -> str | None:
    """The word's value after the expansions known before the command runs; None when not known."""
    out: list[str] = []
    for kind, text in word.parts:
        if kind in (LIT, GLOB):
            out.append(text)
        elif kind == TILDE:
            if text:
                expanded = os.path.expanduser("~" + text)
                if expanded.startswith("~"):
                    return None
                out.append(expanded)
            else:
                out.append(str(state.home))
        elif kind == VAR:
            value = _variable(text, state)
            if value is None:
                return None
            out.append(value)
        elif kind == SUB:
            joined = _join_path(text, state) if state.dialect == "powershell" else None
            if joined is None:
                return None
            out.append(joined)
    return "".join(out)


def _piped_items(base: str, cmd: Simple, state: _State) -> str | None:
    """`Get-ChildItem X | Remove-Item`: what goes is what the listing gives, the items under X."""
    up = state.upstream
    name = _command_name(_value(up.words[0], state) or "", "powershell") if up is not None and up.words else ""
    if up is None or name not in _PS_LISTERS:
        return f"{base} acts on what the pipeline gives it, known only when it runs"
    roots: list[str | None] = []
    filtered = False
    words = list(up.words[1:])
    while words:
        value = _value(words.pop(0), state)
        key = (value or "")[1:].partition(":")[0].lower() if (value or "").startswith("-") else ""
        if key in ("path", "literalpath") and words:
            roots.append(_value(words.pop(0), state))
        elif key:
            filtered = filtered or key in ("filter", "include", "exclude", "name")
            if key in _PS_VALUE_PARAMS and ":" not in (value or "") and words:
                words.pop(0)
        else:
            roots.append(value)
    items = [Word([(SUB, "pipeline")]) if root is None else Word.of(root) if name in ("get-item", "gi")
             else Word([(LIT, root.rstrip("/\\") + "/"), (GLOB, "*")]) for root in roots or ["."]]
    return _targets("deletes" if base in _PS_DELETE else "moves", items, state, cmd.dialect, some=filtered)


def _join_path(body: str, state: _State) -> str | None:
    """`(Join-Path $HOME 'x')` is known before it runs: the parts joined by a backslash."""
    try:
        commands = PARSERS["powershell"](body)
    except Unparsed:
        return None
    words = commands[0].words if len(commands) == 1 else []
    if not words or (words[0].literal or "").lower() != "join-path":
        return None
    values = [_value(w, state) for w in words[1:] if not (w.literal or "").startswith("-")]
    if len(values) < 2 or any(v is None for v in values):
        return None
    return "\\".join(v.rstrip("/\\") for v in values if v is not None)


def _variable(name: str, state: _State) -> str | None:
    if state.dialect != "posix":
        name = name.lower()  # PowerShell and cmd names ignore case
    if name in state.variables:
        return state.variables[name]
    if name.isdigit():  # $1 of a function or script: not known here
        return None
    if name.lower().startswith("env:"):  # $env:X, %X%: unset is unknown, not empty
        wanted = name[4:].lower()
        return next((v for k, v in state.env.items() if k.lower() == wanted), None)
    if name.lower() == "home":
        return str(state.home)
    if name.lower() == "pwd":
        return None if state.cwd is None else str(state.cwd)
    if state.dialect != "posix":
        return {"null": "$null", "true": "true", "false": "false"}.get(name)
    # An unset POSIX variable expands to nothing ("$UNSET/" is "/"): that is what runs.
    return state.env.get(name, "")


def _assignment(word: Word) -> bool:
    return bool(word.parts) and word.parts[0][0] == LIT and re.match(r"[A-Za-z_]\w*=", word.parts[0][1]) is not None


def _after_equals(word: Word) -> list[tuple[str, str]]:
    first = word.parts[0][1].partition("=")[2]
    tilde = re.match(r"~([\w.-]*)(?=/|$)", first)
    head = [(TILDE, tilde.group(1)), (LIT, first[tilde.end():])] if tilde else [(LIT, first)]
    return [*(head if first else []), *word.parts[1:]]


def _command_name(name: str, dialect: str) -> str:
    base = re.split(r"[/\\]", name)[-1]
    if dialect != "posix" or sys.platform == "win32":
        base = base.lower()
        base = re.sub(r"\.(exe|cmd|bat|com)$", "", base)
    if re.fullmatch(r"mkfs(\.\w+)?", base):
        return "mkfs"
    if re.fullmatch(r"(python|pypy)[\d.]*", base):
        return "python3"
    return base


def _skip_options(args: list[Word], with_value: set[str]) -> list[Word]:
    rest = list(args)
    while rest:
        value = rest[0].literal
        if value is None or not value.startswith("-") or value == "-":
            break
        rest = rest[2:] if value in with_value else rest[1:]
        if value == "--":
            break
    if rest and rest[0].literal and re.fullmatch(r"\d+(\.\d+)?[smhd]?", rest[0].literal):
        rest = rest[1:]  # timeout's duration, nice's priority
    return rest


def _operands(args: list[Word], state: _State, with_value: set[str] | None = None) -> list[Word]:
    out: list[Word] = []
    options = True
    skip = False
    for word in args:
        value = _value(word, state)
        if skip:
            skip = False
            continue
        if options and value == "--":
            options = False
        elif options and value is not None and value.startswith("-") and value != "-":
            skip = value in (with_value or set())
        else:
            out.append(word)
    return out


def _operands_and_target(args: list[Word], state: _State) -> tuple[list[Word], Word | None]:
    target: Word | None = None
    rest: list[Word] = []
    words = list(args)
    while words:
        word = words.pop(0)
        value = _value(word, state) or ""
        if value in ("-t", "--target-directory") and words:
            target = words.pop(0)
        elif value.startswith("--target-directory="):
            target = Word.of(value.partition("=")[2])
        elif value in ("-S", "--suffix") and words:
            words.pop(0)
        else:
            rest.append(word)
    return _operands(rest, state), target


def _unknown_args(rest: list[Word], cmd: Simple, state: _State) -> str | None:
    name = _command_name(_value(rest[0], state) or "", cmd.dialect)
    if name in _DELETERS or name in ("chmod", "chown", "shred", "dd", "tee", "cp", "git"):
        return f"{name} acts on names that are only known when it runs (fed in by xargs or parallel)"
    return None


def _targets(verb: str, words: list[Word], state: _State, dialect: str, write: bool = False,
             some: bool = False) -> str | None:
    for word in words:
        why = _target(verb, word, state, dialect, write, some)
        if why:
            return why
    return None


def _target(verb: str, word: Word, state: _State, dialect: str, write: bool = False,
            some: bool = False) -> str | None:
    """Why acting on this word's path needs a yes; `some`: only some of the files under it."""
    value = _value(word, state)
    if value is None:
        return f"{verb} a path that is only known when it runs"
    if value == "":
        return None
    if is_credential_path(value) and verb != "deletes":
        return f"writes to a credential file ({value})"
    if value.lower() in _HARMLESS_SINKS or (write and value.startswith("/dev/fd/")):
        return None
    if _DEVICE.match(value):
        return "raw write to a device"
    path = _path(value, state, dialect)
    if path is None:
        return f"{verb} {value}, a path outside the workspace"
    if not write and _history(path, state):
        return f"{verb} {value} (the repository's history)"
    if some:
        path = path / "*.selected"
    glob = some or any(kind == GLOB for kind, _ in word.parts) or (
        any(kind == VAR for kind, _ in word.parts) and any(c in value for c in "*?["))  # $f from `for f in *`
    where = _where(path, glob, state, spelled_in_temp=_spelled_in_temp(value, state))
    if where:
        return f"{verb} {value} ({where})"
    return None


def _path(value: str, state: _State, dialect: str) -> Path | None:
    """The absolute path a word names, or None for a Windows path on a POSIX machine (outside)."""
    if sys.platform != "win32":
        if _WINDOWS_ABSOLUTE.match(value) and dialect != "posix":
            return None
        if dialect != "posix":
            value = value.replace("\\", "/")
    elif dialect == "posix" and re.match(r"^/[A-Za-z](/|$)", value):  # Git Bash: /c/Users -> C:/Users
        value = f"{value[1]}:/{value[3:]}"
    elif dialect == "posix" and re.match(r"^/tmp(/|$)", value):  # Git Bash mounts the user's temp folder there
        value = tempfile.gettempdir() + value[4:]
    path = Path(value)
    if not path.is_absolute():
        if state.cwd is None:
            return Path(os.path.normpath(state.workspace / ".." / value)) if ".." in value else None
        path = state.cwd / path
    return _through_links(Path(os.path.normpath(path)), value, state)


def _through_links(path: Path, value: str, state: _State) -> Path:
    """Where a path leads through a link made earlier in the line: `x/` and `x/docs` follow it, `x` alone
    names the link itself (which is all `rm -rf x` deletes)."""
    for link, points_to in state.links.items():
        if path.is_relative_to(link) and (path != link or value.endswith(("/", "\\", "/."))):
            return Path(os.path.normpath(points_to / path.relative_to(link)))
    return path


def _remember_link(args: list[Word], operands: list[Word], link: Word | None, state: _State) -> None:
    """`ln -s TARGET LINK`: later paths through LINK lead to TARGET (relative to the link's folder)."""
    symbolic = any(re.fullmatch(r"-[A-Za-z]*s[A-Za-z]*|--symbolic", _value(w, state) or "") for w in args)
    if not symbolic or link is None or len(operands) != 2:
        return
    target, where = _value(operands[0], state), _value(link, state)
    link_path = _path(where, state, "posix") if where else None
    if target is None or link_path is None:
        return
    if link_path.is_dir() and not link_path.is_symlink():
        link_path = link_path / Path(target).name
    state.links[link_path] = Path(os.path.normpath(link_path.parent / os.path.expanduser(target)))


def _where(path: Path, glob: bool, state: _State, spelled_in_temp: bool) -> str | None:
    """Why deleting or overwriting `path` needs a yes: outside, the workspace, or above it."""
    parts = path.parts
    first_glob = next((i for i, p in enumerate(parts) if any(c in p for c in "*?[")), None) if glob else None
    everything = False
    if first_glob is not None:
        pattern = parts[first_glob]
        everything = first_glob == len(parts) - 1 and set(pattern) <= set("*?.[]!") and "*" in pattern
        path = Path(*parts[:first_glob]) if first_glob else Path(path.anchor)
    root = state.workspace
    if path == root or root.is_relative_to(path):
        if path == root and first_glob is not None and not everything:
            return None  # *.pyc in the workspace: some of its files
        return "the workspace itself" if path == root else "a folder that holds the workspace"
    if path.is_relative_to(root):
        real = Path(os.path.realpath(path))
        if real == root or not real.is_relative_to(root):
            return "it leads out of the workspace through a symlink"
        return None
    if spelled_in_temp and _scratch(path, state):
        return None
    return "outside the workspace"


def _history(path: Path, state: _State) -> bool:
    """`.git` itself, or its objects, refs or logs: deleting them loses commits (a lock file does not)."""
    git = state.workspace / ".git"
    return path == git or any(path.is_relative_to(git / part) for part in ("objects", "refs", "logs", "HEAD"))


def _spelled_in_temp(value: str, state: _State) -> bool:
    """Written as a temp path (`/tmp/x`, `$TMPDIR/x`), not reached from elsewhere (`~`, `..`)."""
    temps = {tempfile.gettempdir(), os.path.realpath(tempfile.gettempdir()), "/tmp", "/var/tmp"}
    return ".." not in Path(value).parts and any(value.startswith(t.rstrip("/\\") + sep) for t in temps
                                                 for sep in "/\\")


def _scratch(path: Path, state: _State) -> bool:
    """The system temp folder's contents are scratch space, unless they hold the user's home or lie
    in it (a home inside /tmp); Windows' temp folder itself lies in the home (AppData\\Local\\Temp)."""
    temp = Path(os.path.realpath(tempfile.gettempdir()))
    real = Path(os.path.realpath(path))
    home = Path(os.path.realpath(state.home))
    in_home = real.is_relative_to(home) and not temp.is_relative_to(home)
    return real != temp and real.is_relative_to(temp) and not (real == home or home.is_relative_to(real) or in_home)


def _loop_variable(name: str, items: list[Word], state: _State) -> None:
    """`for f in a *.pyc ~/x`: `$f` stands for the item a delete would be asked about, if any (so
    `rm $f` in the loop is judged on it), else for the first: every item is as safe as that one."""
    values = [_value(word, state) for word in items]
    if not name or any(v is None for v in values):
        state.variables[name] = None
        return
    risky = [v for word, v in zip(items, values, strict=True) if _target("x", word, state, state.dialect)]
    state.variables[name] = (risky or values)[0]


def _change_dir(args: list[Word], state: _State) -> None:
    values = [_value(w, state) for w in args if (w.literal or "") not in ("-L", "-P", "-e", "--")]
    if not values:
        state.cwd = state.home
        return
    target = values[0]
    if target is None or target == "-":
        state.cwd = None
        return
    path = _path(target, state, "posix")
    state.cwd = path


def _is_existing_path(value: str, state: _State) -> bool:
    if state.cwd is None or not value or any(c in value for c in "*?["):
        return any(c in value for c in "*?[")
    return (state.cwd / value).exists() and not (state.cwd / ".git" / "refs" / "heads" / value).exists()
