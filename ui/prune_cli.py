"""`agent.py prune`: the pruner as a standalone command, a front end of `core.runtime.pruner` (it reads
the command line and writes the terminal; the pruning is the core's).

    prune -- CMD ARGS...                          run CMD (no shell), print its pruned output,
                                                  exit with its exit code
    prune --stdin --command "CMD" --exit-code N   prune what arrives on stdin
"""

from __future__ import annotations

import argparse
import shlex
import subprocess
import sys

from core.i18n import N_, _
from core.runtime.pruner import DEFAULT_BUDGET, pruned_output
from ui.argparse_lang import HelpFormatter, speak_the_interface_language

_DESCRIPTION = N_("Print a command's output pruned to what matters: errors, failing tests, locations, "
                  "summaries.")
_EXAMPLES = """
  prune -- pytest -q
  make 2>&1 | prune --stdin --command make --exit-code "${PIPESTATUS[0]}"
"""


def _parser() -> argparse.ArgumentParser:
    speak_the_interface_language()
    p = argparse.ArgumentParser(prog="prune", description=_(_DESCRIPTION), epilog=_("examples:") + _EXAMPLES,
                                formatter_class=HelpFormatter)
    p.add_argument("--stdin", action="store_true", help=_("prune the bytes read from standard input"))
    p.add_argument("--command", default="",
                   help=_("the command line that produced the input (picks the rules)"))
    p.add_argument("--exit-code", type=int, default=None, help=_("the exit status of that command"))
    p.add_argument("--budget", type=int, default=DEFAULT_BUDGET,
                   help=_("most characters to print (default {budget}, the agent's per-result cap)").format(
                       budget=DEFAULT_BUDGET))
    p.add_argument("argv", nargs=argparse.REMAINDER, help=_("-- CMD ARGS...: the command to run"))
    return p


def _run(argv: list[str]) -> tuple[bytes, int]:
    """Run argv directly (no shell) with stdout and stderr merged, as a terminal would show them."""
    try:
        proc = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              check=False)
    except FileNotFoundError:
        return f"{argv[0]}: command not found\n".encode(), 127
    except PermissionError:
        return f"{argv[0]}: permission denied\n".encode(), 126
    # A child killed by signal N has returncode -N; shells report 128+N, and a negative exit status
    # would wrap around (-9 exits as 247).
    return proc.stdout, 128 - proc.returncode if proc.returncode < 0 else proc.returncode


def _write(text: str) -> None:
    data = (text if text.endswith("\n") else text + "\n").encode("utf-8", errors="replace")
    sys.stdout.buffer.write(data)
    sys.stdout.buffer.flush()


def main(argv: list[str]) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    command_argv = args.argv[1:] if args.argv[:1] == ["--"] else args.argv
    if args.stdin == bool(command_argv):
        parser.print_usage(sys.stderr)
        print(_("prune: give either --stdin or -- CMD ARGS..."), file=sys.stderr)
        return 2
    if args.stdin:
        data, exit_code, command = sys.stdin.buffer.read(), args.exit_code, args.command
    else:
        data, exit_code = _run(command_argv)
        command = args.command or shlex.join(command_argv)
    _write(pruned_output(data, command, exit_code, args.budget))
    return exit_code if not args.stdin and exit_code is not None else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
