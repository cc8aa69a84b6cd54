"""Cases run on Linux: Chinese-localized tools, GBK, memory checkers, JVM, Ruby, Go, PHP, bats,
parallel and long builds, formatter checks, linters, tox, and queries."""

from __future__ import annotations

from pathlib import Path

from harness import ALL, ZH, ZH_GBK, Run, case, sh, write

# --- C sources shared by several cases -------------------------------------------------------------

STATS_C = r'''
    #include <stdio.h>
    #include <stdlib.h>

    static double mean(const double *v, int n) {
        double s = 0;
        for (int i = 0; i < n; i++) s += v[i];
        return s / n;
    }

    int main(void) {
        setvbuf(stdout, NULL, _IONBF, 0);
        int n = 8;
        double *v = malloc(n * sizeof *v);
        for (int i = 0; i < n; i++) v[i] = 40.0 + i * 2.7;
        for (int round = 0; round < 800; round++)
            printf("round %2d: sample=%d value=%6.2f\n", round, round % n, v[round % n]);
        printf("mean=%6.1f", mean(v, n));
        v[n] = 0.0;  /* one past the end */
        printf("\ndone\n");
        free(v);
        char *leak = malloc(64);
        leak[0] = 'x';
        return 0;
    }
'''

BAD_C = {
    "src/parse.c": '''
        #include <stdio.h>
        #include "parse.h"
        int parse_line(const char *line, struct record *out) {
            int n = sscanf(line, "%d,%d", &out->id, &out->value);
            if (n != 2) return -1
            return 0;
        }
        ''',
    "src/parse.h": '''
        struct record { int id; int value; };
        int parse_line(const char *line, struct record *out);
        ''',
    "src/report.c": '''
        #include <stdio.h>
        #include "parse.h"
        void report(struct record *r, int n) {
            for (int i = 0; i < n; i++) {
                unsigned k = i;
                if (k < n) printf("%d %s\\n", r[i].id, r[i].value);
            }
            totals(r, n);
        }
        ''',
}


def c_files(n: int) -> dict[str, str]:
    files = {f"src/mod{i:02d}.c": f'''
        #include <stdio.h>
        int mod{i:02d}_value(int x) {{
            int acc = {i};
            for (int k = 0; k < x; k++) acc = acc * 31 + k;
            return acc;
        }}
        ''' for i in range(n)}
    files["Makefile"] = "OBJ := $(patsubst src/%.c,build/%.o,$(wildcard src/*.c))\n" \
        "all: build/libmods.a\n" \
        "build/libmods.a: $(OBJ)\n\tar rcs $@ $^\n\t@echo \"built $@ from $(words $^) objects\"\n" \
        "build/%.o: src/%.c | build\n\tgcc -Wall -Wextra -O2 -c $< -o $@\n" \
        "build:\n\tmkdir -p build\n"
    return files


# --- Chinese-localized tools ---------------------------------------------------------------------------

@case("gcc", keep=(r"错误", r"^make: \*\*\*"))
def make_zh_gcc_errors(root: Path) -> Run:
    write(root, BAD_C | {"Makefile": "all: src/parse.o src/report.o\n%.o: %.c\n\tgcc -Wall -Wextra -c $< -o $@\n"})
    return Run("make -k", env=ZH)


@case("gcc", keep=(r"错误", r"^make(\[\d\])?: \*\*\*"))
def make_zh_parallel_interleaved(root: Path) -> Run:
    files = c_files(16)
    files["src/mod03.c"] = files["src/mod03.c"].replace("acc * 31", "acc * missing_factor")
    files["src/mod11.c"] = files["src/mod11.c"].replace("return acc;", "return acc")
    files["src/mod07.c"] = files["src/mod07.c"].replace("int acc", "long acc").replace("return acc;",
                                                                                           "return (int)acc + y;")
    write(root, files)
    return Run("make -j4 -k", env=ZH)


@case("gcc", keep=(r"错误", r"^make: \*\*\*"), encoding="gbk")
def make_gbk_console_errors(root: Path) -> Run:
    write(root, BAD_C | {"Makefile": "all: src/parse.o src/report.o\n%.o: %.c\n\tgcc -Wall -c $< -o $@\n"})
    return Run("make -k", env=ZH_GBK)


@case("make", keep=(r"没有规则",))
def make_zh_missing_target(root: Path) -> Run:
    write(root, {"Makefile": "all: app\napp: main.o util.o\n\tcc -o $@ $^\nmain.o: main.c\n\tcc -c main.c\n",
                 "main.c": "int main(void){return 0;}\n"})
    return Run("make", env=ZH)


