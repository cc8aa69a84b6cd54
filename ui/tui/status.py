"""The one-line status bar: model · state · context % · tokens · cost · pruning saved.

Fields are dropped from the right when the terminal is narrow; the state is never dropped."""

from __future__ import annotations

import time

from prompt_toolkit.utils import get_cwidth

from ui.tui.render import Fragments
from ui.tui.state import Status


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
        return f"retrying in {s.retry_until - now:.0f} s ({s.retry_attempt})"
    if s.state == "running":
        detail = s.detail if len(s.detail) <= 30 else s.detail[:29] + "…"
        return f"running {detail}{took}"
    if s.state == "approval":
        return "waiting for your approval"
    if s.state == "idle":
        return "idle" + (f" · {s.queued} queued" if s.queued else "")
    step = f" · step {s.step}/{s.max_steps}" if s.step > 1 else ""
    label = {"waiting": "waiting for the model", "compacting": "compacting"}.get(s.state, s.state)
    return f"{label}{took}{step}"


def status_fragments(s: Status, width: int) -> Fragments:
    """The bar at `width`: every field in full if it fits, else in short, dropping from the right."""
    hint = " · Esc interrupts" if s.busy else ""
    full, short = [], []
    if s.mode:
        confined = s.sandbox.split(":")[0].split(" (")[0] if s.sandbox and not s.sandbox.startswith("none") else ""
        full.append(f"mode {s.mode}" + (f" ({confined})" if confined else " (no sandbox)"))
        short.append(s.mode)
    if s.budget:
        share = f"{100 * s.context / s.budget:.0f}%"
        full.append(f"ctx {share} of {_k(s.budget)}")
        short.append(f"ctx {share}")
    if s.input_tokens or s.output_tokens:
        full.append(f"in {_k(s.input_tokens)} ({_k(s.cached_tokens)} cached) / out {_k(s.output_tokens)}")
        short.append(f"in {_k(s.input_tokens)} out {_k(s.output_tokens)}")
    if s.cost is not None:
        full.append(f"${s.cost:.4f}")
        short.append(f"${s.cost:.4f}")
    if s.pruned_saved:
        full.append(f"pruned −{_k(s.pruned_saved)} chars")
        short.append(f"−{_k(s.pruned_saved)} pruned")
    if s.queued and s.state != "idle":
        full.append(f"{s.queued} queued")
        short.append(f"{s.queued} queued")
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
        if len(text) > len(best):
            best = text
    if get_cwidth(best) > width:
        best = best[: max(1, width - 1)]
    style = "class:status.busy" if s.busy else "class:status"
    return [(style, best + " " * max(0, width - get_cwidth(best)))]
