r"""Cases run with Windows programs under wine: cmd.exe, the Windows Python, pip, pytest, a .bat
build. The project sits in the prefix's user folder, so paths read C:\users\<me>\proj-..., which the
scrub turns into C:\Users\user\proj. Output through a pipe is CRLF, and in the zh_CN cases the
console code page (936, GBK)."""

from __future__ import annotations

import getpass
import os
import sys
from pathlib import Path

from harness import ALL, Run, case, write

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))
from tests.windows import WINEPREFIX

PREFIX = Path(os.environ.get("PRUNE_WINEPREFIX") or WINEPREFIX)
PYTHON = r"C:\py311\python.exe"
ZH_WINE = {"LANG": "zh_CN.UTF-8", "LC_ALL": "zh_CN.UTF-8"}


def project(name: str, files: dict[str, str]) -> tuple[Path, list[tuple[str, str]], dict[str, str]]:
    """A project folder inside the prefix, the scrub pairs for its Windows path, and wine's env."""
    user = getpass.getuser()
    folder = PREFIX / "drive_c" / "users" / user / f"proj-{name}"
    if folder.exists():
        for path in sorted(folder.rglob("*"), reverse=True):
            path.rmdir() if path.is_dir() else path.unlink()
    folder.mkdir(parents=True, exist_ok=True)
    write(folder, files)
    home = f"C:\\users\\{user}"
    pairs = [(f"{home}\\proj-{name}", "C:\\Users\\user\\proj"), (f"{home}/proj-{name}", "C:/Users/user/proj"),
             (f"c:\\users\\{user}\\proj-{name}", "c:\\users\\user\\proj"), (home, "C:\\Users\\user"),
             (home.replace("\\", "\\\\"), "C:\\\\Users\\\\user"),
             (str(folder), "/home/user/proj")]
    return folder, pairs, {"WINEPREFIX": str(PREFIX), "WINEDEBUG": "-all"}


def windows(name: str, files: dict[str, str], cmd: str, shown: str, zh: bool = False) -> Run:
    folder, pairs, env = project(name, files)
    return Run(cmd, shown=shown, env={**env, **(ZH_WINE if zh else {"LANG": "C.UTF-8"})}, cwd=folder, scrub=pairs)


SHOP = {
    "shop/__init__.py": "",
    "shop/paths.py": '''
        import os


        def report_path(name):
            return os.path.join(os.path.expanduser("~"), "reports", name + ".csv")


        def read_report(name):
            with open(report_path(name), encoding="utf-8") as f:
                return f.read().splitlines()
        ''',
    "shop/money.py": '''
        from decimal import Decimal, ROUND_HALF_UP


        def to_cents(text):
            return int((Decimal(text) * 100).quantize(Decimal("1"), rounding=ROUND_HALF_UP))


        def split(total, parts):
            base = total // parts
            return [base] * parts
        ''',
}


@case("wine", keep=(r"^FAILED ", r"^E\s+(assert|AssertionError|FileNotFoundError)", r"^[\w\\]+\.py:\d+: \w*Error",
                    r"^=+ .*(failed|passed).* =+$"))
def win_pytest_failures(root: Path) -> Run:
    tests = "\n".join(f"def test_cents_{i}():\n    assert to_cents('{i}.{i % 100:02d}') == {i * 100 + i % 100}\n" for i in range(800))
    files = SHOP | {"tests/test_money.py": "from shop.money import split, to_cents\n\n" + tests + '''

def test_split_keeps_total():
    parts = split(1000, 3)
    assert sum(parts) == 1000
''', "tests/test_paths.py": '''
from shop.paths import read_report


def test_read_monthly_report():
    assert read_report("2026-11")[0] == "date,total"
''', "pytest.ini": "[pytest]\naddopts = -p no:cacheprovider\n"}
    return windows("pytest", files, f"wine '{PYTHON}' -m pytest -v", "python -m pytest -v")


@case("wine", keep=(r"Error|Traceback", r'File "C:\\Users\\user\\proj\\', r"^\s*(return|with) "))
def win_python_traceback(root: Path) -> Run:
    files = SHOP | {"run_report.py": '''
        from shop.paths import read_report

        for month in ("2026-09", "2026-10"):
            print("checking", month)
        rows = read_report("2026-11")
        print(len(rows))
        '''}
    return windows("traceback", files, f"wine '{PYTHON}' run_report.py", "python run_report.py")


