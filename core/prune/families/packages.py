"""Package managers: npm, pnpm, yarn, bun, pip, uv, poetry, pipenv.

On success only the outcome matters (`added 12 packages`, `Successfully installed ...`,
`Resolved 8 packages`); on failure the error lines and what surrounds them. Download, resolution
and verbose chatter goes either way.
"""

from __future__ import annotations

import re

from core.prune.families.base import COMMAND, CONTENT, Family
from core.prune.output import Output
from core.prune.rules import is_error_line, keep_windows
from core.prune.selection import Selection

_INSTALL_VERBS = {"install", "i", "ci", "add", "remove", "rm", "uninstall", "un", "update", "up", "upgrade",
                  "audit", "sync", "lock", "dedupe", "prune", "outdated", "link", "download", "wheel"}
_MANAGERS = ("npm", "pnpm", "yarn", "bun", "pip", "uv", "poetry", "pipenv", "pdm", "conda", "mamba")

_OUTCOME_RE = re.compile(
    r"^(?:added|removed|changed|audited|up to date)\b.*\bpackages?\b|\bfound \d+ vulnerabilit|\d+ vulnerabilit"
    r"|^Successfully (?:installed|uninstalled|built)|^Installing collected packages|^Would install"
    r"|^(?:Resolved|Prepared|Installed|Uninstalled|Audited|Built|Updated|Downloaded) \d+ packages?"
    r"|^\s*[+-] \S+(?:==|@| )[\w.]+|^Packages: [+-]|^Done in |^success |^Already up to date|Lockfile is up to date"
    r"|^dependencies:|^devDependencies:|^Writing lock file|^No dependencies to install|^Nothing to (?:install|do)"
    r"|^\S+ (?:packages )?are looking for funding"
)
_ERROR_RE = re.compile(
    r"^(?:npm (?:ERR!|error)|ERR_PNPM_| ?ERR_PNPM|error |ERROR:|error:|\s*×|\s*╰─>|YN\d{4}: .*(?:error|Error)|"
    r"➤ YN0001)|^\s*ERR_"
)
_VERBOSE_RE = re.compile(
    r"^(?:npm (?:verbose|info|http|timing|sill|notice)|\s*Link requires|\s*Skipping link|\s*Found link"
    r"|\s*Getting page|\s*Fetched page|\s*Looking in|\s*Created temporary|\s*(?:Added|Removed) .* (?:to|from) build "
    r"tracker|\s*changing mode of|\s*Stored in directory|\s*Source in |\s*Given no hashes|\s*Remote directory"
    r"|\s*Running setup\.py|\[notice\]|.*run `npm fund`|.*packages are looking for funding|➤ YN0000|Using pip |"
    r"\s*Non-user install|\s*Skipping .* because|\s*Ignoring |\s*Lockfile|\s*Querying|Packages are hard linked)"
)
_DOWNLOAD_RE = re.compile(
    r"^(?:\s*Collecting |\s*Downloading |\s*Downloaded |\s*Using cached|\s*Obtaining |\s*Preparing metadata"
    r"|\s*Getting requirements|\s*Installing build dependencies|\s*Building wheel|\s*Created wheel"
    r"|\s*Requirement already satisfied|\s*Processing |\s*Attempting uninstall|\s*Found existing installation"
    r"|\s*Uninstalling |\s*Resolving|\s*Fetching|\s*Updating |\s*Locking |\s*Installing |\s*Checking|\s*Progress"
    r"|Progress: resolved|\s*━|\s*\|[█▉▊▋▌▍▎▏ ]+\||\[\d+/\d+\] |npm (?:WARN|warn) deprecated)"
)
_WARN_RE = re.compile(r"^(?:npm (?:WARN|warn)|WARNING:|warning |\s*warning:|⚠|WARN )")
MAX_WARNINGS = 5
BEFORE, AFTER = 2, 6
TAIL = 3


def detect(out: Output) -> int:
    for manager in _MANAGERS:
        args = out.command.args(manager)
        if args is not None and (set(args) & _INSTALL_VERBS or manager == "pip" or not args):
            return COMMAND
    if out.has("npm ERR!", "npm error ", "npm verbose ", "Successfully installed", "ERR_PNPM_") or (
            out.has("Collecting ") and out.has("Downloading ")):
        return CONTENT
    return 0


def select(out: Output) -> Selection:
    lines = out.lines
    sel = Selection(lines)
    warnings = 0
    errors: list[int] = []
    for i, line in enumerate(lines):
        if _ERROR_RE.match(line):
            sel.pin(i)
            errors.append(i)
        elif _OUTCOME_RE.search(line):
            sel.pin(i)
        elif _DOWNLOAD_RE.match(line):
            sel.hide(i, "download lines")
        elif _VERBOSE_RE.match(line):
            sel.hide(i, "verbose lines")
        elif _WARN_RE.match(line):
            warnings += 1
            if warnings <= MAX_WARNINGS:
                sel.keep(i)
            else:
                sel.hide(i, "package warnings")
        elif out.failed and is_error_line(line):
            sel.pin(i)
            errors.append(i)
    if out.failed:
        keep_windows(sel, errors, BEFORE, AFTER)
        sel.keep_range(len(lines) - TAIL, len(lines))
    return sel


FAMILY = Family("packages", detect, select)
