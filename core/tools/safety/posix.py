"""POSIX commands: nested code (`sh -c`, `eval`, interpreter one-liners) and what each known command
does to files."""

from __future__ import annotations

import base64
import binascii
import itertools
import re

from core.i18n import _
from core.tools.cmdline import LIT, SUB, Simple, Word
from core.tools.oneliners import awk_in_place_files, perl_in_place_files, sed_in_place_files
from core.tools.safety.reasons import BEYOND, Reason
from core.tools.safety.state import DELETERS, HANDLERS, INTERPRETERS, SHELLS, State, code_danger, nested
from core.tools.safety.targets import (
    after_equals,
    assignment,
    change_dir,
    command_name,
    is_existing_path,
    operand_words,
    operands_and_target,
    remember_link,
    skip_options,
    target_reason,
    targets_reason,
    unknown_args,
    word_value,
)


def _shell(base: str, args: list[Word], cmd: Simple, state: State) -> str | None:
    values = [word_value(w, state) for w in args]
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
            return _("{name} -c runs text that is only known when it runs").format(name=base)
        inner = nested(state)
        for number, argument in enumerate(rest[1:10]):  # sh -c 'rm -rf "$1"' _ ~: $0, $1, ...
            inner.variables[str(number)] = argument
        return state.script(rest[0], "posix", inner)
    if rest:
        return None  # `sh script.sh`: a file of the project, run like any program
    if cmd.heredoc is not None:
        return state.script(cmd.heredoc, "posix", nested(state))
    if cmd.piped:
        return _("pipes text into {name}, which runs it unseen").format(name=base)
    return None


_SHELL_VALUE_OPTIONS = {"-o", "+o", "-O", "+O", "--rcfile", "--init-file"}


def _eval(base: str, args: list[Word], cmd: Simple, state: State) -> str | None:
    values = [word_value(w, state) for w in args]
    if any(v is None for v in values):
        return _("eval of text that is only known when it runs")
    return state.script(" ".join(v for v in values if v is not None), "posix", nested(state))


def _interpreter(base: str, args: list[Word], cmd: Simple, state: State) -> str | None:
    flag = INTERPRETERS.get(re.sub(r"[\d.]+$", "", base) or base, INTERPRETERS.get(base, "-c"))
    values = [word_value(w, state) for w in args]
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
            return _("a {name} one-liner that is only known when it runs").format(name=base)
        if code:
            return _code(base, code)
        if value == "-m":
            return None
        if value is None or not value.startswith("-"):
            return None  # a script file
    if cmd.heredoc is not None:
        return _code(base, cmd.heredoc)
    if cmd.piped and values in ([], ["-"]):
        return _("pipes code into {name}, which runs it unseen").format(name=base)
    return None


def _sed(base: str, args: list[Word], cmd: Simple, state: State) -> str | None:
    read = sed_in_place_files if base == "sed" else awk_in_place_files
    return _in_place(read([word_value(w, state) for w in args]), args, cmd, state)


def _in_place(files: list[int] | None, args: list[Word], cmd: Simple, state: State) -> str | None:
    """An in-place edit rewrites each of its files: judged as a write to each."""
    if not files:
        return None
    return targets_reason("rewrites", [args[i] for i in files], state, cmd.dialect, write=True)


def _code(base: str, code: str) -> str | None:
    found = code_danger(code)
    return _("a {name} one-liner that can delete files or run commands ({code})").format(
        name=base, code=found) if found else None


WRAPPERS_AFTER_OPERAND = {"flock": {"-w", "--wait", "--timeout", "-E", "--conflict-exit-code"},
                           "chroot": {"--userspec", "--groups"}}


