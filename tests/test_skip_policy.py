"""``--no-skips``: only tests marked needs_key may skip; any other skip fails the run."""

from __future__ import annotations

import pytest

from tests.skip_policy import PROVIDER_KEYS

SKIPS = """
import pytest

def test_runs():
    assert True

def test_needs_an_extra():
    pytest.importorskip("no_such_extra_here", reason="needs the x extra")

@pytest.mark.needs_key("OPENAI_API_KEY")
def test_calls_a_provider():
    pytest.skip("needs OPENAI_API_KEY")

@pytest.mark.xfail(reason="a known bug", strict=True)
def test_known_bug():
    raise AssertionError
"""


def run(pytester: pytest.Pytester, *args: str, **modules: str) -> pytest.RunResult:
    pytester.makeconftest('pytest_plugins = ["tests.skip_policy"]')
    pytester.makepyfile(**modules)
    return pytester.runpytest_inprocess("-p", "no:cacheprovider", "-p", "no:asyncio", *args)


def test_without_the_option_skips_pass(pytester: pytest.Pytester) -> None:
    result = run(pytester, test_sample=SKIPS)
    result.assert_outcomes(passed=1, skipped=2, xfailed=1)
    assert result.ret == pytest.ExitCode.OK
    assert "skips not allowed" not in result.stdout.str()


def test_a_skip_for_a_missing_extra_fails_the_run(pytester: pytest.Pytester) -> None:
    result = run(pytester, "--no-skips", test_sample=SKIPS)
    result.assert_outcomes(passed=1, skipped=2, xfailed=1)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(
        [
            "*= skips not allowed (--no-skips) =*",
            "test_sample.py::test_needs_an_extra: needs the x extra",
            "1 skipped; where every extra is installed*",
        ]
    )
    assert "test_calls_a_provider:" not in result.stdout.str()  # marked needs_key
    assert "test_known_bug:" not in result.stdout.str()  # an xfail is no skip


def test_a_module_skipped_at_collection_fails_the_run(pytester: pytest.Pytester) -> None:
    module = 'import pytest\npytest.importorskip("no_such_sdk", reason="needs the y extra")\n'
    result = run(pytester, "--no-skips", test_whole=module, test_other="def test_ok(): pass\n")
    result.assert_outcomes(passed=1, skipped=1)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["test_whole.py: needs the y extra"])


def test_only_key_skips_pass(pytester: pytest.Pytester) -> None:
    only_keys = """
import pytest

@pytest.mark.needs_key("ANTHROPIC_API_KEY")
def test_calls_a_provider():
    pytest.skip("needs ANTHROPIC_API_KEY")
"""
    result = run(pytester, "--no-skips", test_keys=only_keys)
    result.assert_outcomes(skipped=1)
    assert result.ret == pytest.ExitCode.OK


def test_a_failure_stays_a_failure(pytester: pytest.Pytester) -> None:
    result = run(pytester, "--no-skips", test_fails="def test_bad():\n    assert False\n")
    result.assert_outcomes(failed=1)
    assert result.ret == pytest.ExitCode.TESTS_FAILED


def test_needs_key_names_a_provider_key(pytester: pytest.Pytester) -> None:
    odd = """
import pytest

@pytest.mark.needs_key("GITHUB_TOKEN")
def test_x():
    pass
"""
    result = run(pytester, test_odd=odd)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*needs_key takes one of*GITHUB_TOKEN*PROVIDER_KEYS*"])
    assert {"OPENAI_API_KEY", "ANTHROPIC_API_KEY"} <= PROVIDER_KEYS
