"""Which hosts a confined command reaches without asking.

The default list is what builds fetch from: package registries, their mirrors in China, and the
source hosts that `git clone`, `go get` and `cargo` read. A pattern is a host name (`pypi.org`) or
a suffix (`*.githubusercontent.com`, which does not match `githubusercontent.com` itself); names
compare case-insensitively and without a trailing dot.
"""

from __future__ import annotations

import enum
import ipaddress
import re
from collections.abc import Iterable
from dataclasses import dataclass

from core.i18n import _

DEFAULT_HOSTS: tuple[str, ...] = (
    # Python
    "pypi.org",
    "files.pythonhosted.org",
    "test.pypi.org",
    # JavaScript
    "registry.npmjs.org",
    "registry.yarnpkg.com",
    "repo.yarnpkg.com",
    "nodejs.org",
    # Rust
    "crates.io",
    "static.crates.io",
    "index.crates.io",
    "static.rust-lang.org",
    "sh.rustup.rs",
    # Go
    "proxy.golang.org",
    "sum.golang.org",
    "index.golang.org",
    "go.dev",
    "dl.google.com",
    # source hosts
    "github.com",
    "api.github.com",
    "codeload.github.com",
    "objects.githubusercontent.com",
    "*.githubusercontent.com",
    "gitlab.com",
    "bitbucket.org",
    # mirrors in China
    "mirrors.aliyun.com",
    "pypi.tuna.tsinghua.edu.cn",
    "mirrors.tuna.tsinghua.edu.cn",
    "mirrors.ustc.edu.cn",
    "pypi.mirrors.ustc.edu.cn",
    "repo.huaweicloud.com",
    "mirrors.huaweicloud.com",
    "mirrors.cloud.tencent.com",
    "registry.npmmirror.com",
    "cdn.npmmirror.com",
    "npmmirror.com",
    "goproxy.cn",
    "goproxy.io",
    "rsproxy.cn",
    "mirrors.sjtug.sjtu.edu.cn",
    "mirrors.bfsu.edu.cn",
)

_LABEL = r"(?!-)[a-z0-9_-]{1,63}(?<!-)"
_PATTERN = re.compile(rf"(?:\*\.)?{_LABEL}(?:\.{_LABEL})*")


class Answer(enum.Enum):
    """The user's answer to "let this command reach HOST?"."""

    ALLOW_ONCE = "allow_once"  # for the rest of this session, not remembered
    ALLOW_ALWAYS = "allow_always"  # remembered for the workspace
    DENY = "deny"  # refused for the rest of this session, not asked again


def normal_host(host: str) -> str:
    """`host` as patterns compare it: lower case, no trailing dot, no IPv6 brackets."""
    return host.strip().strip("[]").rstrip(".").lower()


def parse_patterns(text: str) -> tuple[str, ...]:
    """Host patterns from a comma- or space-separated setting; ValueError names the first bad one."""
    patterns = tuple(normal_host(part) for part in re.split(r"[,;\s]+", text) if part.strip())
    for pattern in patterns:
        if not _PATTERN.fullmatch(pattern) and not _is_address(pattern):
            raise ValueError(_("{pattern!r} is not a host name, an address or *.domain").format(
                pattern=pattern))
    return patterns


def _is_address(text: str) -> bool:
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True


def host_matches(host: str, pattern: str) -> bool:
    host, pattern = normal_host(host), normal_host(pattern)
    if pattern.startswith("*."):
        return host.endswith(pattern[1:])
    return host == pattern


@dataclass(frozen=True)
class HostRules:
    """The hosts allowed without asking: the default list (unless left out) and the workspace's own
    patterns, each decision naming which of the two allowed it."""

    workspace: tuple[str, ...] = ()
    defaults: tuple[str, ...] = DEFAULT_HOSTS

    @classmethod
    def of(cls, workspace: Iterable[str] = (), defaults: Iterable[str] = DEFAULT_HOSTS) -> HostRules:
        return cls(tuple(normal_host(p) for p in workspace), tuple(normal_host(p) for p in defaults))

    def reason(self, host: str) -> str | None:
        """Why `host` is allowed ("the default list", "the workspace's rule PATTERN"), or None."""
        if any(host_matches(host, pattern) for pattern in self.defaults):
            return "the default list"
        for pattern in self.workspace:
            if host_matches(host, pattern):
                return f"the workspace's rule {pattern}"
        return None
