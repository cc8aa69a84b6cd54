"""The one-file exe, smoke-tested the way people run it.

`native` is `./build.sh`'s exe (built here, or found up to date); `wine` is `./build.sh --windows`'s
exe run by wine, tested in CI (`.ci/run` installs wine) or with DEEPSEEK_AGENT_WINE=1. DEEPSEEK_AGENT_EXE names an
exe built elsewhere instead (release.yml runs this file on Windows that way). Every run starts from
a folder other than the exe's, with the key in a `.env` beside the exe, against the scripted server
on 127.0.0.1.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from core.sandbox import bwrap
from tests.conftest import TEST_KEY
from tests.support.chinese_ui import CHINESE_LOCALE
from tests.support.paths import ROOT, TESTS
from tests.support.sse_server import Reply, ScriptedServer, call_events, text_events
from tests.support.terminal import Terminal, needs_tmux
from tests.windows import CACHE, PYTHON, WINEPREFIX, windows_path, wine_session

ANSWER = "你好！我是 deepseek-agent 👋 ✓"
PROMPT = "请用中文回答：你好 🙂"


@dataclass
class Exe:
    """An exe ready to run: its path and how to start it (directly, or through wine)."""

    path: Path
    launcher: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)

    @property
    def wine(self) -> bool:
        return bool(self.launcher)

    def install(self, folder: Path, **settings: str) -> Exe:
        """A copy in `folder`, with these settings in a `.env` beside it."""
        folder.mkdir(parents=True, exist_ok=True)
        shutil.copy2(self.path, folder / self.path.name)
        if settings:
            (folder / ".env").write_text("".join(f"{k}={v}\n" for k, v in settings.items()), encoding="utf-8")
        return Exe(folder / self.path.name, self.launcher, self.env)

    def environ(self, tmp_path: Path, **extra: str) -> dict[str, str]:
        """The test runner's environment without any agent setting (they come from the `.env`)."""
        env = {k: v for k, v in os.environ.items() if not k.startswith(("DEEPSEEK_", "AGENT_", "PYTHON"))}
        env.update({"AGENT_SESSIONS_DIR": str(tmp_path / "sessions"), "NO_COLOR": "1", **self.env, **extra})
        return env

    def run(self, args: list[str], tmp_path: Path, stdin: bytes = b"", timeout: float = 120,
            **extra: str) -> subprocess.CompletedProcess[bytes]:
        """Run it from another folder with pipes for all three streams (wine needs pipes)."""
        elsewhere = tmp_path / "elsewhere"
        elsewhere.mkdir(exist_ok=True)
        done = subprocess.run([*self.launcher, str(self.path), *args], input=stdin, capture_output=True,
                              cwd=elsewhere, env=self.environ(tmp_path, **extra), timeout=timeout, check=False)
        # Windows ends lines with \r\n: compare text, not line endings.
        return subprocess.CompletedProcess(done.args, done.returncode, done.stdout.replace(b"\r\n", b"\n"),
                                           done.stderr.replace(b"\r\n", b"\n"))

    def terminal(self, tmp_path: Path, cwd: Path, **extra: str) -> Terminal:
        """Run it in tmux, in `cwd`, with only the variables a terminal session would have."""
        env = {"PATH": os.environ["PATH"], "HOME": os.environ.get("HOME", str(tmp_path)), "TERM": "xterm-256color",
               "LANG": "C.UTF-8", "AGENT_SESSIONS_DIR": str(tmp_path / "sessions"), **self.env, **extra}
        run = shlex.join(["cd", str(cwd)]) + " && exec " + shlex.join([*self.launcher, str(self.path)])
        return Terminal(shlex.join(["env", "-i", *(f"{k}={v}" for k, v in env.items()), "sh", "-c", run]), {})


def _build(*flags: str) -> Path:
    done = subprocess.run([str(ROOT / "build.sh"), *flags], cwd=ROOT, capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, timeout=1800, check=False)
    if done.returncode != 0:
        pytest.fail(f"./build.sh {' '.join(flags)} failed:\n{done.stderr[-4000:]}")
    return Path(done.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="session", params=["native"] + (["wine"] if sys.platform != "win32" else []))