@case("git", keep=(r"冲突", r"自动合并失败"))
def git_zh_merge_conflict(root: Path) -> Run:
    sh(root, "git init -q -b main && git config user.email dev@example.org && git config user.name dev")
    for i in range(6):
        (root / f"f{i}.txt").write_text("".join(f"line {k}\n" for k in range(20)))
    sh(root, "git add . && git commit -qm base && git checkout -qb feature")
    for i in (1, 3, 4):
        (root / f"f{i}.txt").write_text("".join(f"feature {k}\n" for k in range(20)))
    (root / "new.txt").write_text("added on feature\n")
    sh(root, "git add . && git commit -qm feature && git checkout -q main")
    for i in (1, 2, 4):
        (root / f"f{i}.txt").write_text("".join(f"main {k}\n" for k in range(20)))
    sh(root, "git commit -qam main")
    return Run("git merge feature", env=ZH)


@case("git", keep=(r"错误", r"\[已拒绝\]|\[rejected\]"))
def git_zh_push_rejected(root: Path) -> Run:
    remote = root.parent / "remote.git"
    sh(root.parent, f"git init -q --bare -b main {remote}")
    sh(root, f"git init -q -b main && git config user.email dev@example.org && git config user.name dev && "
             f"echo a > a.txt && git add . && git commit -qm one && git remote add origin {remote} && "
             f"git push -q origin main && git clone -q {remote} ../other && cd ../other && "
             f"git config user.email dev@example.org && git config user.name dev && echo b > b.txt && git add . && "
             f"git commit -qm two && git push -q origin main")
    sh(root, "echo c > c.txt && git add . && git commit -qm three")
    return Run("git push origin main", env=ZH, scrub=[(str(remote), "/srv/git/proj.git")])


@case("git", keep=(r"错误|致命",))
def git_zh_checkout_pathspec(root: Path) -> Run:
    sh(root, "git init -q -b main && git config user.email dev@example.org && git config user.name dev && "
             "echo a > a.txt && git add . && git commit -qm one")
    return Run("git checkout relese-1.2 && git log --oneline -1", env=ZH)


@case("bash", keep=(r"未找到命令|没有那个文件或目录|权限不够|语法错误",), last=True)
def bash_zh_deploy_script(root: Path) -> Run:
    steps = "\n".join(f'echo "[{k:03d}/800] 同步 assets/part{k:03d}.bin ... 完成"' for k in range(800))
    write(root, {"deploy.sh": f'''
        #!/bin/bash
        echo "开始部署 (target=staging)"
        {steps}
        cp config/prod.env /srv/app/.env
        rsyncx -a build/ /srv/app/
        touch /proc/version.lock
        echo "部署脚本结束"
        '''})
    return Run("bash deploy.sh", env=ZH)


@case("apt-get", keep=(r"^E: ",))
def apt_zh_unknown_package(root: Path) -> Run:
    return Run("apt-get install -y --no-download libfoo-nonexistent-dev python3-yaml", env=ZH)


@case("python3", keep=(r"Error|Traceback|File \"/home/user/proj/app", r"^\s*return json|^\s*data = load",
                        r"decoder\.py\", line \d+, in raw_decode"))
def python_zh_log_traceback(root: Path) -> Run:
    write(root, {"app.py": '''
        import json, logging
        logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
        log = logging.getLogger("导入")

        def load(path):
            with open(path, encoding="utf-8") as f:
                return json.load(f)

        def main():
            for i in range(400):
                log.info("处理订单 %d：客户 张三%d，金额 %d 元", i, i, i * 17)
            log.warning("配置项 retry 未设置，使用默认值 3")
            data = load("订单.json")
            log.info("共 %d 条", len(data))

        main()
        ''', "订单.json": '{"订单": [1, 2,, 3]}\n'})
    return Run("python3 app.py", env=ZH)


# --- memory checkers ---------------------------------------------------------------------------------

@case("valgrind", keep=(r"Invalid write", r"is \d+ bytes after a block", r"(at|by) 0x[0-9A-F]+: main \(stats\.c",
                        r"definitely lost in loss", r"definitely lost: [1-9]", r"ERROR SUMMARY"))
def valgrind_glued_invalid_write(root: Path) -> Run:
    write(root, {"stats.c": STATS_C})
    sh(root, "gcc -g -O0 -o stats stats.c")
    return Run("valgrind --leak-check=full ./stats")


