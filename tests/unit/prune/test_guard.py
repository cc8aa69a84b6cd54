"""The fidelity guard: a diagnostic line survives every family; only the budget may cut it, and then
the stamp says so."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.prune import prune

# A command of every family, as typed, as hidden behind a substitution, and as run through cmd /c.
_PROGRAMS = [
    "pytest -q",
    "python -m unittest",
    "npx jest",
    "npx tsc",
    "npx eslint .",
    "npx webpack",
    "npm install",
    "cargo build",
    "go test ./...",
    "make",
    "git diff",
    "git status",
    "git log",
    "find . -name '*.c'",
    "ls -R",
    "tox",
    "valgrind ./app",
    "black --check .",
    "pip install x",
    "./tool",
    "prove -v t/",
]
_COMMANDS = st.one_of(
    st.sampled_from(_PROGRAMS),
    st.builds(
        lambda p: f"javac -d build $(find src -name '*.java' | sort) && {p}", st.sampled_from(_PROGRAMS)
    ),
    st.builds(lambda p: f"{p.split()[0]} $(find . -type f | head -50)", st.sampled_from(_PROGRAMS)),
    st.builds(lambda p: f"cmd /c {p}", st.sampled_from(_PROGRAMS)),
    st.builds(lambda p: f"bash -c '{p} 2>&1 | tail -200'", st.sampled_from(_PROGRAMS)),
)
_word = st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=2, max_size=9)
_noise = st.one_of(
    st.builds(lambda w, n: f"processing {w} item {n}", _word, st.integers(0, 10**6)),
    st.builds(lambda w, n: f"./src/{w}/{w}_{n}.java", _word, st.integers(0, 999)),
    st.builds(lambda n: f"Downloading chunk {n} of 9000", st.integers(0, 9000)),
    st.builds(lambda n: f"正在处理第 {n} 个文件", st.integers(0, 9000)),
    st.builds(lambda ws: " ".join(ws), st.lists(_word, min_size=1, max_size=8)),
    st.just(""),
)
_diagnostic = st.one_of(
    st.builds(
        lambda w, n: f"src/{w}/Main.java:{n}: error: cannot find symbol {w}", _word, st.integers(1, 999)
    ),
    st.builds(lambda w, n: f"src/{w}.c:{n}:5: 错误：‘{w}’未声明", _word, st.integers(1, 999)),
    st.builds(lambda w: f"FATAL: could not open {w}.db: Permission denied", _word),
    st.builds(lambda w, n: f"{w.capitalize()}Error: bad value {n} for {w}", _word, st.integers(0, 99)),
    st.builds(lambda w: f"panic: runtime error: index out of range in {w}", _word),
    st.builds(lambda w: f"致命错误：无法打开 {w}.h", _word),
    st.builds(lambda w: f"E: 无法定位软件包 {w}", _word),
    st.builds(lambda w: f"{w}: 未找到命令", _word),
    st.builds(lambda w: f"拒绝访问：{w}.lock", _word),
    st.builds(lambda n, w: f"not ok {n} - {w} parses dates", st.integers(1, 500), _word),
    st.builds(lambda w: f"--- FAIL: Test{w.capitalize()} (0.00s)", _word),
    st.builds(lambda w: f"test {w}::works ... FAILED", _word),
    st.builds(lambda w: f"  ● {w} › rejects empty input", _word),
    st.builds(
        lambda a, b: (
            f"升级了 0 个软件包，新安装了 {a} 个软件包，要卸载 0 个软件包，有 {b} 个软件包未被升级。"
        ),
        st.integers(1, 99),
        st.integers(0, 99),
    ),
    st.builds(
        lambda a, b: f"Tests run: {a}, Failures: {b}, Errors: 0, Skipped: 0",
        st.integers(5, 99),
        st.integers(1, 4),
    ),
)


@st.composite
def mixes(draw: st.DrawFn) -> tuple[str, list[str]]:
    lines = list(draw(st.lists(_noise, min_size=0, max_size=600)))
    diagnostics = draw(st.lists(_diagnostic, min_size=1, max_size=40, unique=True))
    for line in diagnostics:
        lines.insert(draw(st.integers(0, len(lines))), line)
    return "\n".join(lines) + "\n", diagnostics


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]
)
@given(mixes(), _COMMANDS, st.sampled_from([0, 1, 2, None]), st.sampled_from([12_000, 3_000, 1_200]))
def test_every_diagnostic_survives_unless_the_budget_cut_it_and_then_the_stamp_says_so(
    case: tuple[str, list[str]], command: str, exit_code: int | None, budget: int
) -> None:
    text, diagnostics = case
    result = prune(text, command=command, exit_code=exit_code, archive_id="out-3", budget_chars=budget)
    lost = [line for line in diagnostics if line not in result.text]
    if lost:
        stamp = result.text.split("\n")[1]
        assert "-char budget" in stamp and "diagnostic line" in stamp and "out-3" in stamp, (command, lost)


def _javac_log(warnings: int) -> str:
    out = []
    for i in range(warnings):
        out += [
            f"src/app/W{i}.java:{i + 3}: warning: [rawtypes] found raw type: List",
            "        List xs;",
            "        ^",
        ]
    out.insert(40, "src/app/Broken.java:12: error: cannot find symbol")
    out[41:41] = [
        "        return helper(x);",
        "               ^",
        "  symbol:   method helper(int)",
        "  location: class Broken",
    ]
    return "\n".join([*out, "1 error", f"{warnings} warnings"]) + "\n"


def test_a_compiler_fed_by_a_find_substitution_keeps_its_errors_and_their_context() -> None:
    result = prune(
        _javac_log(99), command="javac -Xlint:all -d build $(find src -name '*.java' | sort)", exit_code=1
    )
    for line in (
        "src/app/Broken.java:12: error: cannot find symbol",
        "        return helper(x);",
        "  symbol:   method helper(int)",
        "  location: class Broken",
        "1 error",
        "99 warnings",
    ):
        assert line in result.text
    assert result.family != "listing"


def test_a_listing_whose_text_reports_errors_falls_back_to_the_generic_layer() -> None:
    result = prune(_javac_log(99), command="find src -name '*.java'", exit_code=1)
    assert result.family == "generic"
    assert "src/app/Broken.java:12: error: cannot find symbol" in result.text


def test_a_listings_own_paths_are_not_diagnostics() -> None:
    paths = "".join(f"./src/errors/handler_{i}.py\n" for i in range(3000))
    result = prune(paths, command="find . -name '*.py'", exit_code=0)
    assert result.family == "listing"
    assert len(result.text) < 2_000


def test_tap_failure_details_stay_with_the_failure() -> None:
    lines = [f"ok {i} - case {i}" for i in range(1, 300)]
    lines[150:150] = [
        "not ok 151 - totals add up",
        "#   Failed test 'totals add up'",
        "#   at t/totals.t line 42.",
        "#          got: '10'",
        "#     expected: '12'",
    ]
    lines += [
        "t/totals.t .. Dubious, test returned 1 (wstat 256, 0x100)",
        "Failed 1/300 subtests",
        "Files=1, Tests=300,  0 wallclock secs",
        "Result: FAIL",
    ]
    result = prune("\n".join(lines) + "\n", command="prove -v t/", exit_code=1)
    for line in lines[150:155] + lines[-4:]:
        assert line in result.text


def test_a_chinese_apt_summary_is_kept() -> None:
    lines = [
        f"获取:{i} http://deb.example.org/debian bookworm/main amd64 pkg{i} amd64 1.{i} [{i}0 kB]"
        for i in range(300)
    ]
    summary = "升级了 0 个软件包，新安装了 20 个软件包，要卸载 0 个软件包，有 5 个软件包未被升级。"
    lines.insert(20, summary)
    result = prune("\n".join(lines) + "\n", command="sudo apt-get install -y cowsay", exit_code=0)
    assert summary in result.text


def test_a_query_through_cmd_is_whole_within_the_budget() -> None:
    rows = "".join(f" 11/2/2026  10:00 AM    {i * 37:>10,} file{i}.c\n" for i in range(120))
    text = f" Directory of C:\\Users\\user\\proj\\src\n\n{rows}             120 File(s)        1,076 bytes\n"
    result = prune(text, command="cmd /c dir /s", exit_code=0)
    assert result.text.endswith(text.rstrip("\n"))


def _windows_noise(n: int) -> list[str]:
    return [f"[{k:03d}/{n}] compiling module{k:03d}.c" for k in range(n)]


def test_a_windows_multiprocessing_spawn_error_keeps_its_explanation() -> None:
    child = [
        "Traceback (most recent call last):",
        '  File "<string>", line 1, in <module>',
        '  File "C:\\py311\\Lib\\multiprocessing\\spawn.py", line 120, in spawn_main',
        "    exitcode = _main(fd, parent_sentinel)",
        '  File "C:\\py311\\Lib\\multiprocessing\\spawn.py", line 129, in _main',
        "    prepare(preparation_data)",
        '  File "C:\\Users\\user\\proj\\crunch.py", line 14, in <module>',
        "    pool = Pool(4)",
        "RuntimeError:",
        "        An attempt has been made to start a new process before the",
        "        current process has finished its bootstrapping phase.",
        "",
        "        This probably means that you are not using fork to start your",
        "        child processes and you have forgotten to use the proper idiom",
        "        in the main module:",
    ]
    lines = [f"loaded chunk {k} of 400" for k in range(400)] + child * 4
    result = prune("\r\n".join(lines) + "\r\n", command="C:\\py311\\python.exe crunch.py", exit_code=1)
    for line in (
        "RuntimeError:",
        "        An attempt has been made to start a new process before the",
        "        current process has finished its bootstrapping phase.",
        '  File "C:\\Users\\user\\proj\\crunch.py", line 14, in <module>',
    ):
        assert line in result.text


def test_a_bat_builds_errors_survive_behind_cmd() -> None:
    lines = [
        "Building shop (Release)",
        *_windows_noise(600),
        "'cl.exe' is not recognized as an internal or external command,",
        "operable program or batch file.",
        "Build FAILED with exit code 9009",
    ]
    for command in ("build.bat", "cmd /c build.bat", 'cmd.exe /C "C:\\Users\\user\\proj\\build.bat release"'):
        result = prune("\r\n".join(lines) + "\r\n", command=command, exit_code=1)
        assert "'cl.exe' is not recognized as an internal or external command," in result.text
        assert "Build FAILED with exit code 9009" in result.text


def test_pips_build_tools_report_is_kept_whole() -> None:
    report = [
        '      error: Microsoft Visual C++ 14.0 or greater is required. Get it with "Microsoft C++ Build Tools": '
        "https://visualstudio.microsoft.com/visual-cpp-build-tools/",
        "      [end of output]",
        "",
        "  note: This error originates from a subprocess, and is likely not a problem with pip.",
        "  ERROR: Failed building wheel for fastcsv",
        "Failed to build fastcsv",
        "ERROR: Could not build wheels for fastcsv, which is required to install pyproject.toml-based projects",
    ]
    lines = [
        f"  copying src\\fastcsv\\part{k}.py -> build\\lib.win-amd64-cpython-311\\fastcsv" for k in range(300)
    ]
    result = prune(
        "\r\n".join(["Building wheels for collected packages: fastcsv", *lines, *report]) + "\r\n",
        command="py -m pip install .",
        exit_code=1,
    )
    for line in report:
        if line.strip() and "[end of output]" not in line:
            assert line in result.text


def test_a_finding_far_below_its_file_keeps_the_file_name() -> None:
    """Stylish reports (eslint, stylelint, yamllint) name the file once, above all its rows."""
    rows = [f"    {k}:1   warning  Unexpected var, use let or const instead  no-var" for k in range(1, 60)]
    rows.insert(45, "   46:9   error    Empty block statement                     no-empty")
    text = (
        "\n".join(["/home/user/proj/legacy/refunds.js", *rows, "", "✖ 60 problems (1 error, 59 warnings)"])
        + "\n"
    )
    for command in ("npx eslint .", "./lint-all", "npm run lint"):
        result = prune(text * 3, command=command, exit_code=1)
        assert "/home/user/proj/legacy/refunds.js" in result.text
        assert "   46:9   error    Empty block statement                     no-empty" in result.text