def exe(request: pytest.FixtureRequest) -> Iterator[Exe]:
    given = os.environ.get("DEEPSEEK_AGENT_EXE")
    if request.param == "native":
        if given:
            yield Exe(Path(given).resolve())
            return
        if sys.platform == "win32":
            pytest.skip("on Windows, set DEEPSEEK_AGENT_EXE to an exe built with the spec")
        yield Exe(_build())
        return
    if given:
        pytest.skip("DEEPSEEK_AGENT_EXE names the one exe to test")
    if shutil.which("wine") is None:
        pytest.skip("wine is not installed (./build.sh --windows installs it; .ci/run does)")
    if not (os.environ.get("CI") or os.environ.get("DEEPSEEK_AGENT_WINE")):
        # A Windows build costs 1-2 minutes of a 2-core machine that five people share.
        pytest.skip("the Windows exe under wine runs in CI, or with DEEPSEEK_AGENT_WINE=1")
    path = _build("--windows")
    env = {"WINEPREFIX": str(WINEPREFIX), "WINEDEBUG": "-all"}
    with wine_session({**os.environ, **env}):
        yield Exe(path, ["wine"], env)


@pytest.fixture
def server() -> Iterator[ScriptedServer]:
    with ScriptedServer() as scripted:
        yield scripted


def _header(server: ScriptedServer, n: int, name: str) -> str:
    return next((v for k, v in server.headers[n].items() if k.lower() == name.lower()), "")


def test_version_and_help_answer(exe: Exe, tmp_path: Path) -> None:
    version = exe.run(["--version"], tmp_path)
    assert (version.returncode, version.stdout.decode()) == (0, "deepseek-agent 0.1.0\n"), version.stderr
    helped = exe.run(["--help"], tmp_path)
    assert helped.returncode == 0 and b"exit codes (--one)" in helped.stdout


# The user's cache where a Chinese user name with a space puts it (C:\Users\张 三\AppData\Local).
USER_CACHE = "张 三的缓存"


def _runtimes(exe: Exe, cache: Path) -> Path:
    """Where the exe unpacks its runtime once (hooks/bootloader): under `cache` (XDG_CACHE_HOME), or
    under wine in the prefix's own LOCALAPPDATA, which wine sets from its registry, not the environment."""
    if exe.wine:
        [local] = (WINEPREFIX / "drive_c" / "users").glob("*/AppData/Local")
        return local / "deepseek-agent" / "runtime"
    return cache / "deepseek-agent" / "runtime"


def _places(tmp_path: Path, cache: Path) -> dict[str, str]:
    """The user's cache and temporary folder, by POSIX's names and Windows' (wine takes neither)."""
    temp = str(tmp_path / "tmp")
    return {"XDG_CACHE_HOME": str(cache), "LOCALAPPDATA": str(cache), "TMPDIR": temp, "TEMP": temp, "TMP": temp}


def _version(exe: Exe, tmp_path: Path, cache: Path) -> None:
    done = exe.run(["--version"], tmp_path, **_places(tmp_path, cache))
    assert (done.returncode, done.stdout) == (0, b"deepseek-agent 0.1.0\n"), done.stderr.decode("utf-8", "replace")


def _temporary_unpacks(exe: Exe, tmp_path: Path) -> set[Path]:
    """The folders a stock one-file start unpacks to: in TMPDIR, or under wine the prefix's TEMP."""
    temp = next((WINEPREFIX / "drive_c" / "users").glob("*/Temp")) if exe.wine else tmp_path / "tmp"
    return set(temp.glob("_MEI*"))


def _one_runtime(runtimes: Path) -> Path:
    """The single runtime folder, whole, private (POSIX modes: wine's folders are the Unix user's
    and private by Windows' rules), with nothing half-written beside it."""
    [folder] = runtimes.iterdir()
    assert len(folder.name) == 32 and int(folder.name, 16) >= 0
    assert (folder / "base_library.zip").is_file()
    assert list(folder.glob("libpython3*.so*")) or list(folder.glob("python3*.dll"))
    if sys.platform != "win32" and not runtimes.is_relative_to(WINEPREFIX):
        assert folder.stat().st_mode & 0o777 == 0o700 and runtimes.stat().st_mode & 0o777 == 0o700
    return folder


@pytest.fixture
def fresh_runtimes(exe: Exe, tmp_path: Path) -> Iterator[Path]:
    """An empty runtime cache: a folder of this test's own (under wine, the prefix's, emptied)."""
    runtimes = _runtimes(exe, tmp_path / USER_CACHE)
    if exe.wine:
        shutil.rmtree(runtimes, ignore_errors=True)
    (tmp_path / "tmp").mkdir()
    yield runtimes