@case("wine", keep=(r"^error: Microsoft Visual C\+\+", r"^ERROR: ", r"error: (subprocess|legacy)", r"Failed to build"))
def win_pip_install_needs_msvc(root: Path) -> Run:
    files = {
        "setup.py": '''
            from setuptools import Extension, setup

            setup(name="fastsum", version="0.1", ext_modules=[Extension("fastsum", ["fastsum.c"])])
            ''',
        "fastsum.c": '#include <Python.h>\nstatic struct PyModuleDef m = {PyModuleDef_HEAD_INIT, "fastsum"};\n'
                     "PyMODINIT_FUNC PyInit_fastsum(void) { return PyModule_Create(&m); }\n",
    }
    return windows("pipmsvc", files, f"wine '{PYTHON}' -m pip install --no-index --no-build-isolation --no-cache-dir .",
                   "pip install --no-build-isolation .")


@case("wine", keep=(r"^ERROR: ",))
def win_pip_no_matching_version(root: Path) -> Run:
    return windows("pipnone", {"requirements.txt": "httpx>=0.27\nrequests==2.99.0\n"},
                   f"wine '{PYTHON}' -m pip install --no-index --find-links wheels -r requirements.txt",
                   "pip install --no-index --find-links wheels -r requirements.txt")


@case("wine", keep=ALL)
def win_cmd_dir(root: Path) -> Run:
    files = {f"src\\{name}": "x" * (k * 37 + 5) for k, name in enumerate(
        ["main.c", "util.c", "util.h", "config.ini", "build.bat", "README.txt", "parser.c", "parser.h"])}
    folder, pairs, env = project("dir", {})
    for name, text in files.items():
        (folder / name.replace("\\", "/")).parent.mkdir(parents=True, exist_ok=True)
        (folder / name.replace("\\", "/")).write_text(text)
    os.system(f"touch -d '2026-11-02 10:00' {folder}/src/*")
    return Run("wine cmd /c dir src", shown="dir src", env={**env, "LANG": "C.UTF-8", "TZ": "UTC"}, cwd=folder,
               scrub=pairs)


@case("wine", keep=ALL, encoding="gbk")
def win_cmd_dir_gbk(root: Path) -> Run:
    folder, pairs, env = project("dirgbk", {})
    for k, name in enumerate(["报表.xlsx", "合同草稿.docx", "发票-十一月.pdf", "readme.txt", "数据.csv"]):
        (folder / "docs").mkdir(exist_ok=True)
        (folder / "docs" / name).write_text("x" * (k * 101 + 7))
    os.system(f"touch -d '2026-11-02 10:00' {folder}/docs/*")
    return Run("wine cmd /c dir docs", shown="dir docs", env={**env, **ZH_WINE, "TZ": "UTC"}, cwd=folder, scrub=pairs)


@case("wine", keep=(r"Error|Traceback", r'File "C:\\Users\\user\\proj\\', r"^\s*raise "), encoding="gbk")
def win_python_gbk_log_traceback(root: Path) -> Run:
    files = {"sync.py": '''
        import sys

        def upload(name, size):
            if size > 500:
                raise ValueError(f"文件过大：{name}（{size} KB），上限 500 KB")
            print(f"已上传 {name}，{size} KB")

        print("控制台编码", sys.stdout.encoding)
        for i in range(40):
            upload(f"图片{i:02d}.png", i * 13)
        '''}
    return windows("gbklog", files, f"wine '{PYTHON}' sync.py", "python sync.py", zh=True)


@case("wine", keep=(r"^(Can't recognize|.*not recognized)", r"^Build FAILED", r"[Ee]rror", r"cannot find"))
def win_bat_build(root: Path) -> Run:
    steps = "\r\n".join(f"echo [{k:03d}/600] compiling module{k:03d}.c" for k in range(600))
    files = {"build.bat": f'''@echo off\r
echo Building shop (Release)\r
if not exist out mkdir out\r
{steps}\r
copy /y config\\release.ini out\\app.ini\r
if errorlevel 1 echo warning: no release config, using defaults\r
cl.exe /nologo /O2 main.c /Fe:out\\app.exe\r
if errorlevel 1 goto failed\r
echo Build succeeded\r
exit /b 0\r
:failed\r
echo Build FAILED with exit code %errorlevel%\r
exit /b 1\r
'''}
    return windows("bat", files, "wine cmd /c build.bat", "build.bat")
