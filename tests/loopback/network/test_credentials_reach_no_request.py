"""A model that reads a folder of credential files with the file tool and prints them through a
shell in several spellings: no spelling of any credential reaches a request to the model, the
journal or the events a front end sees, although the agent knew none of them by value."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

from core.agent.loop import Agent
from core.protocol import to_wire
from core.secrets import RedactingEmit, Redactor, spellings, squeeze
from core.session.journal import Journal
from tests.conftest import make_settings
from tests.support.credential_home import CREDENTIAL_FILES
from tests.support.events import Recorder
from tests.support.sse_server import Reply, ScriptedServer, call_events, text_events

PRINTS = (
    "cat {f}",
    "base64 {f}",
    "base64 -w0 {f}",
    "od -An -tx1 {f}",
    "rev {f}",
    "python3 -c \"import sys; print(open(sys.argv[1], 'rb').read().hex())\" {f}",
)


def _home(workspace: Path) -> list[tuple[str, list[str]]]:
    files = []
    for index, (name, text, credentials) in enumerate(CREDENTIAL_FILES):
        path = workspace / "home" / f"{index:02d}-{re.sub(r'[^A-Za-z0-9.]+', '_', name)}"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        files.append((path.relative_to(workspace).as_posix(), credentials))
    return files


def _left(text: str, credentials: list[str]) -> list[str]:
    squeezed = squeeze(text)
    return [
        credential for credential in credentials if any(form in squeezed for form in spellings(credential))
    ]


@pytest.mark.skipif(sys.platform == "win32", reason="the printing commands (cat, base64, od, rev) are POSIX tools; redaction itself is tested per shape")
def test_no_credential_reaches_the_model_the_journal_or_the_screen(
    tmp_path: Path, recorder: Recorder
) -> None:
    workspace = tmp_path / "ws"
    files = _home(workspace)
    rel_paths = [path for path, _ in files]
    script = [
        Reply(call_events([("read_file", {"path": path}) for path in rel_paths])),
        *(
            Reply(
                call_events([("run_shell", {"command": " ; ".join(p.format(f=path) for path in rel_paths)})])
            )
            for p in PRINTS
        ),
        Reply(text_events("done")),
    ]
    with ScriptedServer(script) as server:
        settings = make_settings(server.url, tmp_path)
        journal = Journal.create(tmp_path / "sessions", workspace, settings.model)
        shown = RedactingEmit(
            recorder, Redactor(settings.api_key)
        )  # what the runtime puts before every front end
        outcome = Agent(settings, shown, workspace, "yes", journal=journal).run("print the credential files")
    assert outcome.status == "ok"
    every = [credential for _, credentials in files for credential in credentials]
    request = json.dumps(server.requests[-1], ensure_ascii=False)
    outputs = [i["output"] for i in server.requests[-1]["input"] if i.get("type") == "function_call_output"]
    assert len(outputs) == len(rel_paths) + len(PRINTS) and "[REDACTED]" in request
    assert all("exit code" not in o or "exit code 0" in o for o in outputs[len(rel_paths) :]), outputs
    assert _left(request, every) == []
    journal_text = "".join(p.read_text(encoding="utf-8") for p in journal.folder.rglob("*") if p.is_file())
    assert _left(journal_text, every) == []
    assert _left(json.dumps([to_wire(event) for event in recorder.all], ensure_ascii=False), every) == []