def parallel(args: list[Word], cmd: Simple, state: State) -> str | None:
    """`parallel CMD ::: A B`: CMD runs once with each argument; without `:::` they come from stdin."""
    rest = skip_options(args, {"-j", "--jobs", "-S", "--sshlogin", "--joblog", "-a", "--arg-file"})
    split = next((i for i, w in enumerate(rest) if w.literal in (":::", "::::")), None)
    if split is None:
        return (state.argv(rest, cmd, state) or unknown_args(rest, cmd, state)) if rest else None
    if rest[split].literal == "::::" and rest[:split]:
        return unknown_args(rest[:split], cmd, state)
    for item in rest[split + 1:] or [Word.of("")]:
        why = state.argv([*rest[:split], item], cmd, state) if rest[:split] else None
        if why:
            return why
    return None


def _su(base: str, args: list[Word], cmd: Simple, state: State) -> str | None:
    """`su [user] -c CODE`: CODE runs in a shell."""
    values = [word_value(w, state) for w in args]
    for index, value in enumerate(values[:-1]):
        if value in ("-c", "--command"):
            code = values[index + 1]
            if code is None:
                return _("{name} -c runs text that is only known when it runs").format(name=base)
            return state.script(code, "posix", nested(state))
    return None


DECLARERS = {"export", "declare", "typeset", "readonly", "local", "printf"}


def declare(base: str, args: list[Word], state: State) -> None:
    """`export X=~` and `printf -v X ~` set X for the rest of the line, as a plain `X=~` does."""
    if base == "printf":
        values = [word_value(w, state) for w in args]
        if len(values) >= 3 and values[0] == "-v" and values[1]:
            form = values[2]
            state.variables[values[1]] = (values[3] if len(values) > 3 else "") if form == "%s" \
                else form if form is not None and "%" not in form and "\\" not in form else None
        return
    for word in args:
        if assignment(word):
            name, value = word.parts[0][1].partition("=")[0], word_value(Word(after_equals(word)), state)
            state.variables[name.rstrip("+")] = value


def env_command(args: list[Word], cmd: Simple, state: State) -> str | None:
    rest = list(args)
    while rest:
        value = word_value(rest[0], state)
        if value in ("-u", "--unset", "-C", "--chdir", "-S", "--split-string"):
            if value in ("-S", "--split-string") and len(rest) > 1:
                code = word_value(rest[1], state)
                return _("env -S with text known only when it runs") if code is None else \
                    state.script(code, "posix", nested(state))
            if value in ("-C", "--chdir") and len(rest) > 1:
                change_dir(rest[1:2], state)
            rest = rest[2:]
        elif value is not None and value.startswith("--chdir="):
            change_dir([Word.of(value.partition("=")[2])], state)
            rest = rest[1:]
        elif value is not None and (value.startswith("-") or "=" in value):
            rest = rest[1:]
        else:
            break
    return state.argv(rest, cmd, state) if rest else None


def _powershell(base: str, args: list[Word], cmd: Simple, state: State) -> str | None:
    values = [word_value(w, state) for w in args]
    for index, value in enumerate(values):
        lower = (value or "").lower()
        if lower in ("-encodedcommand", "-enc", "-ec", "-e", "-en", "-encoded"):
            encoded = values[index + 1] if index + 1 < len(values) else ""
            try:
                code = base64.b64decode(encoded or "", validate=True).decode("utf-16-le")
            except (binascii.Error, UnicodeDecodeError, ValueError):
                return _("an encoded PowerShell command that cannot be read")
            return state.script(code, "powershell", nested(state))
        if lower in ("-command", "-c", "-com", "-comm", "-comma", "-comman") or (value and not value.startswith("-")):
            rest = values[index + 1:] if lower.startswith("-c") else values[index:]
            if lower and not lower.startswith("-c") and lower.endswith(".ps1"):
                return None  # a script file
            if any(v is None for v in rest):
                return _("a PowerShell command that is only known when it runs")
            return state.script(" ".join(v for v in rest if v is not None), "powershell", nested(state))
        if lower in ("-file", "-f"):
            return None
    return None


