"""The registry: every family, and the choice of one for an output."""

from __future__ import annotations

from core.prune.families import (
    c_build,
    formatter,
    generic,
    git_diff,
    git_log,
    git_status,
    go_test,
    js_bundler,
    js_eslint,
    js_tests,
    js_tsc,
    listing,
    memcheck,
    multienv,
    packages,
    py_crash,
    py_pytest,
    py_unittest,
    rust_cargo,
)
from core.prune.families.base import Family
from core.prune.output import Output

# Order breaks ties: earlier families win an equal score.
FAMILIES: tuple[Family, ...] = (
    multienv.FAMILY,
    formatter.FAMILY,
    py_pytest.FAMILY,
    py_unittest.FAMILY,
    js_tests.FAMILY,
    js_tsc.FAMILY,
    js_eslint.FAMILY,
    js_bundler.FAMILY,
    rust_cargo.FAMILY,
    go_test.FAMILY,
    memcheck.FAMILY,
    c_build.FAMILY,
    git_diff.FAMILY,
    git_status.FAMILY,
    git_log.FAMILY,
    packages.FAMILY,
    listing.FAMILY,
    py_crash.FAMILY,
)


def pick(out: Output) -> Family:
    """The family with the highest detection score; the generic rules when none claims the output."""
    best, best_score = generic.FAMILY, 0
    for family in FAMILIES:
        score = family.detect(out)
        if score > best_score:
            best, best_score = family, score
    return best
