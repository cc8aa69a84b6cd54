"""deepseek-agent: a terminal coding agent for DeepSeek's Responses API.

Entry point only: flags → mode (TUI, plain REPL, one-shot, prune). Everything else is in `core/`.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from core import __version__
from core.i18n import LANGUAGES, N_, _

DESCRIPTION = N_("deepseek-agent: a terminal coding agent for DeepSeek's Responses API.")
EPILOG = N_("""\
modes:
  (default)        the full-screen TUI when run in a terminal, else the plain REPL
  --plain          a line REPL: answers on stdout, activity on stderr
  --one TASK       run one task and exit (the task may also be piped on stdin)
  prune -- CMD     run CMD and print its pruned output (see `prune --help`)

approval modes (--mode; /mode or Shift-Tab switch them in a session):
  auto             commands run in the kernel's sandbox unasked (writes only in the workspace and temp
                   folders, secrets unreadable); running one outside it asks. Default where a sandbox
                   works (Linux: Landlock or bubblewrap)
  ask              read-only commands and your allow rules run; everything else asks. Default where no
                   sandbox works (Windows today, old kernels, --no-sandbox)
  yes              every question is answered yes (--yes); commands are still confined where they can be
  --one cannot ask: what would ask is refused, and the model is told how you could allow it.

exit codes (--one): 0 done, 1 error, 2 bad usage or settings, 3 step limit reached, 130 interrupted

settings come from the environment, then a .env file, then defaults; see .env.example for every key.
the .env is next to the exe, or next to agent.py in a source checkout; installed with pip:
%APPDATA%\\deepseek-agent\\.env on Windows, ~/.config/deepseek-agent/.env ($XDG_CONFIG_HOME) elsewhere.""")


def parse_args(argv: list[str]) -> argparse.Namespace:
    from ui.argparse_lang import HelpFormatter, speak_the_interface_language

    speak_the_interface_language()
    parser = argparse.ArgumentParser(prog="deepseek-agent", description=_(DESCRIPTION), epilog=_(EPILOG),
                                     formatter_class=HelpFormatter)
    parser.add_argument("--version", action="version", version=f"deepseek-agent {__version__}",
                        help=_("show program's version number and exit"))
    parser.add_argument("--plain", action="store_true", help=_("line-based REPL instead of the full-screen TUI"))
    parser.add_argument("--one", nargs="?", const="", default=None, metavar="TASK",
                        help=_("run one task to completion and exit (TASK or stdin)"))
    parser.add_argument("--json", action="store_true", help=_("with --one: write every event as a JSON line"))
    parser.add_argument("--yes", action="store_true", help=_("answer every question yes (the yes mode)"))
    parser.add_argument("--mode", choices=("auto", "ask", "yes"),
                        help=_("the approval mode (see below; AGENT_MODE)"))
    parser.add_argument("--no-sandbox", action="store_true",
                        help=_("run commands unconfined (AGENT_SANDBOX=off); the default mode becomes ask"))
    parser.add_argument("--no-network", action="store_true",
                        help=_("confined commands reach no network, not even through the proxy (AGENT_NETWORK=off)"))
    parser.add_argument("--allow", action="append", default=[], metavar="COMMAND",
                        help=_("let commands starting with these words run unasked in this run (repeatable)"))
    parser.add_argument("--model", help=_("model name (overrides DEEPSEEK_MODEL)"))
    parser.add_argument("--cwd", type=Path, help=_("workspace folder (default: the current folder)"))
    parser.add_argument("--resume", nargs="?", const="", default=None, metavar="ID",
                        help=_("continue the latest session, or the one with this ID"))
    parser.add_argument("--sessions", action="store_true", help=_("list saved sessions and exit"))
    parser.add_argument("--lang", choices=LANGUAGES,
                        help=_("the interface's language (DEEPSEEK_LANG; default: the locale's, else en)"))
    return parser.parse_args(argv)


def _start_language(argv: list[str]) -> None:
    """The interface's language, chosen before argparse speaks: `--lang`, DEEPSEEK_LANG (the environment's,
    else the .env's, as every setting), the locale. `--version` reads no .env: it says no words."""
    import os

    from core.i18n import use
    from core.i18n.choice import LANGUAGE_SETTING, LanguageError, choose, windows_ui_language

    following = [*argv[1:], ""] if argv else []
    flag = next((value for arg, value in zip(argv, following, strict=True) if arg == "--lang"), None)
    flag = next((arg.partition("=")[2] for arg in argv if arg.startswith("--lang=")), flag)
    environ = dict(os.environ)
    if flag is None and LANGUAGE_SETTING not in environ and "--version" not in argv:
        from core.config import dotenv_value

        environ[LANGUAGE_SETTING] = dotenv_value(LANGUAGE_SETTING)
    try:
        use(choose(flag, environ, windows_ui_language))
    except LanguageError as exc:
        if flag is not None:  # argparse says it, with the choices
            return
        print(_("error: {problem}").format(problem=exc), file=sys.stderr)
        raise SystemExit(2) from None


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["network-door"]:  # inside bubblewrap, before a command: nothing else is loaded there
        from core.runtime.network_door import open_door_then_exec

        code, problem = open_door_then_exec(argv[1:])
        print(problem, file=sys.stderr)
        return code
    from core.console import clean_text, setup_streams

    setup_streams()
    argv = [clean_text(arg) for arg in argv]
    if argv[:1] == ["prune"]:
        from ui.prune_cli import main as prune_main

        _start_language([])  # its own arguments name a command to run, never the language
        return prune_main(argv[1:])
    if argv[:1] == ["sandbox-exec"]:  # how MCP servers start confined
        from core.runtime.sandbox_exec import exec_confined

        code, problem = exec_confined(argv[1:])
        print(problem, file=sys.stderr)
        return code
    _start_language(argv)
    args = parse_args(argv)
    from core.config import ConfigError, load_settings
    from core.secret_env import hide_secret_environment

    try:
        settings = load_settings(overrides=_overrides(args))
        if args.sessions:
            from core.runtime.open import sessions_listing
            from ui.reports import sessions_text

            print(sessions_text(sessions_listing(settings)))
            return 0
        if args.one is None and not settings.api_key and _can_prompt():
            settings = _ask_for_key(settings, args)
        settings.require_key()
        hide_secret_environment(settings.env_keep, settings.env_drop)
        workspace = _workspace(args.cwd)
        if args.json and args.one is None:
            raise ConfigError(_("--json works with --one only."))
        if args.one is not None:
            return _one(args, settings, workspace)
        return _interactive(args, settings, workspace)
    except ConfigError as exc:
        print(_("error: {problem}").format(problem=exc), file=sys.stderr)
        return 2