def test_the_runtime_is_unpacked_once_and_then_only_read(exe: Exe, tmp_path: Path, fresh_runtimes: Path) -> None:
    """The first start unpacks libpython and the standard library into the user's cache; later starts
    run from there and write nothing: no temporary folder, no file rewritten."""
    cache = tmp_path / USER_CACHE
    _version(exe, tmp_path, cache)
    folder = _one_runtime(fresh_runtimes)
    before = _temporary_unpacks(exe, tmp_path)
    used = folder / ".used"  # when the runtime was last started (core/frozen_imports.py)
    os.utime(used, (0, 0))
    written = {path: path.stat().st_mtime_ns for path in folder.rglob("*") if path != used}
    _version(exe, tmp_path, cache)
    assert {path: path.stat().st_mtime_ns for path in folder.rglob("*") if path != used} == written
    assert _one_runtime(fresh_runtimes) == folder and used.stat().st_mtime > 0
    assert _temporary_unpacks(exe, tmp_path) == before, "a start unpacked to a temporary folder"


def test_a_damaged_runtime_is_unpacked_again(exe: Exe, tmp_path: Path, fresh_runtimes: Path) -> None:
    """A cache cleaner that truncates or deletes files does not break the exe: the next start finds
    a size that does not match the archive and unpacks a whole copy in its place."""
    cache = tmp_path / USER_CACHE
    _version(exe, tmp_path, cache)
    folder = _one_runtime(fresh_runtimes)
    library = folder / "base_library.zip"
    size = library.stat().st_size
    library.write_bytes(b"PK")
    next(folder.rglob("*.mo")).unlink()
    _version(exe, tmp_path, cache)
    assert _one_runtime(fresh_runtimes) == folder and library.stat().st_size == size
    assert list(folder.rglob("*.mo"))


def test_starts_at_once_share_one_runtime(exe: Exe, tmp_path: Path, fresh_runtimes: Path) -> None:
    """Several first starts at the same moment each unpack to a private folder; one rename wins, the
    others use it and remove their own."""
    env = exe.environ(tmp_path, **_places(tmp_path, tmp_path / USER_CACHE))
    starts = [subprocess.Popen([*exe.launcher, str(exe.path), "--version"], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, env=env, cwd=tmp_path)
              for _ in range(4)]
    for start in starts:
        out, err = start.communicate(timeout=180)
        assert start.returncode == 0 and out.strip() == b"deepseek-agent 0.1.0", err.decode("utf-8", "replace")
    _one_runtime(fresh_runtimes)


def test_without_a_cache_folder_the_exe_unpacks_to_a_temporary_one(exe: Exe, tmp_path: Path,
                                                                   fresh_runtimes: Path) -> None:
    """Where the cache cannot hold the runtime (a file in its place), the exe starts as a stock
    one-file exe: unpacked to a temporary folder that is gone when it exits."""
    fresh_runtimes.parent.mkdir(parents=True, exist_ok=True)
    fresh_runtimes.write_text("not a folder", encoding="utf-8")
    try:
        _version(exe, tmp_path, tmp_path / USER_CACHE)
        assert fresh_runtimes.read_text(encoding="utf-8") == "not a folder"
        assert exe.wine or not _temporary_unpacks(exe, tmp_path), "the temporary folder outlived the exe"
    finally:
        fresh_runtimes.unlink()


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX permissions")
def test_a_runtime_others_can_write_is_replaced(exe: Exe, tmp_path: Path, fresh_runtimes: Path) -> None:
    """A runtime folder that someone else could change is never run from: it is unpacked again, private."""
    if exe.wine:
        pytest.skip("wine's folders are the Unix user's: POSIX permissions are tested natively")
    cache = tmp_path / USER_CACHE
    _version(exe, tmp_path, cache)
    folder = _one_runtime(fresh_runtimes)
    folder.chmod(0o777)
    planted = folder / "planted"
    planted.write_text("x", encoding="utf-8")
    _version(exe, tmp_path, cache)
    assert _one_runtime(fresh_runtimes) == folder and not planted.exists()


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX permissions")
def test_a_cache_others_can_change_is_not_run_from(exe: Exe, tmp_path: Path) -> None:
    """A cache under a folder others can write (not sticky, as /tmp is) could be swapped between the
    check and the start: the exe unpacks to a temporary folder instead."""
    if exe.wine:
        pytest.skip("wine's folders are the Unix user's: POSIX permissions are tested natively")
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    (tmp_path / "tmp").mkdir()
    _version(exe, tmp_path, shared / USER_CACHE)
    assert not _runtimes(exe, shared / USER_CACHE).exists()
    # what the agent tells the exe it starts in its sandbox counts only for the runtime root it names
    done = exe.run(["--version"], tmp_path, DEEPSEEK_AGENT_RUNTIME_CHECKED=str(tmp_path / "elsewhere"),
                   **_places(tmp_path, shared / USER_CACHE))
    assert done.returncode == 0 and not _runtimes(exe, shared / USER_CACHE).exists()
    shared.chmod(0o1777)  # sticky: only an entry's owner may rename it
    _version(exe, tmp_path, shared / USER_CACHE)
    _one_runtime(_runtimes(exe, shared / USER_CACHE))


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX permissions")
def test_extensions_are_not_loaded_from_a_cache_others_can_change(exe: Exe, tmp_path: Path) -> None:
    """The extensions the exe extracts (core/frozen_imports.py) follow the runtime's rule: under a
    folder others can write they go to the run's own folder, never to the shared cache."""
    if exe.wine:
        pytest.skip("wine's folders are the Unix user's: POSIX permissions are tested natively")
    shared = tmp_path / "shared"
    shared.mkdir()
    (tmp_path / "tmp").mkdir()
    native = shared / USER_CACHE / "deepseek-agent" / "native"
    for mode, used in ((0o777, False), (0o1777, True)):
        shared.chmod(mode)
        done = exe.run(["--one", "你好"], tmp_path, DEEPSEEK_API_KEY=TEST_KEY, DEEPSEEK_BASE_URL="http://127.0.0.1:9",
                       AGENT_RETRY_BASE_DELAY="0.01", **_places(tmp_path, shared / USER_CACHE))
        assert done.returncode == 1 and b"Traceback" not in done.stderr, done.stderr.decode("utf-8", "replace")
        assert any(native.glob("*/*")) is used, mode


