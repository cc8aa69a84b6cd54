"""The one-line status bar: model · state · context % · tokens · cost · pruning saved.

Fields are dropped from the right when the terminal is narrow; the state is never dropped."""

from __future__ import annotations

import time

from prompt_toolkit.utils import get_cwidth

from core.i18n import N_, _
from ui.cells import cut_cells
from ui.tui.render import Fragments
from ui.tui.state import Status

# The states the core names, as the bar words them ("waiting" is the model's turn to speak).
STATES = {"waiting": N_("waiting for the model"), "compacting": N_("compacting"), "thinking": N_("thinking"),
          "writing": N_("writing"), "retrying": N_("retrying"), "running": N_("running")}


def _k(n: int) -> str:
    if n >= 1_000_000:
        return f"{n / 1_000_000:.1f}M"
    if n >= 10_000:
        return f"{n / 1000:.0f}k"
    return f"{n / 1000:.1f}k" if n >= 1000 else str(n)


def state_text(s: Status, now: float | None = None) -> str:
    now = time.monotonic() if now is None else now
    took = f" {now - s.since:.0f} s" if now - s.since >= 1 else ""
    if s.state == "retrying" and s.retry_until > now:
        return _("retrying in {seconds:.0f} s ({attempt})").format(seconds=s.retry_until - now,
                                                                   attempt=s.retry_attempt)
    if s.state == "running":
        return _("running {what}").format(what=cut_cells(s.detail, 30)) + took
    if s.state == "approval":
        return _("waiting for your approval")
    if s.state == "idle":
        return _("idle") + (_(" · {count} queued").format(count=s.queued) if s.queued else "")
    step = _(" · step {step}/{steps}").format(step=s.step, steps=s.max_steps) if s.step > 1 else ""
    return f"{_(STATES.get(s.state, s.state))}{took}{step}"


def status_fragments(s: Status, width: int) -> Fragments:
    """The bar at `width`: every field in full if it fits, else in short, dropping from the right."""
    hint = _(" · Esc interrupts") if s.busy else ""
    full, short = [], []
    if s.mode:
        confined = s.sandbox.split(":")[0].split(" (")[0] if s.sandbox and not s.sandbox.startswith("none") else ""
        full.append(_("mode {mode}").format(mode=s.mode) + (f" ({confined})" if confined else _(" (no sandbox)")))
        short.append(s.mode)
    if s.budget:
        share = f"{100 * s.context / s.budget:.0f}%"
        full.append(_("ctx {share} of {budget}").format(share=share, budget=_k(s.budget)))
        short.append(_("ctx {share}").format(share=share))
    if s.input_tokens or s.output_tokens:
        full.append(_("in {input} ({cached} cached) / out {output}").format(
            input=_k(s.input_tokens), cached=_k(s.cached_tokens), output=_k(s.output_tokens)))
        short.append(_("in {input} out {output}").format(input=_k(s.input_tokens), output=_k(s.output_tokens)))
    if s.cost is not None:
        full.append(f"${s.cost:.4f}")
        short.append(f"${s.cost:.4f}")
    if s.pruned_saved:
        full.append(_("pruned −{saved} chars").format(saved=_k(s.pruned_saved)))
        short.append(_("−{saved} pruned").format(saved=_k(s.pruned_saved)))
    if s.queued and s.state != "idle":
        full.append(_("{count} queued").format(count=s.queued))
        short.append(_("{count} queued").format(count=s.queued))
    head = (f" {s.model} · " if s.model else " ") + state_text(s)
    best = ""
    for fields, with_hint in ((full, True), (short, True), (short, False)):
        text = head + (hint if with_hint else "")
        kept = 0
        for field in fields:
            if get_cwidth(text + " · " + field) > width - 1:
                break
            text += " · " + field
            kept += 1
        if kept == len(fields):
            best = text
            break
        if get_cwidth(text) > get_cwidth(best):
            best = text
    if get_cwidth(best) > width:
        best = cut_cells(best, max(1, width - 1))
    style = "class:status.busy" if s.busy else "class:status"
    return [(style, best + " " * max(0, width - get_cwidth(best)))]
