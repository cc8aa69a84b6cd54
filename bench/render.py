"""Streaming render cost: the TUI's incremental Markdown against re-rendering everything.

    python -m bench.render [--tokens 20000] [--width 100]

A ~20,000-token Markdown answer (headings, paragraphs, lists, code blocks, tables) is streamed
delta by delta (about one token each, as DeepSeek sends them) through the TUI's renderer
(`ui.tui.markdown.MarkdownStream`: finished blocks cached, only the open tail re-rendered, at most
20 times a second) and, in the same run, through a renderer that re-renders the whole text on
every delta (what Aider and Open Interpreter do). That baseline is quadratic: at this length it
would take hours, so it is timed on evenly spaced prefixes and integrated over every delta
(the sample count is printed). Also printed: ours with no tail throttle (every delta re-renders the
tail: the worst case), the deltas per second ours sustains, how long Esc takes to stop a streaming
turn, and the time from starting `python3 agent.py` to its first full-screen frame, next to a bare
`python3 -c pass`.
"""

from __future__ import annotations

import argparse
import os
import pty
import select
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # runs as `python3 bench/render.py` and as `python3 -m bench.render`

from ui.tui import markdown as md
from ui.tui.render import RENDERER

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = 24


def document(tokens: int) -> str:
    """A Markdown answer of about `tokens` tokens (4 characters each)."""
    parts, i = [], 0
    while sum(map(len, parts)) < tokens * 4:
        i += 1
        parts.append(f"## Step {i}: the parser\n\nThe **tokenizer** drops the last line when the input has no "
                     f"trailing newline; `parse()` then sees {i} fewer tokens than it should.\n")
        parts.append("- check the input\n- add a newline when missing\n- keep `\\r\\n` as it is\n")
        parts.append(f"```python\ndef parse_{i}(text: str) -> list[str]:\n    if not text.endswith('\\n'):\n"
                     f"        text += '\\n'\n    return [line for line in text.splitlines() if line]\n```\n")
        parts.append(f"| case | before | after |\n|------|--------|-------|\n| empty | 0 | 0 |\n| one line | {i} | "
                     f"{i + 1} |\n| crlf | 2 | 2 |\n")
    return "\n".join(parts)


def deltas(text: str, size: int = 4) -> list[str]:
    return [text[i:i + size] for i in range(0, len(text), size)]


def ours(pieces: list[str], width: int, throttle: bool) -> float:
    """Feed every delta and draw a frame after each; seconds of CPU."""
    saved = md.TAIL_INTERVAL
    md.TAIL_INTERVAL = saved if throttle else 0.0
    try:
        stream = md.MarkdownStream()
        start = time.process_time()
        for piece in pieces:
            stream.feed(piece)
            stream.lines(width)
        stream.finish()
        stream.lines(width)
        return time.process_time() - start
    finally:
        md.TAIL_INTERVAL = saved


def naive(text: str, pieces: list[str], width: int) -> float:
    """Re-render the whole text at every delta, integrated from SAMPLES timed prefixes."""
    from rich.markdown import Markdown

    ends, total = [], 0
    for piece in pieces:
        total += len(piece)
        ends.append(total)
    points = [ends[int(k * (len(ends) - 1) / (SAMPLES - 1))] for k in range(SAMPLES)]
    cost = {}
    for end in points:
        start = time.process_time()
        RENDERER.lines(Markdown(text[:end]), width)
        cost[end] = time.process_time() - start
    seconds = 0.0
    for end in ends:  # linear interpolation between the two nearest samples
        right = next(p for p in points if p >= end)
        left = max((p for p in points if p <= end), default=right)
        share = 0 if right == left else (end - left) / (right - left)
        seconds += cost[left] + share * (cost[right] - cost[left])
    return seconds


