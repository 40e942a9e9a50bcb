"""Which tests may skip where every extra is installed and every server runs.

A test skips when an extra, a server or a provider key it needs is missing. CI installs every
extra and starts every server (``.ci/run``), so there the only skips allowed are those of
tests that call a provider with an API key: such a test is marked
``@pytest.mark.needs_key("OPENAI_API_KEY")`` with a key from :data:`PROVIDER_KEYS` (the docs
test marks the page blocks that do). ``pytest --no-skips`` fails the run when any other test
or module skips, and lists them with their reasons.

A test that needs an extra skips naming it, with the command that installs it
(``tests/extras.py``), and so does a test whose server is named in an environment variable
while the server's client package is missing.
"""

from __future__ import annotations

from collections.abc import Generator

import pytest

PROVIDER_KEYS = frozenset({"OPENAI_API_KEY", "ANTHROPIC_API_KEY"})
"""The API keys of the model providers; tests needing one are the only ones allowed to skip."""


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--no-skips",
        action="store_true",
        help="fail the run if a test skips for any reason but a missing provider key "
        "(every extra installed, every server running: .ci/run)",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "needs_key(name): the test calls a provider with the API key in environment "
        "variable NAME (one of tests/skip_policy.py's PROVIDER_KEYS); the only tests "
        "allowed to skip under --no-skips",
    )
    if config.option.no_skips:
        config.pluginmanager.register(NoSkips(), "no-skips")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        for marker in item.iter_markers("needs_key"):
            if len(marker.args) != 1 or marker.args[0] not in PROVIDER_KEYS:
                raise pytest.UsageError(
                    f"{item.nodeid}: needs_key takes one of {sorted(PROVIDER_KEYS)}, got "
                    f"{marker.args!r}; a new provider's key goes into PROVIDER_KEYS "
                    "(tests/skip_policy.py)"
                )


class NoSkips:
    """Records every skip not allowed under ``--no-skips``, and fails the run if any."""

    def __init__(self) -> None:
        self.skipped: list[str] = []

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.skipped:  # a whole module needs an extra or a server, never only a key
            self.skipped.append(f"{report.nodeid}: {_reason(report)}")

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(
        self, item: pytest.Item
    ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
        report: pytest.TestReport = yield
        allowed = item.get_closest_marker("needs_key") is not None
        if report.skipped and not hasattr(report, "wasxfail") and not allowed:
            self.skipped.append(f"{report.nodeid}: {_reason(report)}")
        return report

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        if self.skipped and session.exitstatus in (
            pytest.ExitCode.OK,
            pytest.ExitCode.NO_TESTS_COLLECTED,
        ):
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        if not self.skipped:
            return
        terminalreporter.section("skips not allowed (--no-skips)", sep="=", red=True)
        for line in self.skipped:
            terminalreporter.line(line)
        terminalreporter.line(
            f"{len(self.skipped)} skipped; where every extra is installed and every server "
            "runs (.ci/run), only tests marked needs_key (a provider key) may skip"
        )


def _reason(report: pytest.CollectReport | pytest.TestReport) -> str:
    # A skip's longrepr is (path, line, "Skipped: reason").
    if isinstance(report.longrepr, tuple):
        return str(report.longrepr[2]).removeprefix("Skipped: ")
    return str(report.longrepr)
