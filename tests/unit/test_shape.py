"""The shape the design promises, read from the source with `ast`: the engine (core/) talks to no
terminal and imports no front end, the import graph of core/ and ui/ has no cycle, and no product
module outgrows one reader's sitting."""

from __future__ import annotations

import ast
import dataclasses
import itertools
import re
import typing
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from core import protocol_commands
from tests.support.paths import ROOT

PACKAGES = ("core", "ui")
ENTRIES = ("agent.py", "tui.py")
FRONT_ENDS = {"ui", "tui", "agent"}
TERMINAL_LIBRARIES = {"rich", "prompt_toolkit", "readline", "getpass"}
STREAMS = {"stdout", "stderr", "stdin", "__stdout__", "__stderr__", "__stdin__"}
# The console fix the core keeps by design: it re-encodes the streams as UTF-8 and writes nothing.
STREAM_FIXES = {"setup_streams"}
MAX_LINES = 700


@dataclass(frozen=True)
class Module:
    name: str  # dotted; a package is named by its __init__.py
    path: Path
    root: Path = ROOT

    @property
    def package(self) -> str:
        """Where this module's relative imports start."""
        return self.name if self.path.name == "__init__.py" else self.name.rpartition(".")[0]

    def tree(self) -> ast.Module:
        return ast.parse(self.path.read_text(encoding="utf-8"), filename=str(self.path))

    def where(self, node: ast.AST) -> str:
        return f"{self.path.relative_to(self.root).as_posix()}:{getattr(node, 'lineno', 0)}"


def modules(*packages: str, root: Path = ROOT) -> dict[str, Module]:
    found: dict[str, Module] = {}
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            parts = path.relative_to(root).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            found[name] = Module(name, path, root)
    return found


def imports(module: Module) -> Iterator[tuple[str, ast.AST]]:
    """Every dotted name `module` imports, wherever the import is (module level, inside a function,
    under TYPE_CHECKING): `from a.b import c` gives a.b.c, which is a module or a name in a.b."""
    for node in ast.walk(module.tree()):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = module.package.split(".")
                anchor = anchor[:len(anchor) - (node.level - 1)]
                base = ".".join(anchor + ([node.module] if node.module else []))
            for alias in node.names:
                yield f"{base}.{alias.name}", node


def _resolve(name: str, known: dict[str, Module]) -> str | None:
    """The module of core/ or ui/ that importing `name` runs last: its longest known prefix."""
    parts = name.split(".")
    for end in range(len(parts), 0, -1):
        if ".".join(parts[:end]) in known:
            return ".".join(parts[:end])
    return None


def import_graph(root: Path = ROOT) -> dict[str, dict[str, str]]:
    """module → {module it imports: where}, for core/ and ui/."""
    known = modules(*PACKAGES, root=root)
    graph: dict[str, dict[str, str]] = {name: {} for name in known}
    for name, module in known.items():
        for imported, node in imports(module):
            target = _resolve(imported, known)
            if target is not None and target != name:
                graph[name].setdefault(target, module.where(node))
    return graph


def cycles(graph: dict[str, dict[str, str]]) -> list[list[str]]:
    """One cycle through each strongly connected part of the graph (Tarjan), as a closed path."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    parts: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in graph[node]:
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            part = []
            while True:
                top = stack.pop()
                part.append(top)
                if top == node:
                    break
            if len(part) > 1:
                parts.append(part)

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return [_closed_path(graph, sorted(part)) for part in parts]


def _closed_path(graph: dict[str, dict[str, str]], part: list[str]) -> list[str]:
    """A shortest path from the part's first module back to itself, inside the part."""
    start, members = part[0], set(part)
    came: dict[str, str] = {}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for nxt in sorted(graph[node]):
                if nxt == start:
                    path = [node]
                    while path[-1] != start:
                        path.append(came[path[-1]])
                    return [start, *reversed(path[:-1]), start]
                if nxt in members and nxt not in came:
                    came[nxt] = node
                    following.append(nxt)
        frontier = following
    raise AssertionError(f"no cycle through {start}")


def describe(graph: dict[str, dict[str, str]], cycle: list[str]) -> str:
    return " → ".join(f"{a} ({graph[a][b]})" for a, b in itertools.pairwise(cycle)) + f" → {cycle[-1]}"


