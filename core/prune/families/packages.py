"""Package managers: npm, pnpm, yarn, bun, pip, uv, poetry, pipenv.

On success only the outcome matters (`added 12 packages`, `Successfully installed ...`,
`Resolved 8 packages`) and any error-looking line; on failure everything but the chatter, with the
errors pinned. Download, resolution and verbose chatter goes either way.

Understands npm 9-11, pnpm 8-12, yarn 1 and berry, bun, pip 23-25, uv, poetry, and apt/dnf/brew-style
installs (by the last line naming each package). Falls through: conda's solver tables are context.
"""

from __future__ import annotations

import re

from core.prune.families.base import COMMAND, CONTENT, Family
from core.prune.families.c_build import is_compiler_command
from core.prune.output import Output
from core.prune.rules import COUNTS_RE, keep_head_tail, keep_windows
from core.prune.selection import Selection

_INSTALL_VERBS = {"install", "i", "ci", "add", "remove", "rm", "uninstall", "un", "update", "up", "upgrade",
                  "audit", "sync", "lock", "dedupe", "prune", "outdated", "link", "download", "wheel"}
_MANAGERS = ("npm", "pnpm", "yarn", "bun", "pip", "uv", "poetry", "pipenv", "pdm", "conda", "mamba", "apt-get", "apt",
             "dnf", "yum", "zypper", "apk", "brew", "gem", "pacman", "choco", "composer", "snap", "port")

# All matched against the line with its indentation stripped, so that each starts with a literal
# and a non-matching line is rejected after a character or two.
_OUTCOME_RE = re.compile(
    r"(?:added|removed|changed|audited|up to date)\b.*\bpackages?\b|Successfully (?:installed|uninstalled|built)"
    r"|Installing collected packages|Would install|(?:Resolved|Prepared|Installed|Uninstalled|Audited|Built|Updated"
    r"|Downloaded) \d+ packages?|[+-] \S+(?:==|@| )[\w.]+|Packages: [+-]|Done in |success |Already up to date"
    r"|Lockfile is up to date|dependencies:|devDependencies:|Writing lock file|No dependencies to install"
    r"|Nothing to (?:install|do)|found \d+ vulnerabilit|\d+ (?:\w+ )?vulnerabilit"
)
_ERROR_RE = re.compile(r"npm (?:ERR!|error)|ERR_PNPM_|ERR_|error |ERROR:|error:|×|╰─>|➤ YN0001|YN\d{4}: .*[Ee]rror")
_VERBOSE_RE = re.compile(
    r"npm (?:verbose|info|http|timing|sill|notice)|Link requires|Skipping link|Found link|Getting page|Fetched page"
    r"|Looking in|Created temporary|(?:Added|Removed) .* (?:to|from) build tracker|changing mode of"
    r"|Stored in directory|Source in |Given no hashes|Remote directory|Running setup\.py|\[notice\]|.*run `npm fund`"
    r"|.*packages are looking for funding|➤ YN0000|Using pip |Non-user install|Skipping .* because|Ignoring "
    r"|Lockfile|Querying|Packages are hard linked"
)
_DOWNLOAD_RE = re.compile(
    r"Collecting |Downloading |Downloaded |Using cached|Obtaining |Preparing metadata|Getting requirements"
    r"|Installing build dependencies|Building wheel|Created wheel|Requirement already satisfied|Processing "
    r"|Attempting uninstall|Found existing installation|Uninstalling |Resolving|Fetching|Updating |Locking "
    r"|Installing |Checking|Progress|━|\|[█▉▊▋▌▍▎▏ ]+\||\[\d+/\d+\] |npm (?:WARN|warn) deprecated"
)
_WARN_RE = re.compile(r"npm (?:WARN|warn)|WARNING:|warning |warning:|⚠|WARN ")
MAX_WARNINGS = 5
FAILED_WARNINGS = 1  # on failure the errors say what went wrong; engine and peer warnings rarely do
MAX_NAMED = 20


BEFORE, AFTER = 2, 3
HEAD, TAIL = 1, 8


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
    # On success only the outcome is worth reading; on failure the errors, the lines around them
    # (a build's compiler error and its source line) and the start and end.
    sel = Selection(lines)
    warnings = 0
    error_lines = out.error_set
    for i, line in enumerate(lines):
        s = line.lstrip()
        if _ERROR_RE.match(s) or _OUTCOME_RE.match(s) or COUNTS_RE.search(s):
            sel.pin(i)
        elif out.failed and is_compiler_command(s):
            sel.hide(i, "build commands")
        elif _DOWNLOAD_RE.match(s):
            sel.hide(i, "download lines")
        elif _VERBOSE_RE.match(s):
            sel.hide(i, "verbose lines")
        elif _WARN_RE.match(s):
            warnings += 1
            if warnings <= (FAILED_WARNINGS if out.failed else MAX_WARNINGS):
                sel.keep(i)
            else:
                sel.hide(i, "package warnings")
        elif i in error_lines:
            sel.pin(i)
    if out.failed:
        keep_windows(sel, error_lines, BEFORE, AFTER)
        keep_head_tail(sel, HEAD, TAIL)
    else:
        for i in _last_mentions(out):
            sel.pin(i)
    return sel


def _last_mentions(out: Output) -> list[int]:
    """The last line naming each package asked for (`Setting up cowsay (3.03) ...`): its final state,
    whatever the manager prints."""
    names = [a for seg in out.command.segments if seg and seg[0] in _MANAGERS for a in seg[2:]
             if not a.startswith("-") and len(a) > 1]
    found = []
    for name in names[:MAX_NAMED]:
        hits = out.lines_with(name.split("==")[0].split("@")[0] if not name.startswith("@") else name)
        if hits:
            found.append(hits[-1])
    return found


FAMILY = Family("packages", detect, select)