def _cmd_exe(base: str, args: list[Word], cmd: Simple, state: State) -> str | None:
    values = [word_value(w, state) for w in args]
    for index, value in enumerate(values):
        if (value or "").lower() in ("/c", "/k", "/r"):
            rest = values[index + 1:]
            if any(v is None for v in rest):
                return _("a cmd command that is only known when it runs")
            return state.script(" ".join(v for v in rest if v is not None), "cmd", nested(state))
    return None


# -- what a command does to files -----------------------------------------------------------------
def _rm(base: str, args: list[Word], cmd: Simple, state: State) -> str | None:
    if base == "shred":
        return _("irrecoverable file wipe")
    operands = operand_words(args, state, with_value={"-s", "--size", "-r", "--reference"} if base == "truncate" else set())
    verb = {"truncate": "truncates", "rmdir": "deletes", "unlink": "deletes"}.get(base, "deletes")
    return targets_reason(verb, operands, state, cmd.dialect)


def _mv(base: str, args: list[Word], cmd: Simple, state: State) -> str | None:
    operands, target_dir = operands_and_target(args, state)
    if base == "mv":  # what is moved away is gone from where it was
        why = targets_reason("moves", operands, state, cmd.dialect)
        return why or (target_reason("moves into", target_dir, state, cmd.dialect) if target_dir else None)
    destination = target_dir or (operands[-1] if len(operands) > 1 else None)
    if base == "ln":
        remember_link(args, operands, destination, state)
    if base == "ln" and not any((v := word_value(w, state) or "").startswith("-") and "f" in v for w in args):
        return None  # ln without -f never replaces anything
    if base == "rsync" and destination is not None and ":" in (destination.literal or ""):
        return None  # a remote destination
    return target_reason("overwrites", destination, state, cmd.dialect, write=True) if destination else None


def _tee(base: str, args: list[Word], cmd: Simple, state: State) -> str | None:
    return targets_reason("writes to", operand_words(args, state), state, cmd.dialect, write=True)


def _dd(base: str, args: list[Word], cmd: Simple, state: State) -> str | None:
    for word in args:
        value = word_value(word, state)
        if value is not None and value.startswith("of="):
            return target_reason("writes to", Word(after_equals(word)), state, cmd.dialect, write=True)
        if value is None:
            return _("dd with an output only known when it runs")
    return None


def _chmod(base: str, args: list[Word], cmd: Simple, state: State) -> str | None:
    values = [word_value(w, state) for w in args]
    recursive = any(v and (v in ("--recursive", "-R") or (re.fullmatch(r"-[A-Za-z]+", v) and "R" in v))
                    for v in values)
    if not recursive:
        return None
    operands = operand_words(args, state)
    if not any((v or "").startswith("--reference") for v in values):
        operands = operands[1:]  # the mode or owner
    return targets_reason("recursive permission change of", operands, state, cmd.dialect)


def _find(base: str, args: list[Word], cmd: Simple, state: State) -> str | None:
    values = [word_value(w, state) for w in args]
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
            name = word_value(inner[0], state) if inner else ""
            deletes = deletes or name is None or command_name(name, "posix") in DELETERS
            # what -exec runs, judged on its own: `{}` is one found file (some file under the roots)
            found = _found_file(roots or [Word.of(".")], state)
            run = [found if word_value(w, state) == "{}" else w for w in inner]
            why = state.argv(run, cmd, nested(state)) if inner and not deletes else None
            if why:
                return why
    if not deletes:
        return None
    if any(v == "-name" and n == ".git" for v, n in itertools.pairwise(values)):
        return Reason(_("deletes the repository's history (.git)"), BEYOND)
    some = any(v in _FIND_TESTS for v in values)  # only matching files go, as with a pattern under each root
    return targets_reason("deletes files under", roots or [Word.of(".")], state, cmd.dialect, some=some)


def _found_file(roots: list[Word], state: State) -> Word:
    """A word for a file find found: under its root when there is one root, else unknown."""
    value = word_value(roots[0], state) if len(roots) == 1 else None
    return Word.of(value.rstrip("/") + "/found") if value else Word([(SUB, "{}")])


