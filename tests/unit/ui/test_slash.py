"""The one slash parser both front ends use: a line becomes the typed op, a front end's own command,
or a usage error that says what is wrong; /help lists the one table."""

from __future__ import annotations

import pytest

from core import protocol as ev
from core.runtime.slash import COMMANDS, Local, Usage, help_lines, parse


@pytest.mark.parametrize(("line", "op"), [
    ("/mode", ev.SetMode()),
    ("/mode ask", ev.SetMode(mode="ask")),
    ("/MODE  Yes ", ev.SetMode(mode="yes")),
    ("/mode next", ev.SetMode(mode="next")),
    ("/model", ev.SetModel()),
    ("/model deepseek-reasoner extra", ev.SetModel(model="deepseek-reasoner")),
    ("/context", ev.ShowContext()),
    ("/compact", ev.Compact()),
    ("/diff", ev.ShowDiff()),
    ("/diff last", ev.ShowDiff(last=True)),
    ("/diff -1", ev.ShowDiff(last=True)),
    ("/undo", ev.Undo()),
    ("/undo 3", ev.Undo(turns=3)),
    ("/clear", ev.NewSession()),
    ("/resume", ev.Resume()),
    ("/resume 20261205-会话", ev.Resume(session="20261205-会话")),
    ("/sessions", ev.ListSessions()),
    ("/mcp", ev.ShowMcp()),
    ("/mcp restart files", ev.McpRestart(server="files")),
    ("/mcp allow  my server", ev.McpAllow(server="my server")),
])
def test_a_line_becomes_its_op(line: str, op: ev.CommandOp) -> None:
    assert parse(line) == op


@pytest.mark.parametrize(("line", "words"), [
    ("/frobnicate", "Unknown command /frobnicate; /help lists them."),
    ("/模式", "Unknown command /模式"),
    ("/mode sometimes", "Unknown mode 'sometimes': the modes are auto, ask, yes."),
    ("/undo two", "/undo takes a number of turns, got 'two'."),
    ("/undo 0", "at least 1"),
    ("/diff everything", "/diff last"),
    ("/mcp restart", "Usage: /mcp restart NAME"),
    ("/mcp stop x", "Unknown /mcp command 'stop'"),
    ("/context now", "/context takes no argument"),
    ("/clear all", "/clear takes no argument"),
])
def test_what_is_not_a_command_is_a_usage_error(line: str, words: str) -> None:
    parsed = parse(line)
    assert isinstance(parsed, Usage) and words in parsed.message and parsed.command == line.split()[0].lower()


def test_the_front_end_s_own_commands_stay_local() -> None:
    assert parse("/help") == Local("/help", "")
    assert parse("/Exit") == Local("/exit", "") and parse("/quit") == Local("/quit", "")
    assert parse("/export notes.md", local=("/export", "/copy")) == Local("/export", "notes.md")
    assert isinstance(parse("/export notes.md"), Usage)  # a front end without it: unknown


def test_help_lists_every_command_from_the_one_table() -> None:
    lines = help_lines({"/copy": "copy the last answer"})
    assert lines[0] == "Commands:" and lines[-1].split() == ["/copy", "copy", "the", "last", "answer"]
    assert [line.split()[0] for line in lines[1:-1]] == list(COMMANDS)


def test_every_op_a_command_makes_names_that_command() -> None:
    for name, (make, _) in COMMANDS.items():
        parsed = make(name, "")
        assert isinstance(parsed, Local) or parsed.command.split()[0] == name
