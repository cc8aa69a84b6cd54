"""Which files an in-place editor rewrites, read from its argv the way the program reads it.

`sed -i`, `perl -pi -e` and `gawk -i inplace` rewrite the files they are given, so the approval gate
(`core.tools.safety`) judges those files as writes. Option letters are read as each program reads
them, so `-i.bak`, `-ie`, `-pi` and `-n -i` cannot hide the in-place flag or shift the operands.
"""

from __future__ import annotations

from collections.abc import Callable


def sed_in_place_files(values: list[str | None]) -> list[int] | None:
    """The argv indexes of the files `sed -i` rewrites; None when it does not edit in place."""
    in_place, script_given, operands = False, False, []
    index, options = 0, True
    while index < len(values):
        value = values[index]
        index += 1
        if options and value == "--":
            options = False
        elif options and value is not None and value.startswith("--"):
            in_place = in_place or value.startswith("--in-place")
            if value in ("--expression", "--file"):
                script_given, index = True, index + 1
            elif value.startswith(("--expression=", "--file=")):
                script_given = True
            elif value == "--line-length":
                index += 1
        elif options and value is not None and value.startswith("-") and value != "-":
            for position, letter in enumerate(value[1:], start=2):
                if letter == "i":
                    in_place = True
                    break  # the rest of the cluster is the backup suffix
                if letter in "efl":
                    script_given = script_given or letter != "l"
                    index += 1 if position == len(value) else 0
                    break
        else:
            operands.append(index - 1)
    if not in_place:
        return None
    return operands if script_given else operands[1:]


def perl_in_place_files(values: list[str | None]) -> list[int] | None:
    """The argv indexes of the files `perl -i` (or `ruby -i`) rewrites; None when not in place."""
    return _in_place_operands(values, _perl_option)


def awk_in_place_files(values: list[str | None]) -> list[int] | None:
    """The argv indexes of the files `gawk -i inplace` rewrites; None when it does not edit in place."""
    return _in_place_operands(values, _awk_option)


# One option as the program reads it: (arguments it takes after itself, edits in place, gives the program).
_Read = Callable[[str, str | None], tuple[int, bool, bool]]


def _perl_option(value: str, following: str | None) -> tuple[int, bool, bool]:
    for position, letter in enumerate(value[1:], start=2):
        if letter in "eE":
            return (1 if position == len(value) else 0), False, True  # -e CODE, or -eCODE
        if letter == "i":
            return 0, True, False  # -i.bak: the rest is the backup suffix
        if letter in "IMmxCdDrF":
            break  # the rest of the cluster is this option's value
    return 0, False, False


def _awk_option(value: str, following: str | None) -> tuple[int, bool, bool]:
    name, _, inline = value.partition("=")
    if name not in ("-i", "--include", "-f", "--file", "-F", "-v", "--assign", "--field-separator"):
        return 0, False, False
    library = inline or following
    return (0 if inline else 1), name in ("-i", "--include") and library in ("inplace", "inplace.awk"), \
        name in ("-f", "--file")


def _in_place_operands(values: list[str | None], read: _Read) -> list[int] | None:
    """The files after the options (and after the program text, unless an option gave it)."""
    in_place, program_given, index = False, False, 0
    while index < len(values):
        value = values[index]
        if value is None or not value.startswith("-") or value == "-":
            break
        index += 1
        if value == "--":
            break
        taken, edits, program = read(value, values[index] if index < len(values) else None)
        index += taken
        in_place, program_given = in_place or edits, program_given or program
    if not in_place:
        return None
    operands = list(range(index, len(values)))
    return operands if program_given else operands[1:]
