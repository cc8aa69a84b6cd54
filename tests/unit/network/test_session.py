"""The session's side of the network: AGENT_NETWORK's modes, a host question put through the
approval gate (never answered by --yes), and hosts kept for the workspace across sessions."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from core import protocol as ev
from core.agent.approvals import Approvals, Keeper
from core.agent.rules import AllowRules
from core.cancel import Cancel
from core.config import ConfigError, load_settings
from core.modes import ASK, YES
from core.network.hosts import Answer
from core.network.proxy import direct_note
from core.network.session import approval_ask, valid_hosts
from tests.support.events import Recorder


def test_the_network_is_proxied_by_default_and_takes_three_modes(tmp_path: Path) -> None:
    assert load_settings(environ={}, env_file=tmp_path / "none").network == "proxied"
    for mode in ("proxied", "on", "off"):
        assert load_settings(environ={"AGENT_NETWORK": mode}, env_file=tmp_path / "none").network == mode
    with pytest.raises(ConfigError, match="must be proxied, on or off"):
        load_settings(environ={"AGENT_NETWORK": "open"}, env_file=tmp_path / "none")


def _asker(tmp_path: Path, mode: str) -> tuple[Approvals, Recorder, AllowRules, Cancel]:
    events = Recorder()
    rules = AllowRules(tmp_path, tmp_path / "ws")
    return Approvals(events, mode, interactive=True, rules=rules), events, rules, Cancel()


def _ask_in_thread(approvals: Approvals, rules: AllowRules, cancel: Cancel,
                   host: str) -> tuple[threading.Thread, list[Answer]]:
    ask = approval_ask(lambda what, why, rule, keep: approvals.ask(
        what, why, asker="network", cwd=".", cancel=cancel, kind="network", keep=Keeper(rule, keep)),
        lambda kept: rules.add(kept, "hosts"))
    answers: list[Answer] = []
    thread = threading.Thread(target=lambda: answers.append(ask(host, 443)), daemon=True)
    thread.start()
    return thread, answers


def _question(events: Recorder) -> ev.ApprovalRequested:
    for _ in range(200):
        asked = events.of(ev.ApprovalRequested)
        if asked:
            return asked[-1]
        time.sleep(0.01)
    raise AssertionError("no question was asked")


@pytest.mark.parametrize("mode", [ASK, YES])  # --yes does not answer it: a host is the person's to allow
def test_always_keeps_the_host_with_the_workspaces_rules(tmp_path: Path, mode: str) -> None:
    approvals, events, rules, cancel = _asker(tmp_path, mode)
    rules.add("pytest")
    thread, answers = _ask_in_thread(approvals, rules, cancel, "Collector.Example")
    question = _question(events)
    assert question.kind == "network" and "collector.example:443" in question.action.lower()
    assert question.rule == "network host Collector.Example"
    assert "workspace" in {d["id"] for d in question.decisions}
    approvals.answer(question.id, "workspace")
    thread.join(10)
    assert answers == [Answer.ALLOW_ALWAYS]
    again = AllowRules(tmp_path, tmp_path / "ws")
    assert (again.hosts, again.commands) == (["collector.example"], ["pytest"])


@pytest.mark.parametrize(("decision", "answer"), [("once", Answer.ALLOW_ONCE), ("session", Answer.ALLOW_ONCE),
                                                   ("deny", Answer.DENY)])
def test_other_answers_hold_for_the_session_only(tmp_path: Path, decision: str, answer: Answer) -> None:
    approvals, events, rules, cancel = _asker(tmp_path, ASK)
    thread, answers = _ask_in_thread(approvals, rules, cancel, "collector.example")
    approvals.answer(_question(events).id, decision)
    thread.join(10)
    assert answers == [answer]
    assert AllowRules(tmp_path, tmp_path / "ws").hosts == []


def test_an_interrupted_turn_refuses_the_host(tmp_path: Path) -> None:
    approvals, events, rules, cancel = _asker(tmp_path, ASK)
    thread, answers = _ask_in_thread(approvals, rules, cancel, "collector.example")
    _question(events)
    cancel.cancel("interrupted")
    thread.join(10)
    assert answers == [Answer.DENY]


def test_a_damaged_kept_host_allows_nothing() -> None:
    assert valid_hosts(["ok.example", "bad host!", "https://x.example/", "*.corp.example"]) == (
        "ok.example", "*.corp.example")


def test_a_damaged_rules_file_keeps_no_host(tmp_path: Path) -> None:
    rules = AllowRules(tmp_path, tmp_path / "ws")
    assert rules.path is not None
    rules.path.parent.mkdir(parents=True)
    for content in ("not json", '{"hosts": "x"}', "[]", '{"hosts": [1, null]}'):
        rules.path.write_text(content, encoding="utf-8")
        assert AllowRules(tmp_path, tmp_path / "ws").hosts == []


@pytest.mark.parametrize(("output", "noted"), [
    ("bash: connect: Network is unreachable", True),
    ("curl: (6) Could not resolve host: example.com", True),
    ("socket.gaierror: [Errno -3] Temporary failure in name resolution", True),
    ("curl: (7) Failed to connect to 10.0.0.1 port 80 after 0 ms: Couldn't connect to server", True),
    ("urllib.error.URLError: <urlopen error [Errno 101] Network is unreachable>", True),
    ("FAILED tests/test_x.py::test_y - AssertionError", False),
    ("", False),
])
def test_a_failure_to_go_direct_gets_a_note(output: str, noted: bool) -> None:
    assert bool(direct_note(output)) is noted
