""".ci/readme_setup.py: README's set-up commands, read from the page and run as written."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / ".ci" / "readme_setup.py"

_spec = importlib.util.spec_from_file_location("readme_setup", SCRIPT)
assert _spec is not None
assert _spec.loader is not None
readme_setup = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(readme_setup)


def page(*blocks: str, before: str = "", after: str = "") -> str:
    fenced = "\n\n".join(f"```bash\n{block}\n```" for block in blocks)
    return f"# project\n\n{before}## Set up\n\nInstall:\n\n{fenced}\n\n{after}"


def run_script(tmp_path: Path, markdown: str, *, env: dict[str, str] | None = None) -> Any:
    readme = tmp_path / "README.md"
    readme.write_text(markdown, encoding="utf-8")
    workdir = tmp_path / "work"
    workdir.mkdir(exist_ok=True)
    return subprocess.run(
        [sys.executable, str(SCRIPT), str(readme), str(workdir)],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )


def test_the_readme_has_its_two_commands() -> None:
    install, tests = readme_setup.setup_commands((ROOT / "README.md").read_text(encoding="utf-8"))
    assert install.startswith("python3 -m venv .venv && ")
    assert ".venv/bin/pip install -e '.[dev]'" in install
    assert install.endswith(".venv/bin/toolrelay demo")
    assert tests == ".venv/bin/python -m pytest"


def test_only_the_bash_blocks_of_the_set_up_section() -> None:
    markdown = page(
        "echo one",
        "echo two\necho three",
        before="## Other\n\n```bash\necho before\n```\n\n",
        after="```python\nprint('no')\n```\n\n### Details\n\n```sh\necho four\n```\n\n"
        "## Quick start\n\n```bash\necho after\n```\n",
    )
    assert readme_setup.setup_commands(markdown) == [
        "echo one",
        "echo two\necho three",
        "echo four",
    ]


def test_a_readme_without_commands_is_refused() -> None:
    with pytest.raises(readme_setup.ReadmeError, match='no "## Set up" section'):
        readme_setup.setup_commands("# project\n\n## Install\n\n```bash\nmake\n```\n")
    with pytest.raises(readme_setup.ReadmeError, match="no ```bash block"):
        readme_setup.setup_commands("## Set up\n\n```console\n$ make\n```\n")


def test_the_commands_run_in_order_in_the_workdir(tmp_path: Path) -> None:
    result = run_script(tmp_path, page("echo one > made.txt", "cat made.txt; echo two >> made.txt"))
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "work" / "made.txt").read_text() == "one\ntwo\n"
    assert "$ echo one > made.txt" in result.stdout
    assert "one\n" in result.stdout  # what the commands print is shown


def test_a_failing_command_fails_the_run(tmp_path: Path) -> None:
    result = run_script(tmp_path, page("touch first", "exit 3", "touch third"))
    assert result.returncode == 3
    assert "README.md's set-up command failed (exit status 3" in result.stderr
    assert "exit 3" in result.stderr
    assert (tmp_path / "work" / "first").exists()
    assert not (tmp_path / "work" / "third").exists()  # the run stops at the failure


def test_a_broken_install_command_fails_the_run(tmp_path: Path) -> None:
    # As README's first command with a typo (a venv without pip: quicker to make).
    broken = "python3 -m venv --without-pip .venv && .venv/bin/pipp install -e '.[dev]' && touch ok"
    result = run_script(tmp_path, page(broken, "touch tested"))
    assert result.returncode == 127  # command not found
    assert (tmp_path / "work" / ".venv" / "bin" / "python3").exists()  # the part before ran
    assert not (tmp_path / "work" / "ok").exists()
    assert not (tmp_path / "work" / "tested").exists()


def test_a_failure_inside_a_block_stops_it(tmp_path: Path) -> None:
    result = run_script(tmp_path, page("false\ntouch after", "false | cat"))
    assert result.returncode == 1
    assert not (tmp_path / "work" / "after").exists()
    result = run_script(tmp_path, page("false | cat"))
    assert result.returncode == 1  # pipefail


def test_the_commands_run_without_a_developers_settings(tmp_path: Path) -> None:
    env = {
        "PATH": "/usr/bin:/bin",
        "PYTHONPATH": "/somewhere/src",
        "VIRTUAL_ENV": "/somewhere/.venv",
        "TOOLRELAY_TEST_REDIS_URL": "redis://127.0.0.1:1/0",
        "KEPT": "yes",
    }
    check = (
        'test -z "${PYTHONPATH+x}${VIRTUAL_ENV+x}${TOOLRELAY_TEST_REDIS_URL+x}"; test "$KEPT" = yes'
    )
    result = run_script(tmp_path, page(check), env=env)
    assert result.returncode == 0, result.stderr


def test_list_prints_the_commands(tmp_path: Path) -> None:
    readme = tmp_path / "README.md"
    readme.write_text(page("echo one", "echo two"), encoding="utf-8")
    assert readme_setup.main([str(readme), "--list"]) == 0
    missing = tmp_path / "NOPE.md"
    assert readme_setup.main([str(missing), "--list"]) == 2
