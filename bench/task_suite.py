"""The tasks bench/tasks.py gives the agent: small, real, each checked by a command's exit code.

Each task is a folder's files (bytes where line endings or indentation are the point), a prompt as a
user would type it, and a check that runs in the folder afterwards ({python} is this interpreter);
its test files are pinned (`Task.pinned`). The set mixes bugs, features, refactors, config edits,
Chinese prompts, CRLF and tab-indented files, failing tests to fix and a change across files.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Task:
    name: str
    files: dict[str, str | bytes]
    prompt: str
    check: str  # a shell command run in the task's folder; exit 0 = solved

    @property
    def pinned(self) -> tuple[str, ...]:
        """The task's tests: solved only while they are byte for byte as given, so editing a test
        to pass is not a fix."""
        return tuple(name for name in self.files if name.rsplit("/", 1)[-1].startswith("test_"))


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
    Task("largest", {
        "nums.py": "def largest(values):\n    \"\"\"The largest of the values.\"\"\"\n    return min(values)\n",
        "test_nums.py": "from nums import largest\n\n\ndef test_largest():\n    assert largest([3, 9, 4]) == 9\n",
    }, "test_nums.py fails. Fix the bug in nums.py.", _pytest("test_nums.py")),
    Task("price_format", {
        "money.py": "def fmt_price(cents):\n    return f\"${cents / 100}\"\n",
        "test_money.py": ("from money import fmt_price\n\n\ndef test_two_decimals():\n"
                          "    assert fmt_price(150) == \"$1.50\"\n    assert fmt_price(7) == \"$0.07\"\n"),
    }, "The test in test_money.py fails: prices must always show two decimals. Fix money.py.",
        _pytest("test_money.py")),
    Task("none_guard", {
        "names.py": "def initials(name):\n    return \"\".join(part[0].upper() for part in name.split())\n",
        "test_names.py": ("from names import initials\n\n\ndef test_initials():\n    assert initials(\"ada lovelace\") == \"AL\"\n\n\n"
                          "def test_none():\n    assert initials(None) == \"\"\n"),
    }, "initials(None) in names.py raises an error; it should return an empty string. Make test_names.py pass.",
        _pytest("test_names.py")),
    Task("zh_bug", {
        "discount.py": "def apply_discount(price, percent):\n    return price * percent / 100\n",
        "test_discount.py": ("from discount import apply_discount\n\n\ndef test_discount():\n"
                             "    assert apply_discount(200, 25) == 150\n"),
    }, "discount.py 里的 apply_discount 算错了：打 25% 折扣后 200 应该变成 150。修好它，让 test_discount.py 通过。",
        _pytest("test_discount.py")),
    Task("zh_feature", {
        "strings.py": "def upper(s):\n    return s.upper()\n",
    }, "在 strings.py 里加一个函数 reverse(s)，返回倒过来的字符串。",
        "{python} -c 'import strings as s; assert s.reverse(\"abc\") == \"cba\" and s.reverse(\"你好\") == \"好你\" "
        "and s.upper(\"a\") == \"A\"'"),
    Task("zh_config", {
        "config.json": "{\n  \"language\": \"en-US\",\n  \"theme\": \"dark\"\n}\n",
    }, "把 config.json 里的 language 改成 zh-CN，其他设置不要动。",
        "{python} -c 'import json; assert json.load(open(\"config.json\")) == {\"language\": \"zh-CN\", \"theme\": \"dark\"}'"),
    Task("crlf_ini", {
        "app.ini": b"[server]\r\nhost = 0.0.0.0\r\ntimeout = 10\r\n\r\n[log]\r\nlevel = info\r\n",
    }, "Set the server timeout in app.ini to 30 seconds.",
        "{python} -c 'import configparser; c = configparser.ConfigParser(); c.read(\"app.ini\"); "
        "assert c[\"server\"][\"timeout\"] == \"30\" and c[\"log\"][\"level\"] == \"info\"' && "
        "{python} -c 'd = open(\"app.ini\", \"rb\").read(); assert d.count(b\"\\r\\n\") == d.count(b\"\\n\") == 6'"),
    Task("crlf_bug", {
        "temps.py": b"def to_fahrenheit(celsius):\r\n    return celsius * 9 / 5 - 32\r\n",
        "test_temps.py": b"from temps import to_fahrenheit\r\n\r\n\r\ndef test_boiling():\r\n"
                         b"    assert to_fahrenheit(100) == 212\r\n",
    }, "test_temps.py fails. Fix the formula in temps.py (keep its Windows line endings).",
        _pytest("test_temps.py") + " && {python} -c 'd = open(\"temps.py\", \"rb\").read(); "
        "assert d.count(b\"\\r\\n\") == d.count(b\"\\n\")'"),
    Task("tabs_bug", {
        "parity.py": "def is_even(n):\n\treturn n % 2 == 1\n",
        "test_parity.py": "from parity import is_even\n\n\ndef test_even():\n    assert is_even(4)\n    assert not is_even(3)\n",
    }, "test_parity.py fails. Fix is_even in parity.py; the file is indented with tabs, keep it that way.",
        _pytest("test_parity.py") + " && grep -q \"$(printf '^\\treturn')\" parity.py"),
    Task("makefile", {
        "Makefile": "test:\n\tpython -m pytest tests.py\n\nlint:\n\truff check .\n",
    }, "The test target in the Makefile runs the wrong file: it must run test_app.py instead of tests.py.",
        "make -n test | grep -qx 'python -m pytest test_app.py' && make -n lint | grep -qx 'ruff check .'"),
    Task("toml_version", {
        "pyproject.toml": "[project]\nname = \"demo\"\nversion = \"1.2.3\"\ndependencies = []\n",
    }, "Bump the version in pyproject.toml to 1.3.0.",
        "{python} -c 'import tomllib; p = tomllib.load(open(\"pyproject.toml\", \"rb\"))[\"project\"]; "
        "assert p == {\"name\": \"demo\", \"version\": \"1.3.0\", \"dependencies\": []}'"),
    Task("compose_port", {
        "docker-compose.yml": ("services:\n  web:\n    image: demo\n    ports:\n      - \"8000:8000\"\n"
                               "  db:\n    image: postgres\n"),
    }, "In docker-compose.yml, publish the web service on host port 8080 instead of 8000 (the container port "
       "stays 8000).",
        "grep -q '\"8080:8000\"' docker-compose.yml && ! grep -q '8000:8000' docker-compose.yml && "
        "grep -q 'image: postgres' docker-compose.yml"),
    Task("tax_constant", {
        "prices.py": ("def with_tax(amount):\n    return amount * (1 + 0.2)\n\n\n"
                      "def tax_of(amount):\n    return amount * 0.2\n"),
    }, "In prices.py the tax rate 0.2 is written twice. Make it a module constant TAX_RATE and use it in both "
       "functions.",
        "test \"$(grep -c '0\\.2' prices.py)\" = 1 && {python} -c 'import prices as p; assert p.TAX_RATE == 0.2 "
        "and abs(p.with_tax(10) - 12) < 1e-9 and abs(p.tax_of(10) - 2) < 1e-9'"),
    Task("multi_file", {
        "models.py": ("from dataclasses import dataclass\n\n\n@dataclass\nclass User:\n    name: str\n"),
        "show.py": "from models import User\n\n\ndef show(user: User) -> str:\n    return user.name\n",
        "test_show.py": ("from models import User\nfrom show import show\n\n\ndef test_show():\n"
                         "    assert show(User(\"ann\", \"ann@example.com\")) == \"ann <ann@example.com>\"\n"),
    }, "Add an email field (a string) to User in models.py, and make show() in show.py return the name followed "
       "by the email in angle brackets, so test_show.py passes.", _pytest("test_show.py")),
]