@case("valgrind", keep=(r"definitely lost in", r"(at|by) 0x[0-9A-F]+: (make_node|main) \(tree\.c", r"definitely lost:",
                        r"ERROR SUMMARY"))
def valgrind_leak_report(root: Path) -> Run:
    write(root, {"tree.c": r'''
        #include <stdlib.h>
        #include <stdio.h>
        struct node { int v; struct node *l, *r; };
        static struct node *make_node(int v) { struct node *n = calloc(1, sizeof *n); n->v = v; return n; }
        static struct node *insert(struct node *t, int v) {
            if (!t) return make_node(v);
            if (v < t->v) t->l = insert(t->l, v); else t->r = insert(t->r, v);
            return t;
        }
        int main(void) {
            struct node *t = NULL;
            for (int i = 0; i < 200; i++) t = insert(t, (i * 7919) % 1000);
            printf("root=%d\n", t->v);
            t->l = NULL;  /* drops the left subtree */
            free(t);
            return 0;
        }
        '''})
    sh(root, "gcc -g -O0 -o tree tree.c")
    return Run("valgrind --leak-check=full ./tree")


@case("gcc", keep=(r"ERROR: AddressSanitizer", r"WRITE of size", r"is located \d+ bytes", r"allocated by thread",
                   r"#\d+ 0x[0-9a-f]+ in main /home", r"SUMMARY: AddressSanitizer"))
def asan_heap_overflow_glued(root: Path) -> Run:
    write(root, {"stats.c": STATS_C})
    sh(root, "gcc -g -O0 -fsanitize=address -o stats stats.c")
    return Run("./stats", env={"ASAN_OPTIONS": "detect_leaks=0"})


@case("gcc", keep=(r"ERROR: AddressSanitizer", r"READ of size", r"freed by thread", r"previously allocated by",
                   r"is located \d+ bytes", r"#\d+ 0x[0-9a-f]+ in (lookup|drop_session|open_session|main) /home",
                   r"SUMMARY: AddressSanitizer"))
def asan_use_after_free(root: Path) -> Run:
    write(root, {"sess.c": r'''
        #include <stdio.h>
        #include <stdlib.h>
        #include <string.h>
        struct session { char user[32]; int hits; };
        static struct session *open_session(const char *u) {
            struct session *s = malloc(sizeof *s); strcpy(s->user, u); s->hits = 0; return s; }
        static void drop_session(struct session *s) { free(s); }
        static int lookup(struct session *s) { return s->hits; }
        int main(void) {
            struct session *s = open_session("alice");
            for (int i = 0; i < 20; i++) { s->hits++; printf("request %d from %s\n", i, s->user); }
            drop_session(s);
            printf("hits after close: %d\n", lookup(s));
            return 0;
        }
        '''})
    sh(root, "gcc -g -O0 -fsanitize=address -o sess sess.c")
    return Run("./sess")


# --- JVM -------------------------------------------------------------------------------------------------

def _java_module(k: int) -> str:
    """A class with raw types and an unchecked call: two -Xlint warnings each."""
    return f'''
        package shop.m{k:02d};
        import java.util.*;
        public class Part{k:02d} {{
            public List items() {{ List xs = new ArrayList(); xs.add("p{k}"); return xs; }}
            public int size() {{ return items().size(); }}
        }}
        '''


@case("javac", keep=(r"error:", r"^\d+ errors?$", r"^\d+ warnings?$"))
def javac_find_substitution(root: Path) -> Run:
    files = {f"src/shop/m{k:02d}/Part{k:02d}.java": _java_module(k) for k in range(40)}
    files["src/shop/Order.java"] = '''
        package shop;
        import java.util.List;
        public class Order {
            private final List<String> lines;
            public Order(List<String> lines) { this.lines = lines; }
            public int count() { return lines.size(); }
            public String first() { return lines.get(0).trim(); }
            public long total() { return lines.stream().mapToLong(Order::price).sum(); }
            public String label() { return customer.name() + ": " + count(); }
            public int weight() { return count() * unitWeight; }
        }
        '''
    files["src/shop/Invoice.java"] = '''
        package shop;
        public class Invoice {
            public String render(Order order) { return "Invoice " + order.count() + renderLines(order); }
        }
        '''
    write(root, files)
    return Run("javac -Xlint:all -d build $(find src -name '*.java' | sort)")


