"""The words for the runtime's answers to slash-command ops, shared by the plain REPL and the TUI
(which draws some of them richer: /context as a gauge). The core sends data; wording it is here."""

from __future__ import annotations

from core import protocol as ev
from core.runtime.slash import Usage

MODES = {  # what each approval mode runs unasked
    "auto": "commands run in the sandbox unasked; leaving it asks",
    "ask": "read-only commands and your allow rules run; everything else asks",
    "yes": "every question is answered yes",
}
NO_MCP = ("No MCP servers are configured. Put them in mcp.json beside the .env, in the file named by "
          "DEEPSEEK_MCP_CONFIG, or in the workspace's .mcp.json (see docs/mcp.md).")
_CANNOT = {"/resume": "Cannot resume: ", "/clear": "Cannot start a new session: "}


def answer_text(answer: ev.CommandAnswer | Usage) -> str:
    """What a line front end prints for `answer`."""
    match answer:
        case Usage(message=message) | ev.Compacted(message=message) | ev.McpChanged(message=message):
            return message
        case ev.CommandFailed(command=command, detail=detail):
            return _CANNOT.get(command, "") + detail
        case ev.ModeChanged(mode=mode, changed=True):
            return f"Mode: {mode} ({MODES[mode]}) from the next command on."
        case ev.ModeChanged(mode=mode, usable=usable, sandbox=sandbox):
            return f"Mode: {mode} ({MODES[mode]}). Sandbox: {sandbox}.\nSwitch with /mode {'|'.join(usable)}."
        case ev.ModelChanged(model=model, changed=True):
            return f"Model: {model} from the next request on"
        case ev.ModelChanged(model=model):
            return f"Model: {model} (switch with /model NAME)"
        case ev.ContextReport():
            return context_text(answer)
        case ev.SessionsListed():
            return sessions_text(answer)
        case ev.SessionSwitched(id=new, resumed=True, items=items, notices=notices):
            return f"Resumed session {new} ({items} items)." + "".join(f"\n! {notice}" for notice in notices)
        case ev.SessionSwitched(id=new, previous=previous):
            return f"New conversation (session {new}); the last one is kept: /resume {previous}"
        case ev.DiffShown(checkpoints=False) | ev.UndoFinished(outcome="no_checkpoints"):
            return "No checkpoints in this session."
        case ev.DiffShown(diff="", last=last):
            return "The agent has changed no files in this session" + (" in its last turn." if last else ".")
        case ev.DiffShown(diff=diff):
            return diff
        case ev.UndoFinished():
            return undo_text(answer)
        case ev.McpReport(servers=servers):
            return mcp_text(servers)
    raise TypeError(f"no words for {answer!r}")


def context_text(report: ev.ContextReport) -> str:
    total, budget = report.total, report.budget
    lines = [f"Context: about {total:,} of {budget:,} tokens ({100 * total / budget:.0f}% of the budget; "
             f"window {report.window:,})"]
    lines += [f"  {name:<24} {tokens:>9,}" for name, tokens in report.parts.items()]
    if report.mcp_tools:
        lines.append(f"  (of the tools: {report.mcp_tools} from MCP servers, about {report.mcp_tools_tokens:,} tokens)")
    if report.input_tokens:
        cost = f", ${report.cost_usd:.4f}" if report.cost_usd is not None else ""
        lines.append(f"Session: {report.input_tokens:,} input tokens ({100 * report.cache_hit_share:.0f}% "
                     f"from cache), {report.output_tokens:,} output{cost}")
    return "\n".join(lines)


def sessions_text(listed: ev.SessionsListed) -> str:
    """The `--sessions` listing (and /sessions, which also names the open one): id, date, size and
    first prompt, newest first."""
    if not listed.sessions:
        text = f"No sessions yet (they are kept in {listed.folder})."
    else:
        lines = [f"Sessions in {listed.folder} (newest first):"]
        for row in listed.sessions:
            prompt = row.first_prompt[:70] + ("…" if len(row.first_prompt) > 70 else "")
            extra = f" (checkpoints {_size(row.checkpoints_size)})" if row.checkpoints_size else ""
            lines.append(f"  {row.id}  {row.created.replace('T', ' ')}  {_size(row.size):>8}{extra}  {prompt}")
        if listed.more:
            lines.append(f"  … and {listed.more} older")
        lines.append("Resume one with --resume ID (or --resume for the latest).")
        text = "\n".join(lines)
    return text + (f"\n(current: {listed.current})" if listed.current else "")


def undo_text(done: ev.UndoFinished) -> str:
    named = "; ".join(f"“{turn}”" for turn in done.turns)
    match done.outcome:
        case "nothing":
            elsewhere = "".join(f"; earlier turns changed files in {w}: resume the session there to undo them"
                                for w in done.elsewhere)
            return f"Nothing to undo: the agent has not changed any file (or it was all undone already){elsewhere}."
        case "cannot_restore":
            return f"Nothing can be restored for {named}:\n" + "\n".join(
                f"  cannot restore {row.path}: {row.why}" for row in done.not_restored)
        case "nothing_to_restore":
            return f"Nothing to restore for {named}: the files are already as they were."
        case "cancelled":
            return f"Undo cancelled ({done.reason}); nothing was changed."
        case "conflict_refused":
            return (f"Nothing was changed: {', '.join(done.conflicts)} changed outside the agent since it left them "
                    f"and overwriting was not confirmed ({done.reason}).")
    text = f"Restored {len(done.restored)} file(s) to their state before the undone turn(s)"
    text += (": " + ", ".join(done.restored)) if done.restored else ""
    if done.not_restored:
        text += ". Not restored: " + "; ".join(f"{row.path} ({row.why})" for row in done.not_restored)
    return text + "."


def mcp_text(servers: list[ev.McpServerRow]) -> str:
    if not servers:
        return NO_MCP
    lines = ["MCP servers:"]
    for server in servers:
        lines.append(f"  {server.name} ({server.transport}): {server.summary}")
        for tool in server.tools:
            lines.append(f"    {tool.offered_as or tool.name:<40} {'read-only' if tool.read_only else 'asks'}")
    lines.append("/mcp restart NAME restarts one; /mcp allow NAME starts a workspace server that waits for a yes.")
    return "\n".join(lines)


def _size(n: float) -> str:
    for unit in ("B", "KB", "MB"):
        if n < 1024:
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GB"
