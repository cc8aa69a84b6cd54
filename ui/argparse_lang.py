"""argparse in the interface's language, for `deepseek-agent` and its `prune` command: argparse's
own words (usage errors, headings, the help of -h) through the catalog, a section heading ending
in the language's colon (选项：), and a wrapped usage line continued under the program's name as
the terminal shows it, in cells (用法： is three characters but six cells wide)."""

from __future__ import annotations

import argparse
import re

from core.i18n import N_, _
from ui.cells import cell_width

# argparse's own words that a user of these programs sees; argparse looks them up through `_`.
ARGPARSE_WORDS = (N_("usage: "), N_("options"), N_("positional arguments"),
                  N_("show this help message and exit"), N_("show program's version number and exit"),
                  N_("argument %(argument_name)s: %(message)s"), N_("unrecognized arguments: %s"),
                  N_("expected one argument"), N_("invalid choice: %(value)r (choose from %(choices)s)"),
                  N_("%(prog)s: error: %(message)s\n"), N_("the following arguments are required: %s"),
                  N_("ambiguous option: %(option)s could match %(matches)s"),
                  N_("argument %(argument_name)s: invalid %(type)s value: %(value)r"))


def speak_the_interface_language() -> None:
    """Let argparse say its own words in the interface's language (it calls its module's `_`)."""
    argparse._ = _  # type: ignore[attr-defined]


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """The description and epilog as written; headings and usage as the interface's language needs."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self._headings: set[str] = set()

    def start_section(self, heading: str | None) -> None:
        if heading:
            self._headings.add(heading)
        super().start_section(heading)

    def format_help(self) -> str:
        text = super().format_help()
        for heading in self._headings:  # argparse writes "heading:" itself, with an ASCII colon
            with_colon = _("{heading}:").format(heading=heading)
            text = re.sub(rf"^( *){re.escape(heading)}:$", lambda m, h=with_colon: m.group(1) + h, text,
                          flags=re.MULTILINE)
        return text

    def _format_usage(self, usage: str | None, actions: object, groups: object, prefix: str | None) -> str:
        text = super()._format_usage(usage, actions, groups, prefix)  # type: ignore[arg-type]
        shown = _("usage: ") if prefix is None else prefix
        wider = cell_width(shown) - len(shown)  # argparse indents the continued lines by characters
        return re.sub(r"\n(?= +\S)", "\n" + " " * wider, text) if wider > 0 else text