@pytest.mark.parametrize("users", ["/opt/mine/lib", None])
def test_commands_find_the_users_libraries_not_the_exe_s(exe: Exe, tmp_path: Path, server: ScriptedServer,
                                                       users: str | None) -> None:
    """The exe's loader path (its own libz, libffi, libpython) is for the exe: a command it runs sees
    the user's LD_LIBRARY_PATH, or none."""
    if exe.wine or sys.platform == "win32":
        pytest.skip("LD_LIBRARY_PATH is the Linux loader's")
    if users is None and "LD_LIBRARY_PATH" in os.environ:
        pytest.skip("this test runner has an LD_LIBRARY_PATH of its own")
    server.add(Reply(call_events([("run_shell", {"command": 'echo "[${LD_LIBRARY_PATH-unset}]"'})])),
               Reply(text_events("ok")))
    app = exe.install(tmp_path / "app", DEEPSEEK_API_KEY=TEST_KEY, DEEPSEEK_BASE_URL=server.url)
    workspace = tmp_path / "ws"
    workspace.mkdir()
    extra = {"LD_LIBRARY_PATH": users} if users else {}
    done = app.run(["--one", "--yes", "--cwd", str(workspace)], tmp_path, stdin=b"go", **extra)
    assert done.returncode == 0, done.stderr.decode("utf-8", "replace")
    assert f"[{users or 'unset'}]" in server.requests[1]["input"][-1]["output"]


@pytest.mark.parametrize("where", ["home", "temp"])
def test_a_command_under_bubblewrap_reaches_the_proxy(exe: Exe, tmp_path: Path, server: ScriptedServer,
                                                      where: str) -> None:
    """Where the kernel has no Landlock, bubblewrap confines commands, and on the proxied network
    (the default) the exe itself makes the command's door to the proxy inside the sandbox: it must
    find itself there, whether it lives in the home folder, hidden from commands, or in a temp
    folder bubblewrap empties, with its runtime unpacked in the hidden home."""
    if exe.wine or sys.platform == "win32":
        pytest.skip("bubblewrap is Linux's")
    if not bwrap.works():
        pytest.skip("bubblewrap cannot make its namespaces here")
    home = tmp_path / "home"
    app = exe.install((home if where == "home" else tmp_path) / "app", DEEPSEEK_API_KEY=TEST_KEY,
                      DEEPSEEK_BASE_URL=server.url, AGENT_SANDBOX="bwrap")
    server.add(Reply(call_events([("run_shell", {"command": 'exec 3<>"/dev/tcp/127.0.0.1/${HTTPS_PROXY##*:}" '
                                                            '&& echo "door open: 门开了"; yes | head -n 1'})])),
               Reply(text_events("ok")))
    workspace = tmp_path / "ws"
    workspace.mkdir()
    done = app.run(["--one", "--yes", "--cwd", str(workspace)], tmp_path, stdin=b"go", HOME=str(home),
                   XDG_CACHE_HOME=str(home / ".cache"))
    assert done.returncode == 0, done.stderr.decode("utf-8", "replace")
    output = server.requests[1]["input"][-1]["output"]
    assert "door open: 门开了\ny" in output and "Broken pipe" not in output, output  # SIGPIPE as anywhere
    assert (home / ".cache" / "deepseek-agent" / "runtime").is_dir()