@case("prove", keep=(r"^not ok", r"^#\s+Failed test", r"^#\s+at ", r"^#\s+(got|expected):", r"^Failed \d+/\d+",
                     r"^Files=", r"^Result:", r"Dubious"))
def prove_tap_failures(root: Path) -> Run:
    checks = "\n".join(f"is(slug('Title {i}'), 'title-{i}', 'slug {i}');" for i in range(400))
    write(root, {
        "lib/Slug.pm": '''
            package Slug;
            use Exporter 'import';
            our @EXPORT = ('slug');
            sub slug { my $s = lc shift; $s =~ s/[^a-z0-9]+/-/g; $s =~ s/^-|-$//g; return $s }
            1;
            ''',
        "t/slug.t": f'''
            use strict; use warnings;
            use Test::More tests => 403;
            use lib 'lib'; use Slug;
            {checks}
            is(slug('Crème brûlée'), 'creme-brulee', 'slug folds accents');
            is(slug('  '), undef, 'slug of blanks is undef');
            is_deeply([map {{ slug($_) }} ('A b', 'C')], ['a-b', 'c '], 'slug of a list');
            ''',
        "t/count.t": '''
            use Test::More tests => 2;
            ok(1, 'loads');
            ok(1, 'counts');
            ''',
    })
    return Run("prove -v -l t/")


@case("apt-get", keep=(r"个软件包", r"^E: "))
def apt_zh_install_summary(root: Path) -> Run:
    return Run("apt-get install -s -y cowsay fortune-mod sl", env=ZH)


@case("javac", keep=(r"error:", r"^\d+ errors?$"))
def javac_errors(root: Path) -> Run:
    write(root, {
        "src/shop/Cart.java": '''
            package shop;
            import java.util.List;
            import java.util.ArrayList;
            public class Cart {
                private final List<Item> items = new ArrayList<>();
                public void add(Item item) { items.add(item); }
                public int total() {
                    int sum = 0;
                    for (Item i : items) sum += i.price * i.qty;
                    return sum;
                }
                public List raw() { return new ArrayList(items); }
                public String label() { return items.size() + " items"; }
                public long weight() { return items.stream().mapToLong(Item::weight).sum(); }
            }
            ''',
        "src/shop/Item.java": '''
            package shop;
            public class Item {
                final int price; final int qty;
                public Item(int price, int qty) { this.price = price; this.qty = qty; }
                public String name() { return nam; }
            }
            ''',
        "src/shop/Main.java": '''
            package shop;
            public class Main {
                public static void main(String[] args) {
                    Cart c = new Cart();
                    c.add(new Item(3, "2"));
                    System.out.println(c.totl());
                }
            }
            ''',
    })
    return Run("javac -Xlint:all -d out src/shop/*.java")


@case("java", keep=(r"Exception", r"^\s*at shop\.(Inventory|Main)\.", r"^Caused by"))
def java_exception_caused_by(root: Path) -> Run:
    write(root, {"src/shop/Main.java": '''
        package shop;
        import java.util.*;
        class Inventory {
            private final Map<String, Integer> stock = new HashMap<>();
            Inventory() { for (int i = 0; i < 1500; i++) stock.put("sku-" + i, i); }
            int reserve(String sku, int n) {
                Integer have = stock.get(sku);
                try {
                    return Math.subtractExact(have, n);
                } catch (NullPointerException e) {
                    throw new IllegalStateException("unknown sku " + sku, e);
                }
            }
        }
        public class Main {
            public static void main(String[] args) {
                Inventory inv = new Inventory();
                List<String> order = new ArrayList<>();
                for (int i = 0; i < 1500; i++) order.add("sku-" + i);
                order.add("sku-unknown");
                for (String s : order) System.out.println("reserved " + s + " -> " + inv.reserve(s, 1));
            }
        }
        '''})
    sh(root, "javac -d out src/shop/Main.java")
    return Run("java -cp out shop.Main")


# --- Ruby --------------------------------------------------------------------------------------------------

@case("ruby", keep=(r"^\s*\d+\) (Failure|Error):", r"^Expected|^\s*Actual|NoMethodError|^PriceTest#\w+( \[|:$)",
                    r"test/\w+\.rb:\d+:in",
                    r"^\d+ runs, "))