def _extract(base: str, args: list[Word], cmd: Simple, state: State) -> str | None:
    """`tar -xf a.tar -C DIR`, `unzip a.zip -d DIR`: extracting overwrites files in DIR."""
    values = [word_value(w, state) or "" for w in args]
    if base == "tar" and not any(v in ("--extract", "--get") or re.fullmatch(r"-?[A-Za-z]*x[A-Za-z]*", v)
                                 for v in values[:1] + [v for v in values[1:] if v.startswith("-")]):
        return None
    flag = "-d" if base == "unzip" else "-C"
    for index, value in enumerate(values):
        if value in (flag, "--directory") and index + 1 < len(args):
            return target_reason("extracts over", args[index + 1], state, cmd.dialect, write=True)
        if value.startswith("--directory="):
            folder = Word(after_equals(Word([(LIT, value[2:])])))
            return target_reason("extracts over", folder, state, cmd.dialect, write=True)
    return None


def _disk(base: str, args: list[Word], cmd: Simple, state: State) -> str | None:
    if base == "format" and not any(re.match(r"[A-Za-z]:", word_value(w, state) or "") for w in args):
        return None  # `format` is a project script unless it names a drive (format.com under Git Bash)
    return _("disk or filesystem tool")


def _power(base: str, args: list[Word], cmd: Simple, state: State) -> str | None:
    if base == "systemctl":
        sub = word_value(args[0], state) if args else ""
        return _("shuts the machine down") if sub in ("poweroff", "reboot", "halt", "kexec") else None
    if base == "init":
        return _("shuts the machine down") if args and word_value(args[0], state) in ("0", "6") else None
    return _("shuts the machine down")


def _git(base: str, args: list[Word], cmd: Simple, state: State) -> str | None:
    values = [v or "" for v in (word_value(w, state) for w in args)]
    while values and values[0].startswith("-"):  # global options: -C dir, -c k=v, --git-dir=...
        values = values[2:] if values[0] in ("-C", "-c", "--git-dir", "--work-tree", "--namespace") else values[1:]
    if not values:
        return None
    sub, rest = values[0], values[1:]
    if sub == "config" and _writes_config(rest):
        return _("changes git's configuration, which can name programs git runs by itself (hooks, fsmonitor, "
                 "filters, aliases)")
    flags = {v for v in rest if v.startswith("-")}
    short = "".join(v[1:] for v in rest if re.fullmatch(r"-[A-Za-z]+", v))
    if sub == "push":
        if flags & {"--force", "--force-with-lease", "--mirror", "--delete", "--prune", "--force-if-includes"} \
                or any(v.startswith("--force-with-lease") for v in flags) or "f" in short or "d" in short:
            return Reason(_("force push or deletes remote refs"), BEYOND)
        if any(v.startswith("+") or (v.startswith(":") and len(v) > 1) for v in rest if not v.startswith("-")):
            return Reason(_("force push or deletes remote refs"), BEYOND)
        return None
    if sub == "reset" and ("--hard" in flags or "--merge" in flags or "--keep" in flags):
        return Reason(_("discards uncommitted work"), BEYOND)
    if sub == "clean" and ("f" in short or "--force" in flags) and not ("n" in short or "--dry-run" in flags):
        return Reason(_("deletes untracked files"), BEYOND)
    if sub == "checkout" and ("--" in rest or "f" in short or "--force" in flags or "." in rest
                              or any(is_existing_path(v, state) for v in rest if not v.startswith("-"))):
        return Reason(_("discards uncommitted work"), BEYOND)
    if sub == "restore" and ("--staged" not in flags or "--worktree" in flags) and "S" not in short:
        return Reason(_("discards uncommitted work"), BEYOND)
    if sub == "switch" and ({"--discard-changes", "--force"} & flags or "f" in short):
        return Reason(_("discards uncommitted work"), BEYOND)
    if sub == "branch" and ("D" in short or "M" in short or "C" in short or
                            (("d" in short or "--delete" in flags) and ("f" in short or "--force" in flags))):
        return Reason(_("deletes or overwrites a branch"), BEYOND)
    if sub == "worktree" and rest[:1] == ["remove"] and ("--force" in flags or "f" in short):
        return Reason(_("deletes a worktree with its uncommitted work"), BEYOND)
    if sub == "stash" and rest[:1] in (["drop"], ["clear"]):
        return Reason(_("deletes stashed work"), BEYOND)
    if sub == "rebase" and not flags & {"--abort", "--continue", "--skip", "--quit", "--edit-todo", "--show-current-patch"}:
        return Reason(_("rewrites history"), BEYOND)
    if (sub == "commit" and "--amend" in flags) or sub in ("filter-branch", "filter-repo", "replace"):
        return Reason(_("rewrites history"), BEYOND)
    if sub == "reflog" and rest[:1] in (["expire"], ["delete"]):
        return Reason(_("deletes history"), BEYOND)
    if sub == "update-ref" and ("-d" in flags or "--stdin" in flags):
        return Reason(_("deletes a ref"), BEYOND)
    if sub == "gc" and any(v.startswith("--prune") for v in flags):
        return Reason(_("deletes unreachable history"), BEYOND)
    return None