def test_a_user_s_command_under_bubblewrap_reaches_the_proxy(exe: Exe, server: ScriptedServer) -> None:
    """The same as another user than root, with a home below a folder root owns: unprivileged
    bubblewrap maps only the user, so inside it root's folders look like nobody's and the
    runtime's check would refuse them. The exe making the door starts as a program of its own,
    told the runtime the agent checked: it runs from there (no unpacking in the command's temp
    folder), and the command inherits none of what told it."""
    if exe.wine or sys.platform == "win32":
        pytest.skip("bubblewrap is Linux's")
    if os.geteuid() != 0 or shutil.which("setpriv") is None or not bwrap.works():
        pytest.skip("needs root (to become another user with setpriv) and a working bubblewrap")
    user = 4242
    base = Path(tempfile.mkdtemp(prefix="deepseek-agent-tests-", dir="/var/cache"))  # root's, not a temp folder
    try:
        base.chmod(0o755)
        home = base / "home"
        app, workspace = home / "app", home / "ws"
        for folder in (home, app, workspace):
            folder.mkdir()
            os.chown(folder, user, user)
        shutil.copy2(exe.path, app / exe.path.name)
        (app / ".env").write_text(f"DEEPSEEK_API_KEY={TEST_KEY}\nDEEPSEEK_BASE_URL={server.url}\nAGENT_SANDBOX=bwrap\n",
                                  encoding="utf-8")
        command = ('exec 3<>"/dev/tcp/127.0.0.1/${HTTPS_PROXY##*:}" && echo "door open: 门开了"; '
                   'ls -a "$TMPDIR"; env | grep -e DEEPSEEK_AGENT -e PYINSTALLER -e _PYI_APPLICATION')
        server.add(Reply(call_events([("run_shell", {"command": command})])), Reply(text_events("ok")))
        env = {"PATH": os.environ["PATH"], "HOME": str(home), "LANG": "C.UTF-8", "NO_COLOR": "1",
               "AGENT_SESSIONS_DIR": str(home / "sessions")}
        done = subprocess.run(["setpriv", f"--reuid={user}", f"--regid={user}", "--clear-groups",
                               str(app / exe.path.name), "--one", "--yes", "--cwd", str(workspace)],
                              input=b"go", capture_output=True, env=env, cwd=home, timeout=120, check=False)
        assert done.returncode == 0, done.stderr.decode("utf-8", "replace")
        output = server.requests[1]["input"][-1]["output"]
        assert "door open: 门开了" in output, output
        assert "_MEI" not in output and "DEEPSEEK_AGENT" not in output and "PYINSTALLER" not in output, output
    finally:
        shutil.rmtree(base, ignore_errors=True)


def test_piped_chinese_with_the_key_in_a_dotenv_beside_the_exe(exe: Exe, tmp_path: Path,
                                                              server: ScriptedServer) -> None:
    """Chinese in through a pipe, Chinese out through a pipe, a tool writing UTF-8: the exe reads the
    key from the `.env` beside it although it runs from another folder."""
    server.add(Reply(call_events([("write_file", {"path": "你好.txt", "content": "第一行\n第二行 ✓\n"})])),
               Reply(text_events(ANSWER)))
    app = exe.install(tmp_path / "app", DEEPSEEK_API_KEY=TEST_KEY, DEEPSEEK_BASE_URL=server.url)
    workspace = tmp_path / "ws"
    workspace.mkdir()
    done = app.run(["--one", "--cwd", str(workspace)], tmp_path, stdin=PROMPT.encode())
    assert done.returncode == 0, done.stderr.decode("utf-8", "replace")
    assert done.stdout.decode("utf-8") == ANSWER + "\n"
    assert server.requests[0]["input"][0]["content"] == PROMPT
    assert _header(server, 0, "Authorization") == f"Bearer {TEST_KEY}"
    tool_output = server.requests[1]["input"][-1]["output"]
    written = workspace / "你好.txt"
    assert written.is_file() and written.read_bytes() == "第一行\n第二行 ✓\n".encode(), tool_output
    assert TEST_KEY.encode() not in done.stdout + done.stderr


