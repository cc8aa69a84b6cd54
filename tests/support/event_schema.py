"""The checked-in JSON Schema of the `--json` stream (docs/events.schema.json), as a validator."""

from __future__ import annotations

import json

from jsonschema import Draft202012Validator

from tests.support.paths import ROOT

SCHEMA_FILE = ROOT / "docs" / "events.schema.json"


def event_validator() -> Draft202012Validator:
    return Draft202012Validator(json.loads(SCHEMA_FILE.read_text(encoding="utf-8")))