def ruby_minitest_failures(root: Path) -> Run:
    tests = "\n".join(f"  def test_price_{i}\n    assert_equal {i * 3}, Price.new({i}).triple\n  end\n"
                      for i in range(800))
    write(root, {
        "lib/price.rb": '''
            class Price
              def initialize(cents) = @cents = cents
              def triple = @cents * 3
              def with_tax = (@cents * 1.2).round
              def discounted(pct) = @cents - @cents * pct / 100
            end
            ''',
        "test/test_price.rb": 'require "minitest/autorun"\nrequire_relative "../lib/price"\n'
                              "class PriceTest < Minitest::Test\n" + tests + '''
  def test_with_tax
    assert_equal 120, Price.new(101).with_tax
  end

  def test_discount
    assert_equal 90, Price.new(100).discount(10)
  end
end
''',
    })
    return Run("ruby -Ilib test/test_price.rb --seed 4242 --verbose")


@case("ruby", keep=(r"Error\)|\(\w+Error\)", r"^/home/user/proj/(app|lib)/.*:\d+:in"))
def ruby_nomethod_traceback(root: Path) -> Run:
    write(root, {
        "lib/config_loader.rb": '''
            require "yaml"
            module ConfigLoader
              def self.load(path)
                data = YAML.safe_load(File.read(path))
                data.fetch("database").fetch("pool")
              end
            end
            ''',
        "app/main.rb": '''
            require_relative "../lib/config_loader"
            20.times { |i| puts "warming cache shard #{i}" }
            pool = ConfigLoader.load(File.join(__dir__, "config.yml"))
            puts "pool=#{pool.upcase}"
            ''',
        "app/config.yml": "database:\n  pool: 5\n",
    })
    return Run("ruby app/main.rb")


@case("ruby", keep=(r"syntax error", r"^app/\w+\.rb:\d+:"))
def ruby_syntax_check(root: Path) -> Run:
    write(root, {"app/router.rb": '''
        class Router
          def route(path)
            case path
            when "/" then :home
            when %r{^/users/(\\d+)} then [:user, $1.to_i
            else :not_found
            end
          end
        end
        '''})
    return Run("ruby -wc app/router.rb")


# --- Go ----------------------------------------------------------------------------------------------------

GO_ENV = {"GOFLAGS": "-mod=mod", "GO111MODULE": "on", "GOPROXY": "off", "GOTOOLCHAIN": "local"}


def go_project(root: Path, files: dict[str, str]) -> dict[str, str]:
    write(root, {"go.mod": "module example.org/inventory\n\ngo 1.19\n", **files})
    cache = root.parent / f"{root.name}-gocache"
    return {**GO_ENV, "GOCACHE": str(cache), "GOPATH": str(root.parent / f"{root.name}-gopath")}


@case("go", keep=(r"--- FAIL", r"_test\.go:\d+:", r"^FAIL\s", r"^ok\s"))
def go_test_verbose_failures(root: Path) -> Run:
    tests = "\n".join(f'''
func TestSku{i}(t *testing.T) {{
\tif got := Normalize(" SKU-{i} "); got != "sku-{i}" {{
\t\tt.Fatalf("Normalize = %q", got)
\t}}
}}''' for i in range(1000))
    env = go_project(root, {
        "stock/stock.go": '''
            package stock

            import "strings"

            func Normalize(s string) string { return strings.ToLower(strings.TrimSpace(s)) }

            func Reserve(have, want int) int {
            \tif want > have {
            \t\treturn have
            \t}
            \treturn have - want
            }
            ''',
        "stock/stock_test.go": 'package stock\n\nimport "testing"\n' + tests + '''

func TestReserveTooMany(t *testing.T) {
\tif got := Reserve(2, 5); got != 0 {
\t\tt.Errorf("Reserve(2, 5) = %d, want 0", got)
\t}
}

func TestReserveTable(t *testing.T) {
\tfor _, c := range []struct{ have, want, left int }{{5, 1, 4}, {3, 3, 0}, {1, 2, -1}} {
\t\tt.Run("", func(t *testing.T) {
\t\t\tif got := Reserve(c.have, c.want); got != c.left {
\t\t\t\tt.Errorf("Reserve(%d, %d) = %d, want %d", c.have, c.want, got, c.left)
\t\t\t}
\t\t})
\t}
}
''',
        "report/report.go": "package report\n\nfunc Title() string { return \"Inventory\" }\n",
        "report/report_test.go": 'package report\n\nimport "testing"\n\nfunc TestTitle(t *testing.T) {\n'
                                 '\tif Title() == "" {\n\t\tt.Fatal("empty")\n\t}\n}\n',
    })
    return Run("go test -v ./...", env=env)


