"""The words for the runtime's answers to slash-command ops, shared by the plain REPL and the TUI
(which draws some of them richer: /context as a gauge). The core sends data; wording it is here."""

from __future__ import annotations

from core import protocol as ev
from core.i18n import N_, _
from core.runtime.slash import Usage
from ui.cells import cut_cells, pad

MODES = {  # what each approval mode runs unasked
    "auto": N_("commands run in the sandbox unasked; leaving it asks"),
    "ask": N_("read-only commands and your allow rules run; everything else asks"),
    "yes": N_("every question is answered yes"),
}
NO_MCP = N_("No MCP servers are configured. Put them in mcp.json beside the .env, in the file named by "
            "DEEPSEEK_MCP_CONFIG, or in the workspace's .mcp.json (see docs/mcp.md).")
# A tool call's end as the front ends word it.
TOOL_STATUS = {"ok": N_("ok"), "error": N_("error"), "refused": N_("refused"), "aborted": N_("aborted"),
               "incomplete": N_("incomplete"), "running": N_("running")}
# The sources /context counts tokens by, as the core names them.
CONTEXT_PARTS = {"instructions": N_("instructions"), "tools": N_("tools"), "user messages": N_("user messages"),
                 "ledger": N_("ledger"), "summaries": N_("summaries"), "assistant text": N_("assistant text"),
                 "reasoning": N_("reasoning"), "tool calls": N_("tool calls")}
TOOL_RESULTS = "tool results: "
_CANNOT = {"/resume": N_("Cannot resume: {problem}"), "/clear": N_("Cannot start a new session: {problem}")}


def answer_text(answer: ev.CommandAnswer | Usage) -> str:
    """What a line front end prints for `answer`."""
    match answer:
        case Usage(message=message) | ev.Compacted(message=message) | ev.McpChanged(message=message):
            return message
        case ev.CommandFailed(command=command, detail=detail):
            return _(_CANNOT.get(command, "{problem}")).format(problem=detail)
        case ev.ModeChanged(mode=mode, changed=True):
            return _("Mode: {mode} ({meaning}) from the next command on.").format(mode=mode, meaning=_(MODES[mode]))
        case ev.ModeChanged(mode=mode, usable=usable, sandbox=sandbox):
            return _("Mode: {mode} ({meaning}). Sandbox: {sandbox}.\nSwitch with /mode {modes}.").format(
                mode=mode, meaning=_(MODES[mode]), sandbox=sandbox, modes="|".join(usable))
        case ev.ModelChanged(model=model, changed=True):
            return _("Model: {model} from the next request on").format(model=model)
        case ev.ModelChanged(model=model):
            return _("Model: {model} (switch with /model NAME)").format(model=model)
        case ev.ContextReport():
            return context_text(answer)
        case ev.SessionsListed():
            return sessions_text(answer)
        case ev.SessionSwitched(id=new, resumed=True, items=items, notices=notices):
            return _("Resumed session {id} ({count} items).").format(id=new, count=items) + "".join(
                f"\n! {notice}" for notice in notices)
        case ev.SessionSwitched(id=new, previous=previous):
            return _("New conversation (session {id}); the last one is kept: /resume {previous}").format(
                id=new, previous=previous)
        case ev.DiffShown(checkpoints=False) | ev.UndoFinished(outcome="no_checkpoints"):
            return _("No checkpoints in this session.")
        case ev.DiffShown(diff="", last=last):
            return _("The agent has changed no files in this session in its last turn.") if last else \
                _("The agent has changed no files in this session.")
        case ev.DiffShown(diff=diff):
            return diff
        case ev.UndoFinished():
            return undo_text(answer)
        case ev.McpReport(servers=servers):
            return mcp_text(servers)
    raise TypeError(f"no words for {answer!r}")