def terminal_use(module: Module) -> Iterator[str]:
    """Where `module` prints, asks, imports a terminal library or touches a standard stream."""
    tree = module.tree()
    allowed = {id(inner) for fn in ast.walk(tree) if isinstance(fn, ast.FunctionDef) and fn.name in STREAM_FIXES
               for inner in ast.walk(fn)}
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("print", "input"):
            yield f"{module.where(node)} calls {node.func.id}()"
        elif isinstance(node, ast.Import | ast.ImportFrom):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            for name in names:
                if name.split(".")[0] in TERMINAL_LIBRARIES:
                    yield f"{module.where(node)} imports {name}"
        elif (isinstance(node, ast.Attribute) and node.attr in STREAMS and isinstance(node.value, ast.Name)
              and node.value.id == "sys" and id(node) not in allowed):
            yield f"{module.where(node)} uses sys.{node.attr}"
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "write"
              and isinstance(node.func.value, ast.Name) and node.func.value.id == "os" and node.args
              and isinstance(node.args[0], ast.Constant) and node.args[0].value in (1, 2)):
            yield f"{module.where(node)} writes to file descriptor {node.args[0].value}"


def test_the_core_talks_to_no_terminal() -> None:
    found = [use for module in modules("core").values() for use in terminal_use(module)]
    assert not found, "core/ is the engine; front ends own the terminal:\n" + "\n".join(found)


def test_the_check_sees_each_kind_of_terminal_use(tmp_path: Path) -> None:
    source = ("import sys, os\nimport rich.console\nfrom prompt_toolkit import prompt\nimport readline as rl\n"
              "def f():\n    print('x')\n    input()\n    sys.stderr.write('x')\n    out = sys.__stdout__\n"
              "    os.write(2, b'x')\n    os.write(fd, b'x')\n"
              "def setup_streams():\n    sys.stdout.reconfigure(encoding='utf-8')\n")
    (tmp_path / "probe.py").write_text(source)
    found = list(terminal_use(Module("probe", tmp_path / "probe.py", tmp_path)))
    kinds = sorted(use.split(" ", 1)[1] for use in found)
    assert kinds == ["calls input()", "calls print()", "imports prompt_toolkit", "imports readline",
                     "imports rich.console", "uses sys.__stdout__", "uses sys.stderr",
                     "writes to file descriptor 2"], found


def test_the_import_graph_of_core_and_ui_has_no_cycle() -> None:
    graph = import_graph()
    found = cycles(graph)
    assert not found, "import cycles:\n" + "\n".join(describe(graph, cycle) for cycle in found)


def test_the_graph_sees_every_kind_of_import(tmp_path: Path) -> None:
    """Relative, inside a function, under TYPE_CHECKING; `from a import b` with b a module points at
    b, not at a's __init__ (which is not a cycle)."""
    files = {"core/__init__.py": "", "core/a/__init__.py": "from core.a.b import B\n",
             "core/a/b.py": "from core.a import c\nclass B: ...\n",
             "core/a/c.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ..d import D\n",
             "core/d.py": "def f():\n    from .a.b import B\n", "ui/__init__.py": "import core.d\n"}
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    graph = import_graph(tmp_path)
    assert {name: sorted(targets) for name, targets in graph.items()} == {
        "core": [], "core.a": ["core.a.b"], "core.a.b": ["core.a.c"], "core.a.c": ["core.d"], "core.d": ["core.a.b"],
        "ui": ["core.d"]}
    assert graph["core.d"]["core.a.b"] == "core/d.py:2"
    assert [describe(graph, cycle) for cycle in cycles(graph)] == [
        "core.a.b (core/a/b.py:1) → core.a.c (core/a/c.py:3) → core.d (core/d.py:2) → core.a.b"]


def test_the_cycle_finder_names_the_cycle() -> None:
    graph = {"a": {"b": "a.py:1"}, "b": {"c": "b.py:2"}, "c": {"a": "c.py:3", "d": "c.py:4"}, "d": {}}
    assert cycles(graph) == [["a", "b", "c", "a"]]
    assert describe(graph, ["a", "b", "c", "a"]) == "a (a.py:1) → b (b.py:2) → c (c.py:3) → a"
    assert cycles({"a": {"b": ""}, "b": {}}) == []