def first_frame() -> tuple[float, float]:
    """Seconds from spawning `python3 agent.py` in a pseudo-terminal to its status bar, and for
    `python3 -c pass`."""
    from tests.support.sse_server import ScriptedServer

    start = time.monotonic()
    subprocess.run([sys.executable, "-c", "pass"], check=True)
    bare = time.monotonic() - start
    with ScriptedServer([]) as server, tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "DEEPSEEK_BASE_URL": server.url, "DEEPSEEK_API_KEY": "sk-bench",
               "AGENT_SESSIONS_DIR": str(Path(tmp) / "s"), "TERM": "xterm-256color", "LANG": "C.UTF-8",
               "PYTHONPATH": str(ROOT)}
        master, slave = pty.openpty()
        start = time.monotonic()
        proc = subprocess.Popen([sys.executable, str(ROOT / "agent.py"), "--cwd", tmp], stdin=slave, stdout=slave,
                                stderr=slave, env=env, close_fds=True)
        os.close(slave)
        seen, took = b"", float("nan")
        while time.monotonic() - start < 30:
            ready, _, _ = select.select([master], [], [], 0.5)
            if ready:
                try:
                    seen += os.read(master, 65536)
                except OSError:
                    break
                if b"idle" in seen:
                    took = time.monotonic() - start
                    break
        os.write(master, b"\x04")  # Ctrl-D quits
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
        os.close(master)
    return took, bare


def esc_latency(trials: int = 5) -> list[float]:
    """Seconds from an Esc keypress (pipe input) to the running turn's Cancel being set, in-process."""
    from tests.support.sse_server import Reply, ScriptedServer, text_events
    from tests.support.tui_harness import Harness

    slow = Reply(text_events("tick " * 200, chunks=200), delay=0.2)
    seen: list[float] = []
    with ScriptedServer([slow]) as server, tempfile.TemporaryDirectory() as tmp:
        def steps(h: Harness) -> None:
            for _ in range(trials):
                h.type("go")
                h.wait_for("tick")
                cancel = h.app.cancel
                start = time.monotonic()
                h.keys("\x1b")
                while cancel is not None and not cancel.cancelled and time.monotonic() - start < 5:
                    time.sleep(0.001)
                seen.append(time.monotonic() - start)
                h.idle()

        Harness(server.url, Path(tmp)).run(steps)
    return sorted(seen)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, default=20_000)
    parser.add_argument("--width", type=int, default=100)
    args = parser.parse_args(argv)
    text = document(args.tokens)
    pieces = deltas(text)
    print(f"answer: {len(text):,} chars (~{len(text) // 4:,} tokens) in {len(pieces):,} deltas, width {args.width}")
    md.render_markdown("warm `up`\n```python\nx = 1\n```", args.width)  # imports and lexers loaded once
    fast = ours(pieces, args.width, throttle=True)
    worst = ours(pieces, args.width, throttle=False)
    slow = naive(text, pieces, args.width)
    print(f"re-render everything: {slow:10.1f} s  (integrated from {SAMPLES} timed prefixes)")
    print(f"ours, worst case:     {worst:10.2f} s  ({slow / worst:,.0f}x faster; tail re-rendered on every delta)")
    print(f"ours, as in the app:  {fast:10.2f} s  ({slow / fast:,.0f}x faster; tail at most 20 times a second)")
    print(f"ours sustains {len(pieces) / fast:,.0f} deltas/s as in the app, {len(pieces) / worst:,.0f} in the worst "
          "case (need: 2,000)")
    esc = esc_latency()
    print(f"Esc to interrupted turn: median {esc[len(esc) // 2] * 1000:.0f} ms, worst {esc[-1] * 1000:.0f} ms "
          f"of {len(esc)} (prompt_toolkit's default escape timeouts would hold it 1,500 ms)")
    took, bare = first_frame()
    print(f"first frame of `python3 agent.py`: {took * 1000:.0f} ms (bare `python3 -c pass`: {bare * 1000:.0f} ms)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
