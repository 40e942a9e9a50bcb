"""Skips for want of an extra name it, also where a server's variable is set (tests/extras.py)."""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.extras import import_extra, needs_extra, server_variable
from tests.faults.test_idempotency import _stores

REDIS_REASON = "needs the redis extra: pip install -e '.[redis]'"


@pytest.fixture
def without_redis(monkeypatch: pytest.MonkeyPatch) -> None:
    """``import redis`` fails as where the redis extra is not installed."""
    for name in ("redis", "redis.asyncio"):
        monkeypatch.setitem(sys.modules, name, None)


def test_the_reason_names_the_extra_and_how_to_install_it() -> None:
    assert needs_extra("redis") == REDIS_REASON
    with pytest.raises(pytest.skip.Exception, match="needs the x extra"):
        import_extra("no_such_module_here", "x")
    assert import_extra("json", "x") is sys.modules["json"]


def test_an_unset_variable_is_no_server_whatever_is_installed(
    monkeypatch: pytest.MonkeyPatch, without_redis: None
) -> None:
    monkeypatch.delenv("TOOLRELAY_TEST_REDIS_URL", raising=False)
    assert server_variable("TOOLRELAY_TEST_REDIS_URL", module="redis", extra="redis") is None
    monkeypatch.setenv("TOOLRELAY_TEST_REDIS_URL", "")
    assert server_variable("TOOLRELAY_TEST_REDIS_URL", module="redis", extra="redis") is None


def test_a_server_named_without_its_client_skips_naming_the_extra(
    monkeypatch: pytest.MonkeyPatch, without_redis: None
) -> None:
    monkeypatch.setenv("TOOLRELAY_TEST_REDIS_URL", "redis://127.0.0.1:1/0")
    with pytest.raises(pytest.skip.Exception) as skipped:
        server_variable("TOOLRELAY_TEST_REDIS_URL", module="redis.asyncio", extra="redis")
    assert skipped.value.msg == REDIS_REASON


def test_a_server_named_with_its_client_is_used(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOOLRELAY_TEST_POSTGRES_DSN", "postgresql://db/x")
    dsn = server_variable("TOOLRELAY_TEST_POSTGRES_DSN", module="json", extra="postgres")
    assert dsn == "postgresql://db/x"


async def test_the_idempotency_fault_campaign_skips_before_it_starts(
    monkeypatch: pytest.MonkeyPatch, without_redis: None, tmp_path: Path
) -> None:
    monkeypatch.setenv("TOOLRELAY_TEST_REDIS_URL", "redis://127.0.0.1:1/0")
    with pytest.raises(pytest.skip.Exception) as skipped:
        async with _stores(tmp_path):
            raise AssertionError("no store is made without the redis extra")
    assert skipped.value.msg == REDIS_REASON


# --- every skip for an extra in the suite is worded by needs_extra ---------------------------

TESTS = Path(__file__).resolve().parent
_SKIPS = {"importorskip", "skip", "skipif"}


def _skip_reasons(tree: ast.AST) -> Iterator[tuple[int, str, ast.expr | None]]:
    """Each ``pytest.importorskip``/``skip``/``mark.skipif`` call: its line, name and reason."""
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
            continue
        name = node.func.attr
        if name not in _SKIPS:
            continue
        reason = next((k.value for k in node.keywords if k.arg in ("reason", "msg")), None)
        if reason is None and name == "skip" and node.args:
            reason = node.args[0]
        yield node.lineno, name, reason


def _literal(expr: ast.expr) -> str | None:
    """The text of a string literal (an f-string's fixed parts), or None for anything else."""
    if isinstance(expr, ast.Constant) and isinstance(expr.value, str):
        return expr.value
    if isinstance(expr, ast.JoinedStr):
        return "".join(_literal(v) or "{}" for v in expr.values)
    return None


def test_every_skip_for_an_extra_names_it_with_the_one_install_command() -> None:
    offenders = []
    for path in sorted(TESTS.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for line, name, reason in _skip_reasons(tree):
            where = f"{path.relative_to(TESTS)}:{line}"
            if name == "importorskip" and reason is None:
                offenders.append(f"{where}: importorskip without reason=needs_extra(...)")
                continue
            text = _literal(reason) if reason is not None else None
            if text is not None and ("extra" in text or "toolrelay[" in text):
                offenders.append(f"{where}: {text!r} (word it with needs_extra(EXTRA))")
    assert offenders == []


def test_the_check_finds_a_skip_worded_by_hand() -> None:
    code = (
        'pytest.importorskip("a", reason="needs the a extra: pip install \'toolrelay[a]\'")\n'
        'pytest.importorskip("b")\n'
        'pytest.importorskip("c", reason=needs_extra("c"))\n'
    )
    found = [
        (line, name, _literal(r) if r else None) for line, name, r in _skip_reasons(ast.parse(code))
    ]
    assert found == [
        (1, "importorskip", "needs the a extra: pip install 'toolrelay[a]'"),
        (2, "importorskip", None),
        (3, "importorskip", None),
    ]


def test_readmes_extras_table_lists_every_extra() -> None:
    declared = tomllib.loads((TESTS.parent / "pyproject.toml").read_text(encoding="utf-8"))
    extras = set(declared["project"]["optional-dependencies"])
    readme = (TESTS.parent / "README.md").read_text(encoding="utf-8")
    table = readme.split("## Extras", 1)[1].split("\n## ", 1)[0]
    rows = dict(re.findall(r"^\| `([\w-]+)` \| (.+) \|$", table, flags=re.MULTILINE))
    assert set(rows) == extras
    assert all(len(brings) > 10 for brings in rows.values())  # each says what it is for
