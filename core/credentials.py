"""Which paths hold credentials: writing them asks, and checkpoints and the file tools never copy or
show them."""

from __future__ import annotations

import re

_CREDENTIAL_PATH = re.compile(
    r"(?:^|[/\\])(?:\.ssh[/\\]|\.aws[/\\]credentials|\.netrc$|_netrc$|\.git-credentials$|\.npmrc$|\.pypirc$"
    r"|\.docker[/\\]config\.json$|\.kube[/\\]config$|\.env(?!\.(?:example|sample|template|dist)$)(?:\.[\w.-]+)?$|id_(?:rsa|ed25519|ecdsa|dsa)\b"
    r"|\.gnupg[/\\]|credentials\.json$)",
    re.IGNORECASE,
)
def is_credential_path(path: str) -> bool:
    return bool(_CREDENTIAL_PATH.search(path.strip()))