@case("go", keep=(r"^panic:", r"^goroutine \d+ \[running\]", r"stock(_test)?\.go:\d+", r"^FAIL\s"))
def go_test_panic(root: Path) -> Run:
    env = go_project(root, {
        "stock/stock.go": '''
            package stock

            type Shelf struct{ slots []int }

            func NewShelf(n int) *Shelf { return &Shelf{slots: make([]int, n)} }

            func (s *Shelf) Put(i, v int) { s.slots[i] = v }
            ''',
        "stock/stock_test.go": '''
            package stock

            import "testing"

            func TestFill(t *testing.T) {
            \ts := NewShelf(4)
            \tfor i := 0; i <= 4; i++ {
            \t\ts.Put(i, i*10)
            \t}
            }
            ''',
    })
    return Run("go test ./...", env=env)


@case("go", keep=(r"\.go:\d+:\d+: ", r"^# "))
def go_build_type_errors(root: Path) -> Run:
    env = go_project(root, {
        "main.go": '''
            package main

            import (
            \t"fmt"
            \t"os"
            \t"strconv"
            )

            type Order struct {
            \tID    int
            \tTotal float64
            }

            func parse(args []string) []Order {
            \tvar out []Order
            \tfor i, a := range args {
            \t\tn, err := strconv.Atoi(a)
            \t\tout = append(out, Order{ID: i, Total: n})
            \t}
            \treturn out
            }

            func main() {
            \torders := parse(os.Args[1:])
            \tfmt.Println(len(orders), orders.Total)
            \tvar count int = "3"
            }
            ''',
    })
    return Run("go build ./...", env=env)


@case("go", keep=(r"\.go:\d+:\d+: ", r"^# "))
def go_vet_findings(root: Path) -> Run:
    body = "\n".join(f'\tfmt.Printf("order %d total %d\\n", {i}, "x{i}")' for i in range(12))
    env = go_project(root, {"main.go": f'''
package main

import (
\t"fmt"
\t"sync"
)

type counter struct {{
\tmu sync.Mutex
\tn  int
}}

func show(c counter) {{ fmt.Println(c.n) }}

func main() {{
{body}
\tvar c counter
\tshow(c)
\tfmt.Println("done %d", 3)
}}
'''})
    return Run("go vet ./...", env=env)


@case("gofmt", keep=(r"^diff ", r"^[-+](?![-+])"))
def gofmt_diff(root: Path) -> Run:
    write(root, {
        "a/util.go": "package a\nimport \"strings\"\nfunc Clean(s string) string {\nreturn strings.TrimSpace( s )\n}\n",
        "a/ok.go": "package a\n\nfunc One() int { return 1 }\n",
        "b/calc.go": "package b\n\nfunc Add(x int,y int) int {\n\tif x>0 {return x+y}\n\treturn y\n}\n",
    })
    return Run("gofmt -d .")


# --- PHP ---------------------------------------------------------------------------------------------------

@case("php", keep=(r"Fatal error|Uncaught|Stack trace|^#0 |^\s*thrown in",))
def php_uncaught_exception(root: Path) -> Run:
    write(root, {
        "src/Invoice.php": '''
            <?php
            class Invoice {
                public function __construct(private array $lines) {}
                public function total(): float {
                    $sum = 0;
                    foreach ($this->lines as $l) { $sum += $l['qty'] * $l['price']; }
                    if ($sum <= 0) { throw new DomainException("invoice total must be positive, got $sum"); }
                    return $sum;
                }
            }
            ''',
        "bin/run.php": '''
            <?php
            require __DIR__ . '/../src/Invoice.php';
            for ($i = 0; $i < 1500; $i++) { echo "loaded customer $i\\n"; }
            $inv = new Invoice([['qty' => 0, 'price' => 9.5], ['qty' => 2]]);
            echo $inv->total(), "\\n";
            ''',
    })
    return Run("php bin/run.php")


@case("php", keep=(r"PHP Parse error|Errors parsing",))
def php_lint_tree(root: Path) -> Run:
    files = {f"src/Model{i}.php": f"<?php\nclass Model{i} {{\n    public function id(): int {{ return {i}; }}\n}}\n"
             for i in range(24)}
    files["src/Model7.php"] = "<?php\nclass Model7 {\n    public function id(): int { return 7 }\n}\n"
    files["src/Model19.php"] = "<?php\nclass Model19 {\n    public function id(): int { return [19; }\n}\n"
    write(root, files)
    return Run("for f in src/*.php; do php -l \"$f\" || status=1; done; exit ${status:-0}",
               shown="for f in src/*.php; do php -l \"$f\" || status=1; done")


