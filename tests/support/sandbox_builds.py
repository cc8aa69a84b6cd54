"""Small real projects whose test suites must pass inside the sandbox with the user's own home
folder: what they read there is what `core.sandbox.policy.READABLE_HOME` lets through. A build
whose tool is not installed is skipped by the caller."""

from __future__ import annotations

import shutil
from dataclasses import dataclass


@dataclass(frozen=True)
class Build:
    tool: str  # the program that must be on PATH
    script: str  # run in an empty folder of the workspace


BUILDS: dict[str, Build] = {
    "Python: a venv and pytest": Build("python3", (
        "python3 -m venv --system-site-packages v && printf 'def add(a, b):\\n    return a + b\\n' > calc.py && "
        "printf 'from calc import add\\n\\ndef test_add():\\n    assert add(2, 3) == 5\\n' > test_calc.py && "
        "v/bin/python -m pytest -q -p no:cacheprovider test_calc.py")),
    "Node: npm test, and npm install of a local package": Build("npm", (
        "mkdir -p tiny app && printf '{\"name\": \"tiny\", \"version\": \"1.0.0\", \"main\": \"index.js\"}' "
        "> tiny/package.json && echo 'module.exports = (a, b) => a + b;' > tiny/index.js && cd app && "
        "printf '{\"name\": \"app\", \"version\": \"1.0.0\", \"scripts\": {\"test\": \"node --test\"}}' "
        "> package.json && npm_config_update_notifier=false npm install --offline --no-audit --no-fund ../tiny > /dev/null && "
        "printf \"const t = require('node:test'); const a = require('node:assert');\\n"
        "t.test('add', () => a.strictEqual(require('tiny')(2, 3), 5));\\n\" > add.test.js && npm_config_update_notifier=false npm test")),
    "Rust: cargo test offline": Build("cargo", (
        "cargo new -q --lib --vcs none crab && cd crab && cargo test -q --offline")),
    "Go: go test": Build("go", (
        "mkdir -p gop && cd gop && go mod init example.com/gop > /dev/null 2>&1 && "
        "printf 'package gop\\n\\nfunc Add(a, b int) int { return a + b }\\n' > add.go && "
        "printf 'package gop\\n\\nimport \"testing\"\\n\\nfunc TestAdd(t *testing.T) {\\n"
        "\\tif Add(2, 3) != 5 {\\n\\t\\tt.Fatal(\"sum\")\\n\\t}\\n}\\n' > add_test.go && GOFLAGS=-mod=mod go test ./...")),
    "Java: javac and a test program": Build("javac", (
        "mkdir -p jav && cd jav && printf 'class Add { static int add(int a, int b) { return a + b; } }\\n' > Add.java && "
        "printf 'class AddTest { public static void main(String[] a) { if (Add.add(2, 3) != 5) System.exit(1); "
        "System.out.println(\"ok\"); } }\\n' > AddTest.java && javac Add.java AddTest.java && java AddTest")),
    "C: make and a test program": Build("make", (
        "mkdir -p cproj && cd cproj && printf 'int add(int a, int b) { return a + b; }\\n' > add.c && "
        "printf 'int add(int, int);\\nint main(void) { return add(2, 3) != 5; }\\n' > test.c && "
        "printf 'check: test\\n\\t./test\\ntest: test.c add.c\\n\\tcc -o test test.c add.c\\n' > Makefile && make -s check")),
}


def available() -> dict[str, Build]:
    """The builds whose tool this machine has."""
    return {name: build for name, build in BUILDS.items() if shutil.which(build.tool)}
