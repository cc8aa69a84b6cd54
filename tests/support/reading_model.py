"""A scripted model for sessions that must compact: it reads f0..f5 for "task one", answers
"task two" at once, and summarises on request."""

from __future__ import annotations

import json

from tests.support.sse_server import Reply, call_events, text_events


def reader_model(body: dict) -> Reply:
    """A model that reads f0..f5 for "task one", answers "task two" at once, and summarises on request;
    it reports input tokens as a real server would (about one per 3 characters), so calibration and
    the budget behave as they do in use."""
    reply = _reply(body)
    for event in reply.events:
        if event["type"] == "response.completed":
            event["response"]["usage"]["input_tokens"] = len(json.dumps(body)) // 3
    return reply


def _reply(body: dict) -> Reply:
    if body.get("tool_choice") == "none":
        return Reply(text_events("Summary: the user asked to read f0..f5; they were read; next: answer."))
    users = [i["content"] for i in body["input"] if i.get("role") == "user"]
    if users[-1] == "task two":
        return Reply(text_events("done two"))
    calls = [json.loads(i["arguments"])["path"] for i in body["input"] if i.get("type") == "function_call"]
    done = int(calls[-1][1]) + 1 if calls else 0
    if done < 6:
        thought = f"step {done}: " + " ".join(f"idea{done}x{k}" for k in range(400))  # turns clearing cannot shrink
        return Reply(call_events([("read_file", {"path": f"f{done}.txt"})], reasoning=thought))
    return Reply(text_events("done one"))
