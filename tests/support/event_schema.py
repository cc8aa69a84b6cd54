"""The checked-in JSON Schemas of the `--json` stream as validators: the current version's
(docs/events.schema.json) and version 1's, frozen (docs/events.v1.schema.json), with the view a
reader written for version 1 has of a line."""

from __future__ import annotations

import json
from typing import Any

from jsonschema import Draft202012Validator

from tests.support.paths import ROOT

SCHEMA_FILE = ROOT / "docs" / "events.schema.json"
V1_SCHEMA_FILE = ROOT / "docs" / "events.v1.schema.json"


def event_validator() -> Draft202012Validator:
    return Draft202012Validator(json.loads(SCHEMA_FILE.read_text(encoding="utf-8")))


def v1_validator() -> Draft202012Validator:
    return Draft202012Validator(json.loads(V1_SCHEMA_FILE.read_text(encoding="utf-8")))


def as_v1_reader_sees(line: dict[str, Any]) -> dict[str, Any] | None:
    """`line` as a version-1 reader reads it: the fields version 1 names for its kind (a reader
    ignores the others), or None for a kind version 1 did not have."""
    variants = {v["properties"]["type"]["const"]: v
                for v in json.loads(V1_SCHEMA_FILE.read_text(encoding="utf-8"))["oneOf"]}
    variant = variants.get(line.get("type"))
    if variant is None:
        return None
    return {**{k: v for k, v in line.items() if k in variant["properties"]}, "v": 1}