def test_plain_answers_one_line(exe: Exe, tmp_path: Path, server: ScriptedServer) -> None:
    server.add(Reply(text_events("一行回答 ok")))
    app = exe.install(tmp_path / "app", DEEPSEEK_API_KEY=TEST_KEY, DEEPSEEK_BASE_URL=server.url)
    done = app.run(["--plain"], tmp_path, stdin="问一行\n".encode())
    assert done.returncode == 0, done.stderr.decode("utf-8", "replace")
    assert done.stdout.decode("utf-8").strip() == "一行回答 ok"
    assert server.requests[0]["input"][0]["content"] == "问一行"


@pytest.mark.parametrize(("code", "case"), [(1, "server error"), (2, "--json without --one"),
                                            (2, "no key"), (3, "step limit")])
def test_documented_exit_codes(exe: Exe, tmp_path: Path, server: ScriptedServer, code: int, case: str) -> None:
    settings = {"DEEPSEEK_API_KEY": TEST_KEY, "DEEPSEEK_BASE_URL": server.url, "AGENT_MAX_RETRIES": "0"}
    args = ["--one", "hi"]
    if case == "server error":
        server.add(Reply(status=500, body=b'{"error":{"message":"boom"}}'))
    elif case == "--json without --one":
        args = ["--json"]
    elif case == "no key":
        settings = {"DEEPSEEK_BASE_URL": "https://api.deepseek.com"}
    else:
        server.add(Reply(call_events([("list_files", {})])))
        settings["AGENT_MAX_STEPS"] = "2"
    done = exe.install(tmp_path / "app", **settings).run(args, tmp_path)
    assert done.returncode == code, done.stderr.decode("utf-8", "replace")
    assert b"Traceback" not in done.stderr


def test_interrupted_one_shot_exits_130(exe: Exe, tmp_path: Path, server: ScriptedServer) -> None:
    if exe.wine or sys.platform == "win32":
        pytest.skip("POSIX signals only: wine does not pass them to Windows programs")
    server.add(Reply(text_events("slow answer", chunks=4), delay=5))
    app = exe.install(tmp_path / "app", DEEPSEEK_API_KEY=TEST_KEY, DEEPSEEK_BASE_URL=server.url)
    child = subprocess.Popen([str(app.path), "--one", "hi"], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, env=app.environ(tmp_path), cwd=tmp_path)
    deadline = time.monotonic() + 60
    while not server.requests and time.monotonic() < deadline:
        time.sleep(0.05)
    child.send_signal(signal.SIGINT)  # the bootloader passes it on to the frozen program
    _, err = child.communicate(timeout=60)
    assert child.returncode == 130, err.decode("utf-8", "replace")


def test_an_mcp_stdio_server_answers_the_exe(exe: Exe, tmp_path: Path, server: ScriptedServer) -> None:
    """The SDK inside the exe talks to a server run by a separate Python: under wine, the Windows
    Python of ./build.sh --windows (it has the lock file's packages, the SDK included)."""
    demo = TESTS / "support" / "mcp_demo_server.py"
    python, script = (PYTHON, windows_path(demo)) if exe.wine else (sys.executable, str(demo))
    server.add(Reply(text_events("no tools")), Reply(call_events([("dict__lookup", {"word": "猫"})])),
               Reply(text_events("好")))
    app = exe.install(tmp_path / "app", DEEPSEEK_API_KEY=TEST_KEY, DEEPSEEK_BASE_URL=server.url)
    workspace = tmp_path / "ws"
    workspace.mkdir()
    cache = tmp_path / "cache"  # where the exe writes its packed extension modules on first import
    caches = {"XDG_CACHE_HOME": str(cache), "LOCALAPPDATA": str(cache)}  # POSIX's name, Windows' name
    without = app.run(["--one", "--cwd", str(workspace)], tmp_path, stdin=b"hi", **caches)
    assert without.returncode == 0, without.stderr.decode("utf-8", "replace")
    native = cache / "deepseek-agent" / "native"
    assert exe.wine or not list(native.rglob("_pydantic_core*")), "a session without MCP loaded pydantic"
    config = {"mcpServers": {"dict": {"command": python, "args": [script], "startupTimeout": 120}}}
    (app.path.parent / "mcp.json").write_text(json.dumps(config), encoding="utf-8")  # beside the .env
    done = app.run(["--one", "--cwd", str(workspace)], tmp_path, stdin="查一下".encode(), **caches)
    assert done.returncode == 0, done.stderr.decode("utf-8", "replace")
    assert "dict__lookup" in [tool["name"] for tool in server.requests[1]["tools"]]
    assert server.requests[2]["input"][-1]["output"] == "词典：猫 的意思是「你好，世界」"
    if not exe.wine:
        [extracted] = native.rglob("_pydantic_core*")
        if sys.platform != "win32":
            assert extracted.stat().st_mode & 0o777 == 0o600 and extracted.parent.stat().st_mode & 0o777 == 0o700