# --- shell test framework ------------------------------------------------------------------------------------

@case("bats", keep=(r"^not ok", r"^# \(in test file", r"^#\s+`", r"^# (expected|actual|status)", r"^1\.\.\d+"))
def bats_failures(root: Path) -> Run:
    tests = "\n".join(f'@test "slug {i}" {{\n  run ./slug.sh "Title {i}"\n  [ "$output" = "title-{i}" ]\n}}\n'
                      for i in range(600))
    write(root, {
        "slug.sh": '#!/bin/bash\necho "$1" | tr "[:upper:] " "[:lower:]-"\n',
        "test/slug.bats": tests + '''
@test "slug strips punctuation" {
  run ./slug.sh "Hello, World!"
  echo "# expected: hello-world" >&3
  [ "$output" = "hello-world" ]
}

@test "slug rejects empty input" {
  run ./slug.sh ""
  [ "$status" -eq 1 ]
}
''',
    })
    sh(root, "chmod +x slug.sh")
    return Run("bats --tap test/")


# --- builds ------------------------------------------------------------------------------------------------------

@case("make", keep=(r"^built ",))
def make_long_success(root: Path) -> Run:
    write(root, c_files(600))
    return Run("make -j2")


@case("gcc", keep=(r"error:", r"^make(\[\d\])?: \*\*\*.*Error"))
def make_parallel_interleaved_errors(root: Path) -> Run:
    files = c_files(150)
    files["src/mod05.c"] = files["src/mod05.c"].replace("int acc", "int acc = undefined_seed +")
    files["src/mod21.c"] = "#include \"missing_header.h\"\n" + files["src/mod21.c"]
    files["src/mod33.c"] = files["src/mod33.c"].replace("return acc;", "return acc")
    write(root, files)
    return Run("make -j4 -k")


# --- formatter checks ----------------------------------------------------------------------------------------------

@case("black", keep=(r"^would reformat", r"^--- |^\+\+\+ ", r"^[-+](?![-+])", r"would be reformatted"))
def black_check_diff(root: Path) -> Run:
    files = {f"pkg/ok{i}.py": f'"""Module {i}."""\n\n\ndef value() -> int:\n    return {i}\n' for i in range(20)}
    files["pkg/messy.py"] = "import os,sys\ndef f( a,b ):\n  return {'a':a,'b':b}\nx=[1,2,\n3]\n"
    files["pkg/quotes.py"] = "name = 'world'\nprint( 'hello %s' % name )\n"
    write(root, files)
    return Run("black --check --diff pkg", env={"BLACK_CACHE_DIR": str(root.parent / "black-cache")})


@case("rustfmt", keep=(r"^Diff in ", r"^[-+](?![-+])"))
def rustfmt_check(root: Path) -> Run:
    write(root, {
        "src/main.rs": "mod calc;\nfn main(){ let x=calc::add(1,2); println!(\"{}\",x); }\n",
        "src/calc.rs": "pub fn add(a:i32,b:i32)->i32{a+b}\n\npub fn mul(a: i32, b: i32) -> i32 {\n    a * b\n}\n",
    })
    return Run("rustfmt --check --edition 2021 src/main.rs")


@case("clang-format", keep=(r"error: code should be clang-formatted",))
def clang_format_dry_run(root: Path) -> Run:
    write(root, {"src/ring.c": '''
        #include <stdlib.h>
        struct ring {int *buf; int head,tail,cap;};
        struct ring *ring_new(int cap){struct ring *r=malloc(sizeof *r);r->buf=calloc(cap,sizeof(int));r->cap=cap;r->head=r->tail=0;return r;}
        int ring_push(struct ring *r,int v){ if((r->tail+1)%r->cap==r->head) return -1; r->buf[r->tail]=v; r->tail=(r->tail+1)%r->cap; return 0;}
        ''', "src/ok.c": "int ok(void) { return 1; }\n"})
    return Run("clang-format --dry-run -Werror --style=LLVM src/*.c")


# --- linters with many findings ---------------------------------------------------------------------------------------