_CONFIG_WRITES = {"set", "unset", "rename-section", "remove-section", "edit", "--add", "--replace-all", "--unset",
                  "--unset-all", "--rename-section", "--remove-section", "-e", "--edit"}
_CONFIG_READS = {"get", "list", "--get", "--get-all", "--get-regexp", "--get-urlmatch", "-l", "--list", "--get-color",
                 "--get-colorbool"}
_CONFIG_VALUED = {"-f", "--file", "--blob", "--type", "--default", "--comment", "--value"}


def _writes_config(args: list[str]) -> bool:
    """`git config` sets, unsets or edits something (`git config k v`, `set`, `--add`...), rather than reads."""
    if _CONFIG_WRITES & set(args):
        return True
    if _CONFIG_READS & set(args):
        return False
    operands, skip = [], False
    for arg in args:
        if skip:
            skip = False
        elif arg in _CONFIG_VALUED:
            skip = True
        elif not arg.startswith("-"):
            operands.append(arg)
    return len(operands) >= 2


_FIND_TESTS = {"-name", "-iname", "-path", "-ipath", "-wholename", "-regex", "-iregex", "-type", "-newer",
               "-mtime", "-mmin", "-atime", "-ctime", "-size", "-empty", "-user", "-group", "-perm", "-links"}
HANDLERS.by_name.update({
    **dict.fromkeys(SHELLS, _shell), "eval": _eval,
    **dict.fromkeys(INTERPRETERS, _interpreter),
    "powershell": _powershell, "pwsh": _powershell, "cmd": _cmd_exe,
    **dict.fromkeys(("rm", "rmdir", "unlink", "shred", "srm", "wipe", "truncate", "rimraf", "trash", "trash-put"),
                    _rm), "su": _su,
    **dict.fromkeys(("mv", "cp", "install", "ln", "rsync"), _mv),
    "tee": _tee, "dd": _dd, **dict.fromkeys(("sed", "awk", "gawk"), _sed), **dict.fromkeys(("chmod", "chown", "chgrp", "setfacl"), _chmod), "find": _find,
    **dict.fromkeys(("mkfs", "mke2fs", "mkswap", "wipefs", "fdisk", "sfdisk", "parted", "diskpart", "format",
                     "gdisk", "sgdisk", "cryptsetup", "blkdiscard"), _disk),
    **dict.fromkeys(("shutdown", "reboot", "halt", "poweroff", "systemctl", "init"), _power),
    "git": _git, "tar": _extract, "unzip": _extract,
})
