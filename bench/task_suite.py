"""The tasks bench/tasks.py gives the agent: small, real, each checked by a command's exit code.

Each task is a folder's files (bytes where line endings or indentation are the point), a prompt as a
user would type it, and a check that runs in the folder afterwards ({python} is this interpreter).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Task:
    name: str
    files: dict[str, str | bytes]
    prompt: str
    check: str  # a shell command run in the task's folder; exit 0 = solved


def _pytest(test: str) -> str:
    return f"{{python}} -m pytest -q -p no:cacheprovider {test}"


TASKS: list[Task] = [
    Task("calc", {
        "calc.py": "def add(a, b):\n    return a - b\n",
        "test_calc.py": "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n",
    }, "The test in test_calc.py fails. Fix calc.py so that it passes.", _pytest("test_calc.py")),
    Task("off_by_one", {
        "lists.py": "def last(items):\n    \"\"\"The last element of a non-empty list.\"\"\"\n    return items[len(items)]\n",
        "test_lists.py": "from lists import last\n\n\ndef test_last():\n    assert last([1, 2, 3]) == 3\n",
    }, "test_lists.py fails with an IndexError. Fix the bug in lists.py.", _pytest("test_lists.py")),
    Task("cli_flag", {
        "greet.py": ("import argparse\n\n\ndef main():\n    parser = argparse.ArgumentParser()\n"
                     "    parser.add_argument(\"name\")\n    args = parser.parse_args()\n"
                     "    print(f\"Hello, {args.name}\")\n\n\nif __name__ == \"__main__\":\n    main()\n"),
    }, "Add a --shout flag to greet.py that prints the greeting in upper case.",
        "{python} greet.py bob --shout | grep -qx 'HELLO, BOB' && {python} greet.py bob | grep -qx 'Hello, bob'"),
    Task("rename", {
        "users.py": "def get_usr(uid):\n    return {\"id\": uid}\n",
        "main.py": "from users import get_usr\n\nprint(get_usr(1)[\"id\"])\n",
        "report.py": "from users import get_usr\n\n\ndef report(uid):\n    return f\"user {get_usr(uid)['id']}\"\n",
    }, "Rename the function get_usr to get_user everywhere it is defined or used.",
        "! grep -rq get_usr --include=*.py . && {python} main.py | grep -qx 1 && {python} -c 'import report'"),
    Task("fix_import", {
        "text_utils.py": "def slugify(text):\n    return text.lower().replace(\" \", \"-\")\n",
        "main.py": "from utils import slugify\n\nprint(slugify(\"Hello World\"))\n",
    }, "Running main.py fails with ModuleNotFoundError. Fix the import.",
        "{python} main.py | grep -qx hello-world"),
    Task("lint", {
        "tidy.py": "import os\nimport sys\n\n\ndef name():\n    return sys.argv[0]\n",
    }, "ruff reports an unused import in tidy.py. Remove it.",
        "{python} -m ruff check --isolated --select F tidy.py && {python} -c 'import tidy'"),
    Task("docstring", {
        "text.py": ("def is_palindrome(text):\n    \"\"\"True when text reads the same backwards, ignoring case "
                    "and spaces.\"\"\"\n    raise NotImplementedError\n"),
        "test_text.py": ("from text import is_palindrome\n\n\ndef test_it():\n    assert is_palindrome(\"Never odd or even\")\n"
                         "    assert not is_palindrome(\"python\")\n"),
    }, "Implement is_palindrome in text.py as its docstring says.", _pytest("test_text.py")),
    Task("crlf", {
        "shop.py": b"def total(prices):\r\n    result = 0\r\n    for p in prices:\r\n        result = p\r\n"
                   b"    return result\r\n",
    }, "total() in shop.py should return the sum of the prices but returns the last one. Fix it.",
        "{python} -c 'import shop; assert shop.total([1, 2, 3]) == 6' && "
        "{python} -c 'd = open(\"shop.py\", \"rb\").read(); assert d.count(b\"\\r\\n\") == d.count(b\"\\n\")'"),
    Task("tabs", {
        "area.py": "def area(w, h):\n\tif w < 0 or h < 0:\n\t\treturn 0\n\treturn w + h\n",
    }, "area() in area.py adds the width and height; it must multiply them. Fix it.",
        "{python} -c 'import area; assert area.area(3, 4) == 12' && grep -q \"$(printf '\\treturn w \\* h')\" area.py"),
    Task("chinese", {
        "hello.py": "def greeting():\n    return \"Hello\"\n",
    }, "把 hello.py 里 greeting() 返回的 \"Hello\" 改成 \"你好\"。",
        "{python} -c 'import hello; assert hello.greeting() == \"你好\"'"),
    Task("config_value", {
        "settings.py": "HOST = \"127.0.0.1\"\nDEFAULT_PORT = 8000\nDEBUG = False\n",
    }, "Change the default port in settings.py to 8080.",
        "{python} -c 'import settings as s; assert s.DEFAULT_PORT == 8080 and s.HOST == \"127.0.0.1\"'"),
    Task("add_function", {
        "ops.py": "def add(a, b):\n    return a + b\n",
    }, "Add a function multiply(a, b) to ops.py that returns the product.",
        "{python} -c 'import ops; assert ops.multiply(3, 4) == 12 and ops.add(1, 1) == 2'"),
    Task("typo", {
        "banner.py": "def banner():\n    return \"Welcom to the shop\"\n",
    }, "Fix the spelling mistake in the banner text in banner.py.",
        "{python} -c 'import banner; assert banner.banner() == \"Welcome to the shop\"'"),
    Task("json_config", {
        "config.json": "{\n  \"name\": \"app\",\n  \"debug\": false,\n  \"workers\": 2\n}\n",
    }, "Turn debug on in config.json.",
        "{python} -c 'import json; c = json.load(open(\"config.json\")); assert c == {\"name\": \"app\", \"debug\": True, \"workers\": 2}'"),
    Task("syntax", {
        "broken.py": "def double(x)\n    return x * 2\n",
    }, "broken.py has a syntax error. Fix it.",
        "{python} -c 'import broken; assert broken.double(4) == 8'"),
    Task("several_places", {
        "stats.py": ("def mean(values):\n    cnt = len(values)\n    if cnt == 0:\n        return 0\n"
                     "    return sum(values) / cnt\n"),
    }, "In stats.py, rename the variable cnt to count.",
        "! grep -q cnt stats.py && {python} -c 'import stats; assert stats.mean([1, 2, 3]) == 2 and stats.mean([]) == 0'"),
    Task("nested", {
        "shapes.py": ("class Square:\n    def __init__(self, side):\n        self.side = side\n\n"
                      "    def perimeter(self):\n        if self.side < 0:\n            raise ValueError(\"negative\")\n"
                      "        return self.side * 3\n"),
    }, "Square.perimeter in shapes.py is wrong: a square has four sides. Fix it.",
        "{python} -c 'import shapes; assert shapes.Square(2).perimeter() == 8'"),
    Task("readme", {
        "README.md": "# tool\n\nA small tool.\n",
    }, "Add a section '## Usage' to README.md that says: Run `python tool.py`.",
        "grep -qx '## Usage' README.md && grep -q 'python tool.py' README.md && grep -q 'A small tool.' README.md"),
    Task("remove_function", {
        "api.py": ("def new_api():\n    return 2\n\n\ndef old_api():\n    \"\"\"Deprecated.\"\"\"\n    return 1\n"),
    }, "Delete the deprecated function old_api from api.py.",
        "! grep -q old_api api.py && {python} -c 'import api; assert api.new_api() == 2'"),
    Task("default_arg", {
        "fetch.py": "def fetch(url, timeout):\n    return (url, timeout)\n",
        "test_fetch.py": "from fetch import fetch\n\n\ndef test_default():\n    assert fetch(\"x\") == (\"x\", 10)\n",
    }, "Make timeout in fetch.py optional with a default of 10, so test_fetch.py passes.", _pytest("test_fetch.py")),
]
