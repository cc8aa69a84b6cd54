"""The parsed-command gate, row by row: variables set by a declaring builtin, wrappers that hide the
command, PowerShell pipelines into Remove-Item.

Each ASK row is a command that must be asked about (in `--one` without `--yes` it would simply run);
each PASS row is everyday work that must stay quiet, since a false alarm costs users too.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from core.tools.safety import destructive_reason

POSIX_ASK = [
    # variables set by a declaring builtin earlier in the same command
    'export X=~; rm -rf "$X"', "export X=~ && rm -rf $X", 'declare -x X=~; rm -rf "$X"', 'readonly X=~; rm -rf "$X"',
    'local X=~; rm -rf "$X"', 'typeset X=~; rm -rf "$X"', 'printf -v X ~; rm -rf "$X"',
    "printf -v X '%s' ~; rm -rf \"$X\"",
    "X=~ sh -c 'rm -rf \"$X\"'", "X=~ bash -c 'rm -rf $X/docs'", "X=1 cd ~ && rm -rf *",
    # shells: `--` and options with a value before the code; positional parameters
    "bash -c -- 'rm -rf ~'", "bash -o pipefail -c 'rm -rf ~'", "sh -c 'rm -rf \"$1\"' _ ~", "sh -c 'rm -rf \"$0\"' ~",
    # wrappers that were not looked through
    "flock /tmp/l rm -rf ~", "flock -w 5 /tmp/l rm -rf ~", "env --chdir=/ rm -rf x",
    "su -c 'rm -rf ~'", "su root -c 'rm -rf ~'", "runuser -u x -- rm -rf ~", "busybox rm -rf ~", "unshare rm -rf ~",
    "fakeroot rm -rf ~", "chroot / rm -rf ~", "systemd-run rm -rf ~", "parallel rm -rf ::: ~", "ls | parallel rm",
    "npx rimraf ~", "rimraf ~", "trash ~",
    "tar -xzf a.tgz -C ~", "tar xf a.tar -C /etc", "tar --extract -f a.tar --directory=/etc", "unzip -o a.zip -d ~",
    "git worktree remove --force ../wt",
    "find . -exec rm -rf ~ \\;", "find . -exec sh -c 'rm -rf ~' \\;", "find ~ -exec sh -c 'rm -rf \"$1\"' _ {} \\;",
    # brace expansion
    "rm -rf {~,}", "rm -rf ~/{a,b}", "rm -rf {..,x}", "rm -rf {/,}", "rm -rf x{,/../..}", "dd of={~,x}/.bashrc",
    # function bodies
    "function f { rm -rf ~; }; f", "function f() { rm -rf ~; }; f",
    # a link made earlier in the same command
    "ln -s ~ x && rm -rf x/", "ln -s ~ x; rm -rf x/*", "ln -sf ~ x; rm -rf x/docs", "ln -s / x && rm -rf x/",
    "ln -s .. up && rm -rf up/", "ln -s ~ x && cd x && rm -rf *", "mkdir -p d && ln -s ~ d/h && rm -rf d/h/",
    "ln -s ~ x && bash -c 'rm -rf x/docs'",
    # dd writes through `of=~`; in-place edits of files outside
    "dd of=~/.bashrc", "dd if=x of=~/.bashrc", "sed -i s/a/b/ ~/.bashrc", "sed -i.bak 's/a/b/' ~/.profile",
    "sed --in-place s/a/b/ /etc/hosts", "sed -n -i s/a/b/ ~/x", "sed -i -e s/a/b/ -- ~/x",
    "perl -pi -e 's/a/b/' ~/.bashrc", "perl -i -pe 's/a/b/' ~/.bashrc", "awk -i inplace 1 ~/.bashrc", "gawk -i inplace -f p.awk ~/x",
    # the repository's own history
    "rm -rf .git", "rm -rf ./.git/", "mv .git elsewhere", "rm -rf .git/objects", "rm -rf sub/../.git", "find . -name .git -exec rm -rf {} +",
    # one-liners that run programs or write
    "perl -e 'system \"rm -rf ~\"'", "perl -E 'qx(id)'", "python3 -c \"open('/etc/passwd','w').write('')\"",
    "python3 -c \"__import__('os').system('id')\"", "python3 -Ic \"import os; os.system('x')\"",
]
POSIX_PASS = [
    "export X=build; rm -rf \"$X\"", "declare X=build; rm -rf $X", "printf -v X build; rm -rf \"$X\"",
    "export PATH=$PATH:~/bin", "export FOO=1", "X=build sh -c 'rm -rf \"$X\"'", "CC=gcc make", "readonly A=1", "local x", "printf '%s\\n' hi",
    "bash -c -- 'rm -rf build'", "sh -c 'rm -rf \"$1\"' _ build", "bash -o pipefail -c 'pytest -q'",
    "flock /tmp/l pytest", "parallel gzip ::: a.log b.log", "npx rimraf dist", "busybox ls", "chroot /srv/root ls", "tar -czf /tmp/a.tgz -C ~ docs", "tar -xzf a.tgz -C build",
    "unzip a.zip -d build", "tar tf a.tar", "git worktree remove ../wt", "env --chdir=sub rm -rf x", "find . -name '*.pyc' -exec rm -f {} +",
    "find . -type d -name __pycache__ -exec rm -rf {} +", "find . -name '*.py' -exec grep -l x {} \\;",
    "dd if=/dev/zero of=blank.img bs=1k count=1", "sed -i s/a/b/ src/x.py", "sed -i 's/a/b/' a.py sub/b.py",
    "sed -n 1,5p ~/.bashrc", "sed s/a/b/ ~/x", "perl -pi -e 's/a/b/' a.py", "perl -ne 'print if /x/' ~/x", "awk -i inplace 1 a.py", "awk '{print $1}' ~/x", "awk -F: '{print $1}' /etc/passwd",
    "ln -s src lib && rm -rf lib/", "ln -s ~ home-link", "ln -s ~ x && rm -f x", "ln -s ~/tools t && ls t/",
    "rm -rf build/{a,b}", "echo {a,b}", "mkdir -p src/{a,b}", "rm -f file{1..3}.txt", "{ ls; pytest; }",
    "arr=(a b); echo ${arr[0]}", "echo '{~,}'", "cp a.py{,.bak}",
    "function clean { rm -rf dist; }; clean", "git rm --cached x", "ls .git", "cat .git/HEAD", "rm -f .git/index.lock", "rm -f .gitignore",
    "python3 -c \"import json,sys; print(json.load(sys.stdin))\"", "perl -e 'print 1'",
]
POWERSHELL_ASK = [
    "Remove-Item -Recurse -Force $env:USERPROFILE -WhatIf:$false", "Set-Content -Path ~\\x.txt -Value y",
    "Add-Content -Path ~\\x.txt -Value y", "[System.IO.File]::Delete('C:\\x')",
    "[System.IO.Directory]::Delete($HOME, $true)", "[IO.File]::WriteAllText('C:\\x.txt', 'y')",
    "Remove-Item (Join-Path $HOME 'x')", "Remove-Item -Path (Join-Path $env:USERPROFILE 'x') -Recurse",
    "Remove-Item (Get-Location)", "Get-ChildItem ~ | Remove-Item -Recurse", "gci C:\\Users | rm -r -fo",
    "Get-ChildItem $HOME -Recurse | Remove-Item -Force", "Get-Item ~ | Remove-Item", "Get-ChildItem | Remove-Item",
    "Get-ChildItem -Path ~ -Filter *.tmp | Remove-Item", "Get-Content list.txt | Remove-Item",
]
POWERSHELL_PASS = [
    "Remove-Item ~ -Recurse -WhatIf", "Set-Content -Path out.txt -Value y", "Add-Content -Path log.txt -Value y",
    "[IO.File]::ReadAllText('a.py')", "Get-Content ~\\x.txt", "Remove-Item (Join-Path build 'x') -Recurse",
    "if (Test-Path build) { Remove-Item build -Recurse }", "Write-Output (Get-Date)",
    "Get-ChildItem build | Remove-Item -Recurse", "Get-ChildItem -Filter *.tmp | Remove-Item",
    "Get-ChildItem -Path build -Recurse -Include *.obj | Remove-Item", "Get-Item build | Remove-Item -Recurse",
]


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    folder = tmp_path / "ws"
    (folder / "sub").mkdir(parents=True)
    (folder / ".git").mkdir()
    (folder / "a.py").write_text("print(1)\n")
    return folder


@pytest.mark.parametrize(("dialect", "command"), [("posix", c) for c in POSIX_ASK]
                         + [("powershell", c) for c in POWERSHELL_ASK])
def test_asks_before(ws: Path, dialect: str, command: str) -> None:
    assert destructive_reason(command, ws, dialect), command


@pytest.mark.parametrize(("dialect", "command"), [("posix", c) for c in POSIX_PASS]
                         + [("powershell", c) for c in POWERSHELL_PASS])
def test_does_not_ask_about(ws: Path, dialect: str, command: str) -> None:
    assert destructive_reason(command, ws, dialect) is None, destructive_reason(command, ws, dialect)
