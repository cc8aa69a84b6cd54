"""Bundlers: webpack, vite, rollup, esbuild, parcel.

Kept: the first emitted assets, entrypoints, every ERROR block, warning headlines, and the
`compiled successfully` / `✓ built in` / `created ... in` lines. Gone: progress, `<t>` timings,
`LOG from` sections, module and chunk trees, the rest of long asset lists.

Understands webpack 5 (stats normal/verbose), vite 4-8 (rollup and rolldown), rollup 3-4, esbuild and
parcel 2 errors. Falls through: turbopack and rspack progress lines are general context.
"""

from __future__ import annotations

import re

from core.prune.families.base import COMMAND, STRONG_CONTENT, Family
from core.prune.output import Output
from core.prune.rules import is_blank
from core.prune.selection import KEPT, Selection

# Matched against the line with its indentation stripped.
_PROGRESS_RE = re.compile(
    r"<[si]> \[webpack\.Progress\]|\d{1,3}% (?:building|sealing|emitting|setup|done|after|before|cache|record)"
    r"|(?:transforming|rendering chunks|computing gzip size|building for \w+)\.\.\.$"
)
_ASSET_RE = re.compile(
    r"^(?:asset \S|\s{0,2}\S+\.(?:m?js|cjs|css|html|map|svg|png|jpe?g|gif|webp|woff2?|ttf|json|wasm|txt)\s+"
    r"[\d.,]+ ?(?:B|bytes|kB|KiB|MB|MiB|kb|mb|b)\b)"
)
_TREE_HEAD_RE = re.compile(
    r"^(?:chunk |orphan modules|runtime modules|cacheable modules|modules by |javascript modules|"
    r"\.\.?/\S+ (?:\[\S+\] )?[\d.]+ (?:bytes|KiB|MiB)|built modules|dependent modules)"
)
_SIZE_NEEDLES = ("kB", "KB", "KiB", "MB", "MiB", "kb", "mb", "bytes", " B ")
_SUMMARY_NEEDLES = ("compiled", "built in", "Built in", "created ", "Done in", "Entrypoint ", "Build failed",
                    "error during build", "[!]", "✘ [ERROR]")
_SUMMARY_RE = re.compile(
    r"\bcompiled\b.*\b(?:successfully|with \d+ (?:errors?|warnings?))|\bbuilt in [\d.]+ ?m?s\b|^created \S.* in "
    r"|Done in [\d.]+ ?m?s|^Entrypoint |^\s*Build failed|^error during build|^\[!\]|✘ \[ERROR\]|\bBuilt in \d"
)
_BLOCK_RE = re.compile(r"^(ERROR|WARNING) in |^✘ \[ERROR\]|^▲ \[WARNING\]|^\(!\) ")
MAX_ASSETS = 10
MAX_WARNING_LINES = 6
MAX_ERROR_LINES = 40


def detect(out: Output) -> int:
    if out.command.runs("webpack", "webpack-cli", "vite", "rollup", "esbuild", "parcel", "rspack", "rsbuild",
                        "turbopack"):
        return COMMAND
    if out.has("[webpack.Progress]", "webpack compiled", "building for production", "✓ built in") or (
            out.has("webpack ") and out.has(" compiled ")):
        return STRONG_CONTENT
    return 0


def select(out: Output) -> Selection:
    lines = out.lines
    sel = Selection(lines, default=KEPT)
    assets = 0
    tree = log = False  # inside a module/chunk tree (or an asset's details), inside a `LOG from` section
    block, block_lines = "", 0  # inside an ERROR/WARNING block, and how many lines it had so far
    errors = out.error_set
    sized = out.lines_with_any(*_SIZE_NEEDLES)
    summaries = out.lines_with_any(*_SUMMARY_NEEDLES)
    for i, line in enumerate(lines):
        indented = line[:1] in (" ", "\t")
        if block and line.startswith(" @ ") and lines[i - 1].startswith(" @ "):
            sel.hide(i, "import chain lines")  # the importer of the importer: the first one says where
            continue
        if block and not is_blank(line):
            block_lines += 1
            if block == "error" and block_lines <= MAX_ERROR_LINES:
                sel.pin(i)
            elif block == "warning" and block_lines > MAX_WARNING_LINES:
                sel.hide(i, "warning details")
            continue
        block = ""
        if (m := _BLOCK_RE.match(line)) is not None:
            block, block_lines = ("warning" if "WARN" in m.group() or m.group() == "(!) " else "error"), 1
            sel.pin(i)
            tree = log = False
        elif _PROGRESS_RE.match(line.lstrip()):
            sel.hide(i, "progress lines")
        elif line.startswith("<t> "):
            sel.hide(i, "timing lines")
        elif line.startswith("LOG from "):
            log = True
            sel.hide(i, "log lines")
        elif log and line:
            if line.startswith("<e>"):
                sel.pin(i)
            else:
                sel.hide(i, "log lines")
        elif tree and indented:
            sel.hide(i, "module tree lines")
        elif _TREE_HEAD_RE.match(line):
            tree, log = True, False
            sel.hide(i, "module tree lines")
        elif line.startswith("asset ") or (i in sized and _ASSET_RE.match(line)):
            tree, log = True, False  # an asset's indented details follow it
            assets += 1
            if assets <= MAX_ASSETS and not out.failed:  # a failed build's assets are stale or partial
                sel.pin(i)
            else:
                sel.hide(i, "asset lines")
        else:
            tree = log = False
            if (i in summaries and _SUMMARY_RE.search(line)) or i in errors:
                sel.pin(i)
    return sel


FAMILY = Family("bundler", detect, select)