def _archive(exe: Exe, *needles: str, costs: bool = False) -> dict:
    """devtools/exe_archive.py run by a Python that has PyInstaller (the build venv's, or this one)."""
    venv = CACHE / "linux-venv" / "bin" / "python"
    python = str(venv) if venv.exists() else sys.executable
    args = ["--costs", str(exe.path)] if costs else [str(exe.path), *needles]
    done = subprocess.run([python, str(ROOT / "devtools" / "exe_archive.py"), *args],
                          capture_output=True, text=True, check=False, timeout=300)
    if done.returncode != 0:
        pytest.fail(f"cannot read the archive: {done.stderr[-2000:]}")
    return json.loads(done.stdout)


def test_the_cost_table_reads_what_each_package_adds(exe: Exe) -> None:
    """bench/startup.py's table: bytes per distribution, the MCP client's own dependencies named."""
    found = _archive(exe, costs=True)
    packages = found["packages"]
    assert {"rich", "prompt-toolkit", "mcp"} <= set(packages) and "mcp" in found["mcp"]
    assert all(row["archived"] > 0 for name, row in packages.items() if name in ("rich", "mcp"))


def test_no_key_and_no_dotenv_inside_the_archive(exe: Exe) -> None:
    """No `.env` file, nothing that looks like one, and no key value this machine knows of."""
    keys = {"DEEPSEEK_API_KEY=": ".env text"}
    for dotenv in (ROOT / ".env", ROOT / ".env.example"):
        if dotenv.is_file():
            for line in dotenv.read_text(encoding="utf-8", errors="replace").splitlines():
                name, _, value = line.partition("=")
                if name.strip().endswith("API_KEY") and len(value.strip()) >= 8:
                    keys[value.strip()] = f"the key in {dotenv.name}"
    if len(os.environ.get("DEEPSEEK_API_KEY", "")) >= 8:
        keys[os.environ["DEEPSEEK_API_KEY"]] = "the key in the environment"
    report = _archive(exe, "DEEPSEEK_API_KEY", *keys)
    assert not [name for name in report["entries"] if Path(name).name.startswith(".env")]
    assert report["found"]["DEEPSEEK_API_KEY"], "the search found not even the setting's name: it is broken"
    leaks = {why: report["found"][needle] for needle, why in keys.items() if report["found"][needle]}
    assert not leaks


