"""Host patterns, the default list, and the variables that send a child through the proxy."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.config import ConfigError, load_settings
from core.network.child_env import proxy_environment
from core.network.hosts import DEFAULT_HOSTS, HostRules, host_matches, parse_patterns


@pytest.mark.parametrize(
    ("host", "pattern", "matches"),
    [
        ("pypi.org", "pypi.org", True),
        ("PyPI.org.", "pypi.org", True),
        ("evil-pypi.org", "pypi.org", False),
        ("pypi.org.evil.example", "pypi.org", False),
        ("raw.githubusercontent.com", "*.githubusercontent.com", True),
        ("githubusercontent.com", "*.githubusercontent.com", False),
        ("a.b.c.example", "*.example", True),
        ("xgithubusercontent.com", "*.githubusercontent.com", False),
        ("::1", "[::1]", True),
    ],
)
def test_host_patterns(host: str, pattern: str, matches: bool) -> None:
    assert host_matches(host, pattern) is matches


def test_the_default_list_names_registries_sources_and_mirrors() -> None:
    rules = HostRules.of()
    for host in (
        "pypi.org",
        "files.pythonhosted.org",
        "registry.npmjs.org",
        "crates.io",
        "index.crates.io",
        "proxy.golang.org",
        "sum.golang.org",
        "github.com",
        "codeload.github.com",
        "objects.githubusercontent.com",
        "gitlab.com",
        "mirrors.aliyun.com",
        "pypi.tuna.tsinghua.edu.cn",
        "repo.huaweicloud.com",
        "mirrors.cloud.tencent.com",
        "registry.npmmirror.com",
        "goproxy.cn",
        "rsproxy.cn",
    ):
        assert rules.reason(host) == "the default list", host
    for host in ("example.com", "pastebin.com", "webhook.site", "169.254.169.254", "localhost", "ngrok.io"):
        assert rules.reason(host) is None, host
    assert parse_patterns(",".join(DEFAULT_HOSTS)) == DEFAULT_HOSTS


def test_a_workspace_without_the_defaults_allows_only_its_own() -> None:
    rules = HostRules.of(["git.corp.example"], defaults=())
    assert rules.reason("git.corp.example") == "the workspace's rule git.corp.example"
    assert rules.reason("pypi.org") is None


@pytest.mark.parametrize(
    "text",
    [
        "http://pypi.org",
        "pypi.org/simple",
        "*",
        "*.",
        "a..b",
        "-bad.example",
        "host:8080",
        "ex ample.com,ok.com/x",
    ],
)
def test_a_bad_pattern_is_named(text: str) -> None:
    with pytest.raises(ValueError, match="is not a host name"):
        parse_patterns(text)


def test_good_patterns_parse_in_any_separation() -> None:
    assert parse_patterns(" Git.Corp.Example, *.internal;10.0.0.5  ::1 ") == (
        "git.corp.example",
        "*.internal",
        "10.0.0.5",
        "::1",
    )


def test_a_childs_environment_names_the_proxy_in_every_spelling_tools_read() -> None:
    env = proxy_environment(
        {"PATH": "/bin", "HTTPS_PROXY": "http://user:pw@corp:3128", "No_Proxy": "*"}, "http://127.0.0.1:4567"
    )
    for name in (
        "HTTP_PROXY",
        "HTTPS_PROXY",
        "ALL_PROXY",
        "http_proxy",
        "https_proxy",
        "all_proxy",
        "npm_config_proxy",
        "npm_config_https_proxy",
        "YARN_HTTPS_PROXY",
        "CARGO_HTTP_PROXY",
    ):
        assert env[name] == "http://127.0.0.1:4567", name
    assert env["NO_PROXY"] == env["no_proxy"] == env["npm_config_noproxy"] == "127.0.0.1,localhost,::1"
    assert "No_Proxy" not in env and env["PATH"] == "/bin" and "corp" not in str(env)


def test_a_bad_allow_setting_stops_the_agent_with_one_sentence(tmp_path: Path) -> None:
    with pytest.raises(
        ConfigError,
        match=r"AGENT_NETWORK_ALLOW='pypi.org,https://x.example/' \(from the environment\)"
        r": 'https://x.example/' is not a host name",
    ):
        load_settings(
            environ={"AGENT_NETWORK_ALLOW": "pypi.org,https://x.example/"}, env_file=tmp_path / "none"
        )
    settings = load_settings(
        environ={"AGENT_NETWORK_ALLOW": "git.corp.example, *.internal"}, env_file=tmp_path / "x"
    )
    assert (
        HostRules.of(parse_patterns(settings.network_allow)).reason("a.internal")
        == "the workspace's rule *.internal"
    )