def _overrides(args: argparse.Namespace) -> dict[str, str]:
    """The settings the command line gives (they win over the environment and the .env)."""
    given = {"DEEPSEEK_MODEL": args.model, "AGENT_MODE": "yes" if args.yes else args.mode,
             "AGENT_SANDBOX": "off" if args.no_sandbox else None, "AGENT_NETWORK": "off" if args.no_network else None}
    return {name: value for name, value in given.items() if value}


def _can_prompt() -> bool:
    from core.console import is_terminal
    from ui.terminal import stdin_is_interactive

    return stdin_is_interactive() and is_terminal(sys.stderr)


def _ask_for_key(settings, args: argparse.Namespace):
    """First run in a terminal: offer to save the key to .env (mode 0600 on POSIX) instead of failing."""
    import getpass

    from core.config import API_KEY, is_loopback, load_settings, save_setting, saved_privately

    if is_loopback(settings.base_url):
        return settings
    if not args.plain and sys.stdout.isatty() and _tui_reason() is None:
        import tui

        key = tui.ask_key(settings.env_file)  # a masked field in a full-screen dialog
    else:
        private = _(" (readable only by you)") if saved_privately() else ""
        print(_("No DeepSeek API key yet. Paste it to save it in {file}{private},\n"
                "or press Enter to quit and set {name} yourself.").format(
                    file=settings.env_file, private=private, name=API_KEY), file=sys.stderr)
        try:
            key = getpass.getpass(_("API key (hidden): "), stream=sys.stderr).strip()
        except (EOFError, KeyboardInterrupt):
            key = ""
    if not key:
        return settings
    try:
        save_setting(settings.env_file, API_KEY, key)
    except OSError as exc:
        print(_("Could not save it to {file} ({problem}); set {name} in the environment instead.").format(
            file=settings.env_file, problem=exc.strerror or exc, name=API_KEY), file=sys.stderr)
        return settings
    print(_("Saved to {file}.").format(file=settings.env_file), file=sys.stderr)
    return load_settings(overrides=_overrides(args))


def _workspace(cwd: Path | None) -> Path:
    from core.config import ConfigError

    folder = (cwd or Path.cwd()).expanduser()
    if not folder.is_dir():
        raise ConfigError(_("--cwd {folder} is not a folder.").format(folder=folder))
    return folder.resolve()


def _runtime(args: argparse.Namespace, settings, workspace: Path, on_event, interactive: bool):
    """The core's runtime on `on_event`, its session opened (or resumed) and announced."""
    from core.config import ConfigError
    from core.runtime.open import JournalError, SessionNotFound
    from core.runtime.runtime import Runtime

    runtime = Runtime(settings, workspace, on_event, mode=None, interactive=interactive,
                      allow=args.allow, resume=args.resume or None, resume_latest=args.resume == "")
    try:
        runtime.open()
    except SessionNotFound as exc:
        raise ConfigError(_("Cannot resume: {problem}.").format(problem=exc)) from None
    except JournalError as exc:
        raise ConfigError(_("Cannot start the session: {problem} (set AGENT_SESSIONS_DIR to a writable folder).")
                          .format(problem=exc)) from None
    return runtime