def test_modules_loaded_by_name_are_bundled(exe: Exe) -> None:
    """Rich's Unicode tables, every Pygments lexer and style, and the TUI with all of its package:
    in the module archive or in a pack (reading the packs unmarshals every packed module); and no
    developer tool (tests, devtools/, bench/)."""
    import pygments.lexers
    import pygments.styles
    import rich._unicode_data

    def names(package) -> set[str]:
        import pkgutil

        return {f"{package.__name__}.{m.name}" for m in pkgutil.iter_modules(package.__path__)}

    wanted = names(rich._unicode_data) | names(pygments.lexers) | names(pygments.styles) | {"tui"}
    wanted |= {".".join(p.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
               for p in (ROOT / "ui").rglob("*.py")}
    bundled = set(_archive(exe)["modules"])
    assert len(wanted) > 300 and not sorted(wanted - bundled)
    assert not sorted(m for m in bundled if m.split(".")[0] in {"tests", "devtools", "bench"})


def test_no_bundled_module_needs_the_run_time_hooks_the_spec_leaves_out(exe: Exe) -> None:
    """deepseek-agent.spec leaves out PyInstaller's hooks for pkgutil.iter_modules over the archive and
    inspect.getsourcefile on its modules (a third of `--version`): only the modules that define or
    document them may name them. A bundled package that calls one needs its hook back."""
    found = _archive(exe, "iter_modules", "walk_packages", "getsourcefile")["found"]
    callers = {entry.removeprefix("PYZ/") for entries in found.values() for entry in entries}
    assert "pkgutil" in callers, "the search found not even pkgutil: it is broken"
    assert callers <= {"pkgutil", "pydoc", "inspect"}


@pytest.mark.terminal
@needs_tmux
def test_first_run_offers_to_save_the_key_beside_the_exe(exe: Exe, tmp_path: Path) -> None:
    app = exe.install(tmp_path / "app")
    term = app.terminal(tmp_path, tmp_path)
    try:
        term.wait_for("API key", timeout=90)
        term.send("sk-typed-in-the-exe-4242", literal=True)
        saved = app.path.parent / ".env"
        for wait in (5, 60):  # the plain prompt takes Enter; the TUI's dialog Enter, then Enter on OK
            term.send("Enter")
            deadline = time.monotonic() + wait
            while not saved.is_file() and time.monotonic() < deadline:
                time.sleep(0.2)
            if saved.is_file():
                break
        assert "DEEPSEEK_API_KEY=sk-typed-in-the-exe-4242" in saved.read_text(encoding="utf-8")
        if not exe.wine:
            assert os.stat(saved).st_mode & 0o777 == 0o600
        assert not (tmp_path / ".env").exists()
    finally:
        term.close()


def _settled(term: Terminal, quiet: float = 1.5, timeout: float = 90) -> str:
    """The screen once the program is waiting for input: not empty and unchanged for `quiet` seconds
    (keys sent before that can be lost under wine)."""
    deadline = time.monotonic() + timeout
    last, since = "", time.monotonic()
    while time.monotonic() < deadline:
        screen = term.screen()
        if screen != last:
            last, since = screen, time.monotonic()
        elif screen.strip() and time.monotonic() - since >= quiet:
            return screen
        time.sleep(0.1)
    raise AssertionError(f"the screen never settled:\n{last}")


@pytest.mark.terminal
@needs_tmux
def test_the_interactive_exe_shows_an_emoji_answer(exe: Exe, tmp_path: Path, server: ScriptedServer) -> None:
    """Run in a terminal with no flags, as after a double-click: the full-screen TUI (or, where it
    cannot start, the plain REPL) answers with Markdown, an emoji and highlighted code."""
    server.add(Reply(text_events("## 结果 🎉\n\n```python\nprint('你好')\n```\n\nall done ✅")))
    app = exe.install(tmp_path / "app", DEEPSEEK_API_KEY=TEST_KEY, DEEPSEEK_BASE_URL=server.url)
    workspace = tmp_path / "ws"
    workspace.mkdir()
    term = app.terminal(tmp_path, workspace)
    try:
        _settled(term)
        term.send("你好", literal=True)
        term.send("Enter")
        screen = term.wait_for("all done", timeout=90)
        assert "print('你好')" in screen and "结果" in screen, screen
        # Wine's console draws characters beyond U+FFFF as two U+FFFD (its own Python does the same).
        assert exe.wine or "🎉" in screen, screen
        assert "Traceback" not in screen and "Error" not in screen, screen
    finally:
        term.close()


@pytest.mark.terminal
@needs_tmux
def test_a_fatal_error_waits_for_enter_only_when_the_window_would_close(exe: Exe, tmp_path: Path) -> None:
    """A double-clicked Windows exe owns its console, and wine in a terminal gives it one of its own:
    the error stays readable until Enter. On Linux a terminal outlives the program: no wait."""
    app = exe.install(tmp_path / "app", DEEPSEEK_BASE_URL="ftp://not-http.example")
    term = app.terminal(tmp_path, tmp_path)
    try:
        screen = term.wait_for("must start with http", timeout=90)
        if exe.wine:
            screen = term.wait_for("Press Enter to close")
            time.sleep(1)
            assert "[exited" not in term.screen()
            term.send("Enter")
        term.wait_for("[exited 2]")
        assert exe.wine or "Press Enter" not in screen
    finally:
        term.close()


def test_the_exe_speaks_chinese_under_a_chinese_locale(exe: Exe, tmp_path: Path, server: ScriptedServer) -> None:
    """The bundled catalog: a Chinese locale (under wine also the ANSI code page 936) gets the plain
    REPL's words in Chinese, with nothing set but the locale."""
    server.add(Reply(text_events("一行回答")))
    app = exe.install(tmp_path / "app", DEEPSEEK_API_KEY=TEST_KEY, DEEPSEEK_BASE_URL=server.url)
    done = app.run(["--plain"], tmp_path, stdin="问一行\n/mode 不存在\n".encode(), **CHINESE_LOCALE)
    err = done.stderr.decode("utf-8", "replace")
    assert done.returncode == 0, err
    assert done.stdout.decode("utf-8").strip() == "一行回答"
    assert "输入任务；/help 查看命令；Ctrl-D 或 /exit 退出。" in err and "未知模式 '不存在'" in err, err
