"""Ordinary work a confined command must still do unasked in `auto`: tests, a venv with a package
from a local wheel, make, compilers, archives, git, and a server it starts on 127.0.0.1 and talks
to. Shared by the end-to-end replay and bench/sandbox.py, which counts it beside the blocked set."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

PY = sys.executable

ORDINARY_WORK: dict[str, str] = {
    "git add, commit, branch, stash, tag": (
        "echo a > a.txt && git add a.txt && git commit -qm a && git branch b1 && git tag t1 && echo b >> a.txt && "
        "git stash -q && git stash pop -q && git add -A && git commit -qm b && git log --oneline | wc -l"),
    "tests": ("printf 'def test_one():\\n    assert 1 + 1 == 2\\n' > test_one.py && "
              f"{PY} -m pytest -q -p no:cacheprovider test_one.py"),
    "venv and pip from a local wheel": (
        "mkdir -p pkg/tiny && printf '' > pkg/tiny/__init__.py && "
        "printf '[project]\\nname = \"tiny\"\\nversion = \"1\"\\n[build-system]\\nrequires = [\"setuptools\"]\\n"
        "build-backend = \"setuptools.build_meta\"\\n' > pkg/pyproject.toml && "
        f"{PY} -m pip wheel -q --no-deps --no-build-isolation --no-index -w wheels ./pkg && "
        f"{PY} -m venv --without-pip v && {PY} -m pip -q --python v/bin/python install --no-index wheels/*.whl "
        "&& v/bin/python -c 'import tiny'"),
    "make and a C compiler": (
        "printf 'int main(void){return 0;}\\n' > m.c && printf 'm: m.c\\n\\tcc -o m m.c\\n' > Makefile && make -s "
        "&& ./m"),
    "archives": "mkdir -p d && echo x > d/x && tar -czf d.tgz d && zip -qr d.zip d && tar -xzf d.tgz -C d && "
                "unzip -qo d.zip -d e",
    "a server on 127.0.0.1": (
        f"{PY} -m http.server 0 --bind 127.0.0.1 > srv.log 2>&1 & pid=$!; "
        "for i in $(seq 50); do port=$(grep -o 'port [0-9]*' srv.log | cut -d' ' -f2); [ -n \"$port\" ] && break; "
        "sleep 0.1; done; curl -sf \"http://127.0.0.1:$port/\" > /dev/null; ok=$?; kill $pid; exit $ok"),
    "Python multiprocessing": f"{PY} -c 'import multiprocessing as m; assert m.Pool(2).map(abs, [-1]) == [1]'",
    "a pseudo-terminal of its own": f"{PY} -c 'import os, pty; m, s = pty.openpty(); os.write(s, b\"x\"); "
                                    "assert os.read(m, 1) == b\"x\"'",
    "temp files": "f=$(mktemp) && echo x > \"$f\" && rm \"$f\" && d=$(mktemp -d) && rmdir \"$d\"",
    "limits on itself": "ulimit -n 256 && nice -n 5 true && taskset -c 0 true",
}

# Package managers of other languages, where the machine has them: a local package installed and its
# test run with npm, a crate built and tested offline with cargo.
if shutil.which("npm"):
    ORDINARY_WORK["npm install of a local package, npm test"] = (
        "mkdir -p lib && printf '{\"name\":\"lib\",\"version\":\"1.0.0\",\"main\":\"i.js\"}' > lib/package.json && "
        "echo 'module.exports = 41 + 1' > lib/i.js && npm init -y > /dev/null && "
        "npm pkg set scripts.test='node -e \"process.exit(require(\\\"lib\\\") === 42 ? 0 : 1)\"' && "
        "npm install --no-audit --no-fund ./lib > /dev/null && npm test --silent")
if shutil.which("cargo"):  # rustup's toolchains are found where they are, whatever HOME the test gives
    _RUST = (f"RUSTUP_HOME={os.environ.get('RUSTUP_HOME') or Path.home() / '.rustup'} "
             f"CARGO_HOME={os.environ.get('CARGO_HOME') or Path.home() / '.cargo'}")
    ORDINARY_WORK["cargo build and test offline"] = (
        f"{_RUST} cargo new -q --vcs none tiny_crate && cd tiny_crate && {_RUST} cargo test -q --offline")