def context_text(report: ev.ContextReport) -> str:
    total, budget = report.total, report.budget
    lines = [_("Context: about {total:,} of {budget:,} tokens ({share:.0f}% of the budget; window {window:,})").format(
        total=total, budget=budget, share=100 * total / budget, window=report.window)]
    lines += [f"  {pad(_part(name), 24)} {tokens:>9,}" for name, tokens in report.parts.items()]
    if report.mcp_tools:
        lines.append("  " + _("(of the tools: {count} from MCP servers, about {tokens:,} tokens)").format(
            count=report.mcp_tools, tokens=report.mcp_tools_tokens))
    if report.input_tokens:
        cost = f", ${report.cost_usd:.4f}" if report.cost_usd is not None else ""
        lines.append(_("Session: {input:,} input tokens ({share:.0f}% from cache), {output:,} output").format(
            input=report.input_tokens, share=100 * report.cache_hit_share, output=report.output_tokens) + cost)
    return "\n".join(lines)


def _part(name: str) -> str:
    if name.startswith(TOOL_RESULTS):
        return _("tool results: {tool}").format(tool=name.removeprefix(TOOL_RESULTS))
    return _(CONTEXT_PARTS.get(name, name))


def sessions_text(listed: ev.SessionsListed) -> str:
    """The `--sessions` listing (and /sessions, which also names the open one): id, date, size and
    first prompt, newest first."""
    if not listed.sessions:
        text = _("No sessions yet (they are kept in {folder}).").format(folder=listed.folder)
    else:
        lines = [_("Sessions in {folder} (newest first):").format(folder=listed.folder)]
        for row in listed.sessions:
            prompt = cut_cells(row.first_prompt, 70)
            extra = _(" (checkpoints {size})").format(size=_size(row.checkpoints_size)) if row.checkpoints_size else ""
            lines.append(f"  {row.id}  {row.created.replace('T', ' ')}  {_size(row.size):>8}{extra}  {prompt}")
        if listed.more:
            lines.append("  " + _("… and {count} older").format(count=listed.more))
        lines.append(_("Resume one with --resume ID (or --resume for the latest)."))
        text = "\n".join(lines)
    return text + ("\n" + _("(current: {id})").format(id=listed.current) if listed.current else "")


def undo_text(done: ev.UndoFinished) -> str:
    named = "; ".join(f"“{turn}”" for turn in done.turns)
    match done.outcome:
        case "nothing":
            elsewhere = "".join(_("; earlier turns changed files in {folder}: resume the session there to undo them")
                                .format(folder=w) for w in done.elsewhere)
            return _("Nothing to undo: the agent has not changed any file (or it was all undone already)"
                     "{elsewhere}.").format(elsewhere=elsewhere)
        case "cannot_restore":
            return _("Nothing can be restored for {turns}:").format(turns=named) + "\n" + "\n".join(
                "  " + _("cannot restore {path}: {why}").format(path=row.path, why=_(row.why))
                for row in done.not_restored)
        case "nothing_to_restore":
            return _("Nothing to restore for {turns}: the files are already as they were.").format(turns=named)
        case "cancelled":
            return _("Undo cancelled ({reason}); nothing was changed.").format(reason=done.reason)
        case "conflict_refused":
            return _("Nothing was changed: {paths} changed outside the agent since it left them and overwriting was "
                     "not confirmed ({reason}).").format(paths=", ".join(done.conflicts), reason=done.reason)
    text = _("Restored {count} file(s) to their state before the undone turn(s)").format(count=len(done.restored))
    text += (": " + ", ".join(done.restored)) if done.restored else ""
    if done.not_restored:
        text += _(". Not restored: ") + _("; ").join(_("{path} ({why})").format(path=row.path, why=_(row.why))
                                                       for row in done.not_restored)
    return text + "."


def mcp_text(servers: list[ev.McpServerRow]) -> str:
    if not servers:
        return _(NO_MCP)
    lines = [_("MCP servers:")]
    for server in servers:
        lines.append(f"  {server.name} ({server.transport}): {server.summary}")
        for tool in server.tools:
            lines.append(f"    {pad(tool.offered_as or tool.name, 40)} {_('read-only') if tool.read_only else _('asks')}")
    lines.append(_("/mcp restart NAME restarts one; /mcp allow NAME starts a workspace server that waits for a yes."))
    return "\n".join(lines)


def _size(n: float) -> str:
    for unit in ("B", "KB", "MB"):
        if n < 1024:
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GB"