def test_the_core_never_imports_a_front_end() -> None:
    found = [f"{module.where(node)} imports {name}" for module in modules("core").values()
             for name, node in imports(module) if name.split(".")[0] in FRONT_ENDS]
    assert not found, "\n".join(found)


DEVELOPER_ONLY = {"tests", "devtools", "bench"}


def product() -> dict[str, Module]:
    """core/, ui/ and the two entry scripts: what the wheel and the exe are built from."""
    return {**modules(*PACKAGES), **{Path(e).stem: Module(Path(e).stem, ROOT / e) for e in ENTRIES}}


def test_the_product_imports_no_developer_tool() -> None:
    """The exe's analysis starts from agent.py, the wheel holds core/ and ui/: what they never import
    (tests, devtools/, bench/) neither carries."""
    found = [f"{module.where(node)} imports {name}" for module in product().values()
             for name, node in imports(module) if name.split(".")[0] in DEVELOPER_ONLY]
    assert len(product()) > 50 and not found, "\n".join(found)


def test_no_product_module_is_over_700_lines() -> None:
    paths = [m.path for m in modules(*PACKAGES).values()] + [ROOT / entry for entry in ENTRIES]
    sizes = {p.relative_to(ROOT).as_posix(): len(p.read_text(encoding="utf-8").splitlines()) for p in paths}
    assert len(sizes) > 50 and max(sizes.values()) > 300  # the walk found the product
    assert not {name: size for name, size in sizes.items() if size > MAX_LINES}


def free_form_meta(module: Module) -> Iterator[str]:
    """Where `module` declares, passes or reads a `meta` (a field, a keyword, an attribute)."""
    for node in ast.walk(module.tree()):
        if isinstance(node, ast.Attribute) and node.attr == "meta":
            yield f"{module.where(node)} reads .meta"
        elif isinstance(node, ast.keyword) and node.arg == "meta":
            yield f"{module.where(node)} passes meta="
        elif isinstance(node, ast.AnnAssign) and getattr(node.target, "id", "") == "meta":
            yield f"{module.where(node)} declares meta:"


def private_imports(module: Module) -> Iterator[str]:
    """Where `module` imports a `_private` name of another module (dunders are not private, nor `_`,
    gettext's name for the translation function)."""
    for node in ast.walk(module.tree()):
        if isinstance(node, ast.ImportFrom):
            for alias in node.names:
                if alias.name.startswith("_") and not alias.name.startswith("__") and alias.name != "_":
                    yield f"{module.where(node)} imports {alias.name} from {node.module or '.'}"


# Rules every module of core/ keeps, each with the check that finds a break.
CORE_RULES = {
    # the facts beside a tool result are a typed `core.session.items.ToolOutcome`, read by name
    "no free-form meta dict": free_form_meta,
    # a name shared across files is public in its package, so a reader follows one file at a time
    "no private name imported across files": private_imports,
}


@pytest.mark.parametrize("rule", CORE_RULES)
def test_the_core_keeps_its_rules(rule: str) -> None:
    found = [use for module in modules("core").values() for use in CORE_RULES[rule](module)]
    assert not found, "\n".join(found)


@pytest.mark.parametrize(("rule", "source", "expected"), [
    ("no free-form meta dict",
     "class R:\n    meta: dict = {}\ndef f(item):\n    g(item.meta['x'], meta={})\n"
     "    meta, _, rest = 'a b'.partition(' ')\n",
     ["declares meta:", "passes meta=", "reads .meta"]),
    ("no private name imported across files",
     "from a.b import _State, Public, __version__\nfrom .c import (\n    _judge,\n)\n"
     "def f():\n    from d import _late\n",
     ["imports _State from a.b", "imports _judge from c", "imports _late from d"]),
])
def test_each_rule_sees_every_spelling(tmp_path: Path, rule: str, source: str, expected: list[str]) -> None:
    (tmp_path / "probe.py").write_text(source)
    probe = Module("probe", tmp_path / "probe.py", tmp_path)
    found = [use.split(" ", 1)[1] for use in CORE_RULES[rule](probe)]
    assert sorted(found) == expected, found