def _one(args: argparse.Namespace, settings, workspace: Path) -> int:
    from core.config import ConfigError
    from ui.jsonl import JsonEmitter
    from ui.plain.interrupts import InterruptHandler
    from ui.plain.render import PlainEmitter
    from ui.plain.repl import PlainSink, run_one
    from ui.terminal import read_piped_stdin, stdin_is_interactive, use_color

    task = args.one
    if not task and not stdin_is_interactive():
        task = read_piped_stdin()
    if not task.strip():
        raise ConfigError(_("--one needs a task: give it as an argument or pipe it on stdin."))
    sink = PlainSink(JsonEmitter() if args.json else PlainEmitter(one_shot=True, color=use_color()))
    runtime = _runtime(args, settings, workspace, sink, interactive=False)
    interrupts = InterruptHandler()
    interrupts.install()
    try:
        return run_one(runtime, sink, task.strip(), interrupts)
    finally:
        runtime.close()


def _interactive(args: argparse.Namespace, settings, workspace: Path) -> int:
    from core.console import is_terminal
    from ui.plain.approver import TerminalApprover
    from ui.plain.interrupts import InterruptHandler
    from ui.plain.render import PlainEmitter
    from ui.plain.repl import PlainSink, run_repl
    from ui.terminal import stdin_is_interactive, use_color

    # is_terminal, not isatty: under Git Bash's mintty the TUI's reason (use winpty) is then said.
    if not args.plain and stdin_is_interactive() and is_terminal(sys.stdout):
        reason = _tui_reason()
        if reason is None:
            import tui
            from core.runtime.open import data_folder

            return tui.run(lambda emit: _runtime(args, settings, workspace, emit, interactive=True), workspace,
                           data_folder(settings))
        print(_("note: full-screen mode unavailable ({reason}); using plain mode.").format(reason=reason),
              file=sys.stderr)
    sink = PlainSink(PlainEmitter(color=use_color()))
    interrupts = InterruptHandler()
    can_ask = stdin_is_interactive()
    runtime = _runtime(args, settings, workspace, sink, interactive=can_ask)
    interrupts.install()
    return run_repl(runtime, sink, interrupts, TerminalApprover(sys.stderr, interrupts) if can_ask else None)


def _tui_reason() -> str | None:
    """Why the full-screen TUI cannot run here (None: it can)."""
    try:
        import tui
    except ImportError as exc:
        return _("cannot import it: {error}").format(error=exc)
    return tui.unavailable_reason()


def run() -> int:
    """`main()` for a program people double-click: an unexpected error becomes one readable line
    instead of a stack trace, and a console window that closes with the program waits for Enter
    first, so that line can be read."""
    try:
        code = main()
    except KeyboardInterrupt:
        code = 130
    except SystemExit as exc:  # argparse after --help, --version or bad usage (it printed why)
        code = exc.code if isinstance(exc.code, int) else 0
    except Exception as exc:  # the last line of defence: a person sees a sentence, not a traceback
        print(_("error: deepseek-agent stopped unexpectedly ({problem}).").format(
            problem=f"{type(exc).__name__}: {exc}"), file=sys.stderr)
        code = 1
    if code not in (0, 130) and _console_closes_with_us():
        _wait_for_enter()
    return code


def _console_closes_with_us() -> bool:
    """True on Windows when no shell shares our console (the exe was double-clicked): the window then
    closes the moment we exit. The exe is one process when it starts from its unpacked runtime, two
    when it unpacked to a temporary folder (the unpacking parent sets _PYI_APPLICATION_HOME_DIR)."""
    if sys.platform != "win32":
        return False
    import ctypes
    import os
    from ctypes import wintypes

    get_list = ctypes.WinDLL("kernel32").GetConsoleProcessList  # type: ignore[attr-defined]
    get_list.argtypes = [ctypes.POINTER(wintypes.DWORD), wintypes.DWORD]
    get_list.restype = wintypes.DWORD
    pids = (wintypes.DWORD * 8)()
    attached = get_list(pids, len(pids))
    return 0 < attached <= (2 if os.environ.get("_PYI_APPLICATION_HOME_DIR") else 1)


def _wait_for_enter() -> None:
    try:
        if sys.stdin is not None and sys.stdin.isatty():
            input(_("Press Enter to close this window."))
    except (EOFError, KeyboardInterrupt, OSError, ValueError):
        pass


if __name__ == "__main__":
    sys.exit(run())