@case("shellcheck", keep=(r"\(error\)",), heading=r"^In \S+ line \d+:$")
def shellcheck_many_findings(root: Path) -> Run:
    lines = "\n".join(f"cp $SRC/file{i}.txt $DEST/\necho Copied file{i} to $DEST" for i in range(60))
    write(root, {"scripts/sync.sh": f'''
        #!/bin/bash
        SRC=$1
        DEST=$2
        {lines}
        if [ $MODE == "fast" ]
        then
          for f in `ls $SRC`; do cat $f | grep -v '^#' > $DEST/$f; done
        fi
        [[ -z $DEST ] && exit 1
        '''})
    return Run("shellcheck scripts/sync.sh")


# --- multi-environment runner ----------------------------------------------------------------------------------------

@case("tox", keep=(r"^FAIL:|^ERROR:", r"AssertionError", r'File "/home/user/proj/tests/test_edge', r"^FAILED \(",
                   r"\w+: commands (succeeded|failed)"))
def tox_envs_one_failing(root: Path) -> Run:
    tests = "\n".join(f"    def test_round_{i}(self):\n        self.assertEqual(fee({i * 10}), {i})\n" for i in range(600))
    write(root, {
        "tox.ini": '''
            [tox]
            envlist = unit, edge, style
            skipsdist = true

            [testenv]
            set_env = PYTHONDONTWRITEBYTECODE = 1

            [testenv:unit]
            commands = python -m unittest discover -s tests -p "test_fee.py" -v

            [testenv:edge]
            commands = python -m unittest discover -s tests -p "test_edge.py" -v

            [testenv:style]
            commands = python -m compileall -q fees.py
            ''',
        "fees.py": "def fee(cents):\n    return cents // 10\n",
        "tests/test_fee.py": "import unittest\nfrom fees import fee\n\n\nclass Fee(unittest.TestCase):\n" + tests,
        "tests/test_edge.py": '''
            import unittest
            from fees import fee


            class Edge(unittest.TestCase):
                def test_rounds_up(self):
                    self.assertEqual(fee(15), 2)

                def test_zero(self):
                    self.assertEqual(fee(0), 0)
            ''',
    })
    return Run("tox")


# --- queries: the output is the answer ---------------------------------------------------------------------------------

@case("grep", keep=ALL)
def grep_query_todos(root: Path) -> Run:
    write(root, {f"src/m{i}.py": "".join(f"def f{k}():\n    # TODO: handle case {k} in module {i}\n    return {k}\n"
                                         if k % 3 == 0 else f"def f{k}():\n    return {k}\n" for k in range(9))
                 for i in range(6)})
    return Run("grep -rn TODO src | sort")


@case("git", keep=ALL)
def git_branch_query(root: Path) -> Run:
    sh(root, "git init -q -b main && git config user.email dev@example.org && git config user.name dev && "
             "echo a > a.txt && git add . && git commit -qm 'Initial import' && "
             "for b in feature/login feature/cart fix/rounding release/1.2 release/1.3; do "
             "git branch $b; done && git checkout -q fix/rounding && echo b >> a.txt && git commit -qam 'Round half up'")
    return Run("git branch -vv")


@case("cat", keep=ALL)
def cat_config_query(root: Path) -> Run:
    write(root, {"config/app.toml": '''
        [server]
        host = "127.0.0.1"
        port = 8080
        workers = 4

        [database]
        url = "postgres://app@localhost/app"
        pool = 10
        timeout_ms = 2500

        [logging]
        level = "info"
        format = "json"
        # 错误日志单独输出
        error_file = "logs/error.log"
        '''})
    return Run("cat config/app.toml")


@case("git", keep=(r"^[0-9a-f]{7} ",))
def git_log_oneline_query(root: Path) -> Run:
    sh(root, "git init -q -b main && git config user.email dev@example.org && git config user.name dev && "
             "for i in $(seq 1 30); do echo $i > f.txt; git add f.txt; "
             "git commit -qm \"Step $i: adjust rounding of fee table ($i)\"; done")
    return Run("git log --oneline -n 12")


@case("ls", keep=ALL)
def ls_long_query(root: Path) -> Run:
    write(root, {f"migrations/{i:04d}_step.sql": f"-- step {i}\n" * (i + 1) for i in range(14)})
    sh(root, "touch -d '2026-11-02 10:00' migrations/*")
    return Run("ls -l migrations", env={"TZ": "UTC"})


@case("python3", keep=(r"^\{|^\s*\"",))
def python_json_query(root: Path) -> Run:
    return Run("python3 -c \"import json,sys; print(json.dumps({'python': sys.version.split()[0], "
               "'paths': ['src', 'tests'], 'ok': True, '说明': '查询结果'}, indent=2, ensure_ascii=False))\"")
