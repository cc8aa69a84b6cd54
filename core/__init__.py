"""deepseek-agent's engine: everything but reading keys and drawing. It never prints or imports a UI.

A front end (`ui/`) holds a `Runtime` and nothing else of it: it sends ops and receives events.

    protocol.py     the events (frozen dataclasses) and ops; their `--json` wire form and JSON Schema
    runtime/        Runtime (worker thread, session swaps, approval policy, redaction), opening a
                    session (open.py), the slash commands (commands.py)
    agent/          the loop (user message → model turn → tools → … → answer), approvals, the prompt
    provider/       the Responses client: request body, SSE parsing, stream assembly, errors, retries
    session/        the item model, the append-only journal, the session lock
    tools/          the tools the model calls; safety/ is the approval gate over shell commands
    prune/          terminal output to what matters, per tool family; the raw output is archived
    context/        the budget and read-time shaping of the history (the journal is never altered)
    checkpoints/    what each turn changed, for /diff and /undo
    config.py .env and settings · secrets.py redaction · sanitize.py what may reach a screen ·
    console.py UTF-8 streams and command-output decoding · credentials.py · prices.py · cancel.py

Data flows one way: ops → runtime → agent loop → provider ⇄ model → events → front end; tool
results → pruner → journal → shaper.
"""

__version__ = "0.1.0"
