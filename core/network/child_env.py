"""The environment that sends a child's network tools through the proxy.

curl, wget, pip, git, go and cargo read `HTTP_PROXY`/`HTTPS_PROXY` (some only the lower-case
spelling, curl ignores upper-case `HTTP_PROXY`); npm and yarn read their own `npm_config_*` and
`YARN_*` keys besides; `ALL_PROXY` covers curl's other schemes. Loopback stays direct
(`NO_PROXY`): a server the command starts itself is reached without the proxy.
"""

from __future__ import annotations

from collections.abc import Mapping

LOOPBACK = "127.0.0.1,localhost,::1"


def _values(proxy_url: str) -> dict[str, str]:
    common = {"HTTP_PROXY": proxy_url, "HTTPS_PROXY": proxy_url, "ALL_PROXY": proxy_url, "NO_PROXY": LOOPBACK}
    return {
        **common,
        **{name.lower(): value for name, value in common.items()},
        "npm_config_proxy": proxy_url,
        "npm_config_https_proxy": proxy_url,
        "npm_config_noproxy": LOOPBACK,
        "YARN_HTTP_PROXY": proxy_url,
        "YARN_HTTPS_PROXY": proxy_url,
        "CARGO_HTTP_PROXY": proxy_url,
    }


def proxy_environment(environ: Mapping[str, str], proxy_url: str | None) -> dict[str, str]:
    """A copy of a child's `environ` whose every proxy variable names `proxy_url`; with None (no
    network at all) every proxy variable is removed, so tools fail at once instead of trying a proxy
    of the user's the sandbox blocks anyway."""
    names = {name.lower() for name in _values("")}
    env = {key: value for key, value in environ.items() if key.lower() not in names}
    return env if proxy_url is None else {**env, **_values(proxy_url)}