# What a front end may import from core/ (besides the package's own face, for its version): the protocol,
# the runtime, and what start-up needs before either (settings, the console streams, taking the key out
# of the environment, the interface's language, and `sandbox-exec`, the core's own entry point that
# agent.py routes to before anything else runs).
FRONT_END_SURFACE = ("core.protocol", "core.protocol_commands", "core.runtime", "core.config", "core.console",
                     "core.secret_env", "core.i18n", "core.i18n.choice")


def past_the_surface(root: Path = ROOT) -> dict[str, set[str]]:
    """Each front-end file → the core modules it imports beyond FRONT_END_SURFACE."""
    known = modules("core", root=root)
    entries = [Module(entry.removesuffix(".py"), root / entry, root) for entry in ENTRIES]
    fronts = [*modules("ui", root=root).values(), *entries]
    found: dict[str, set[str]] = {}
    for front in fronts:
        beyond = {target for name, _ in imports(front)
                  if (target := _resolve(name, known)) is not None and not _on_surface(target)}
        if beyond:
            found[front.path.relative_to(root).as_posix()] = beyond
    return found


def _on_surface(module: str) -> bool:
    return module == "core" or any(module == s or module.startswith(s + ".") for s in FRONT_END_SURFACE)


def test_front_ends_import_only_the_protocol_the_runtime_and_start_up() -> None:
    found = past_the_surface()
    assert not found, f"a front end reaches past core.protocol and core.runtime: {found}"


def test_the_surface_check_sees_a_reach_past_it(tmp_path: Path) -> None:
    files = {"core/__init__.py": "__version__ = '1'\n", "core/protocol.py": "", "core/runtime/__init__.py": "",
             "core/runtime/slash.py": "", "core/agent/__init__.py": "", "core/agent/approvals.py": "",
             "ui/__init__.py": "", "ui/a.py": "from core import __version__, protocol\nfrom core.runtime import slash\n",
             "ui/b.py": "def f():\n    from core.agent.approvals import label\n",
             "agent.py": "import core.agent\n", "tui.py": ""}
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    assert past_the_surface(tmp_path) == {"ui/b.py": {"core.agent.approvals"}, "agent.py": {"core.agent"}}


def _prose_or_bags(cls: type) -> list[str]:
    """The fields of a command answer (and of the rows it carries) that are prose for a front end to
    show, or a free-form dict (values of any type, read by key), rather than data it words itself."""
    found = []
    for f in dataclasses.fields(cls):
        bag = str(f.type) == "dict" or re.search(r"dict\[\w+, (object|Any|typing\.Any)\]", str(f.type))
        if f.name in ("text", "data") or bag:
            found.append(f"{cls.__name__}.{f.name}: {f.type}")
        rows = [getattr(protocol_commands, name) for name in re.findall(r"\w+", str(f.type))
                if dataclasses.is_dataclass(getattr(protocol_commands, name, None))]
        found += [problem for row in rows for problem in _prose_or_bags(row)]
    return found


def test_command_answers_carry_data_that_front_ends_word() -> None:
    """Each front end formats a slash command's answer itself (ui/reports.py): an answer with a
    `text` to print or a `data` dict to read by key would move the wording back into the core."""
    answers = typing.get_args(protocol_commands.CommandAnswer)
    assert len(answers) >= 10
    found = [problem for answer in answers for problem in _prose_or_bags(answer)]
    assert not found, found
    assert not hasattr(protocol_commands, "CommandResult")


def test_the_answer_check_sees_prose_and_bags() -> None:
    @dataclasses.dataclass
    class Wordy:
        op_id: str
        text: str
        data: dict[str, int]
        extra: dict = dataclasses.field(default_factory=dict)
        bag: dict[str, object] = dataclasses.field(default_factory=dict)
        counts: dict[str, int] = dataclasses.field(default_factory=dict)  # typed data: fine

    found = [p.split(":")[0] for p in _prose_or_bags(Wordy)]
    assert found == ["Wordy.text", "Wordy.data", "Wordy.extra", "Wordy.bag"]
