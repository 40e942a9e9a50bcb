"""Every ```python block of docs/*.md and README.md runs, and prints what the page says.

Each page's blocks run in order in one namespace, so a later block can use what an earlier
one defined; every block is its own test (``docs/tools.md:42``, the line of its fence), and
selecting one block runs the blocks before it first. Blocks run in a temporary working
directory per page, with the repository root importable (``examples.refund_desk``), and may
use a top-level ``await`` (they are compiled like ``python -m asyncio`` input).

Markers on a block's first line:

- ``# docs: skip-test (reason)``: never run (snippets that need a server);
- ``# docs: needs-key NAME``: never run, as it calls a model provider with the API key in
  environment variable NAME; marked ``needs_key`` (tests/skip_policy.py), so its skip is
  allowed where everything else must run;
- ``# docs: requires module[, module]``: skipped when a module is not installed (optional
  extras); blocks that use what such a block defines carry the marker too.
  ``DOCS_WITHOUT_EXTRAS=1`` skips all of them, to check the pages run without any extra.

- ``# file: NAME`` (any language): not run but saved as NAME in the page's working
  directory, for the blocks after it to use (a server script, a config file).

A python block followed directly by an ```output block must print exactly that text.
Shell blocks (```bash, ```console) are never run. A block that fails makes the later blocks
of its page skip (their namespace is incomplete); the failure itself is reported once.
"""

from __future__ import annotations

import ast
import asyncio
import contextlib
import importlib.util
import inspect
import io
import os
import re
import signal
import sys
import traceback
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import CodeType, FrameType
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = [*sorted((ROOT / "docs").glob("*.md")), ROOT / "README.md"]
TIMEOUT_SECONDS = 120  # generous: model-loading blocks are slow on a busy machine

_FENCE = re.compile(r"^(?P<indent> {0,3})(?P<fence>`{3,}|~{3,})(?P<info>[^`\n]*)$")
_SKIP = re.compile(r"^#\s*docs:\s*skip-test\b\s*(?P<reason>.*)$")
_NEEDS_KEY = re.compile(r"^#\s*docs:\s*needs-key\s+(?P<key>\w+)\s*$")
_REQUIRES = re.compile(r"^#\s*docs:\s*requires\s+(?P<modules>[\w.,\s]+)$")
_FILE = re.compile(r"^(#|//|--)\s*file:\s*(?P<name>[\w.\-/]+)\s*$")


@dataclass(frozen=True, kw_only=True)
class Block:
    """One fenced code block of a page."""

    page: Path
    line: int  # 1-based line of the opening fence
    language: str
    source: str
    output: str | None = None  # the ```output block right after it, if any

    @property
    def label(self) -> str:
        page = self.page.relative_to(ROOT) if self.page.is_relative_to(ROOT) else self.page.name
        return f"{page}:{self.line}"

    @property
    def first_line(self) -> str:
        return self.source.lstrip("\n").split("\n", 1)[0].strip()


def read_blocks(page: Path) -> list[Block]:
    """The fenced blocks of a Markdown page, each python block with its expected output."""
    lines = page.read_text(encoding="utf-8").splitlines()
    raw: list[tuple[int, str, str]] = []
    index = 0
    while index < len(lines):
        opening = _FENCE.match(lines[index])
        if opening is None:
            index += 1
            continue
        fence, indent = opening["fence"], len(opening["indent"])
        language = opening["info"].strip().split(" ", 1)[0].lower()
        body: list[str] = []
        index += 1
        start = index
        while index < len(lines):
            closing = _FENCE.match(lines[index])
            if (
                closing is not None
                and closing["fence"][0] == fence[0]
                and len(closing["fence"]) >= len(fence)
                and not closing["info"].strip()
            ):
                break
            body.append(lines[index][indent:] if lines[index][:indent].isspace() else lines[index])
            index += 1
        raw.append((start, language, "\n".join(body) + "\n"))
        index += 1
    blocks: list[Block] = []
    for position, (line, language, source) in enumerate(raw):
        first = source.lstrip("\n").split("\n", 1)[0].strip()
        if language not in ("python", "py") and _FILE.match(first) is None:
            continue
        following = raw[position + 1] if position + 1 < len(raw) else None
        output = following[2] if following is not None and following[1] == "output" else None
        blocks.append(Block(page=page, line=line, language=language, source=source, output=output))
    return blocks


ALL_BLOCKS = [block for page in PAGES if page.exists() for block in read_blocks(page)]


# --- running a page --------------------------------------------------------------------------


class BlockTimeoutError(Exception):
    """A block ran longer than TIMEOUT_SECONDS."""


@contextlib.contextmanager
def time_limit(seconds: int) -> Iterator[None]:
    """Interrupt the main thread after ``seconds`` (where SIGALRM exists)."""
    if not hasattr(signal, "SIGALRM") or os.name == "nt":
        yield
        return

    def interrupt(signum: int, frame: FrameType | None) -> None:
        raise BlockTimeoutError(f"the block ran longer than {seconds} s")

    previous = signal.signal(signal.SIGALRM, interrupt)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def compile_block(block: Block) -> CodeType:
    # Line numbers in tracebacks point into the page: the block starts after its fence.
    tree = ast.parse(block.source, filename=str(block.page), mode="exec")
    ast.increment_lineno(tree, block.line)
    return compile(
        tree, str(block.page), "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT, dont_inherit=True
    )


def needed_key(block: Block) -> str | None:
    """The provider key a ``needs-key`` block names."""
    found = _NEEDS_KEY.match(block.first_line)
    return None if found is None else found["key"]


def missing_modules(block: Block) -> list[str]:
    found = _REQUIRES.match(block.first_line)
    if found is None:
        return []
    names = [n.strip() for n in found["modules"].split(",") if n.strip()]
    if os.environ.get("DOCS_WITHOUT_EXTRAS"):
        return names  # check that every page also runs where no extra is installed
    return [n for n in names if not installed(n)]


def installed(module: str) -> bool:
    """Whether ``module`` is importable from somewhere else than the test folders.

    pytest puts tests/ on sys.path, where tests/mcp passes for an ``mcp`` namespace package
    when the MCP SDK is not installed.
    """
    try:
        spec = importlib.util.find_spec(module)
    except ModuleNotFoundError:  # a parent package is missing
        return False
    if spec is None:
        return False
    places = [spec.origin] if spec.origin else list(spec.submodule_search_locations or ())
    return any(not Path(place).is_relative_to(ROOT / "tests") for place in places)


@dataclass
class PageRun:
    """The shared namespace of one page and what happened to its blocks so far."""

    workdir: Path
    # Run like a script: what a block defines belongs to ``__main__``.
    namespace: dict[str, Any] = field(default_factory=lambda: {"__name__": "__main__"})
    done: int = 0  # blocks of the page run (or skipped) so far
    failed: str | None = None  # the label of the block that failed

    def run(self, block: Block) -> str | None:
        """Run one block; the reason when it is skipped, ``None`` when it ran."""
        skip = _SKIP.match(block.first_line)
        if skip is not None:
            return skip["reason"].strip(" ()") or "marked skip-test"
        key = needed_key(block)
        if key is not None:
            return f"needs {key} (calls a model provider)"
        saved_as = _FILE.match(block.first_line)
        if saved_as is not None:
            (self.workdir / saved_as["name"]).parent.mkdir(parents=True, exist_ok=True)
            (self.workdir / saved_as["name"]).write_text(block.source, encoding="utf-8")
            return None
        missing = missing_modules(block)
        if missing:
            why = (
                "DOCS_WITHOUT_EXTRAS is set"
                if os.environ.get("DOCS_WITHOUT_EXTRAS")
                else "not installed"
            )
            return f"needs {', '.join(missing)} ({why})"
        code = compile_block(block)
        captured = io.StringIO()
        with pytest.MonkeyPatch.context() as patch:
            patch.chdir(self.workdir)
            patch.syspath_prepend(str(ROOT))
            # As in an activated virtual environment: `python` is this interpreter (server
            # scripts a page starts as subprocesses need the project installed).
            patch.setenv("PATH", str(Path(sys.executable).parent), prepend=os.pathsep)
            with time_limit(TIMEOUT_SECONDS), contextlib.redirect_stdout(captured):
                if code.co_flags & inspect.CO_COROUTINE:
                    asyncio.run(eval(code, self.namespace))
                else:
                    exec(code, self.namespace)
        if block.output is not None:
            printed = "\n".join(line.rstrip() for line in captured.getvalue().splitlines())
            expected = "\n".join(line.rstrip() for line in block.output.splitlines())
            assert printed.strip("\n") == expected.strip("\n"), (
                f"{block.label} printed:\n{printed}\n--- but the page shows:\n{expected}"
            )
        return None


@pytest.fixture(scope="session")
def page_runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[Path, PageRun]]:
    # Embedding caches and other per-user files go to a temporary folder.
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("cache")))
        patch.setenv("XDG_DATA_HOME", str(tmp_path_factory.mktemp("data")))
        yield {}


def _run_through(block: Block, runs: dict[Path, PageRun], workdir: Path) -> str | None:
    """Run the page's blocks up to and including ``block``; its skip reason, if any."""
    run = runs.setdefault(block.page, PageRun(workdir=workdir))
    page_blocks = [b for b in ALL_BLOCKS if b.page == block.page]
    target = page_blocks.index(block)
    reason: str | None = None
    while run.done <= target:
        current = page_blocks[run.done]
        run.done += 1
        if run.failed is not None:
            reason = f"an earlier block failed ({run.failed})"
            continue
        try:
            reason = run.run(current)
        except BaseException as exc:
            run.failed = current.label
            if current is block:
                raise
            reason = f"an earlier block failed ({current.label}: {type(exc).__name__})"
            traceback.print_exc()
    return reason


def _case(block: Block) -> Any:
    key = needed_key(block)
    marks = () if key is None else (pytest.mark.needs_key(key),)
    return pytest.param(block, marks=marks, id=block.label)


@pytest.mark.parametrize("block", [_case(block) for block in ALL_BLOCKS])
def test_code_block(
    block: Block, page_runs: dict[Path, PageRun], tmp_path_factory: pytest.TempPathFactory
) -> None:
    workdir = tmp_path_factory.mktemp(block.page.stem)
    reason = _run_through(block, page_runs, workdir)
    if reason is not None:
        pytest.skip(reason)


# --- the collector itself --------------------------------------------------------------------


def test_every_page_is_collected() -> None:
    assert (ROOT / "README.md") in PAGES
    assert any(page.parent.name == "docs" for page in PAGES)


def test_read_blocks_finds_python_blocks_markers_and_output(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        "Text\n\n```python\nx = 1\nprint(x)\n```\n\n```output\n1\n```\n\n"
        "```bash\necho no\n```\n\n"
        "```python\n# docs: skip-test (needs a key)\nraise SystemExit\n```\n",
        encoding="utf-8",
    )
    blocks = read_blocks(page)
    assert [b.line for b in blocks] == [3, 16]
    assert blocks[0].source == "x = 1\nprint(x)\n"
    assert blocks[0].output == "1\n"
    assert blocks[1].output is None
    assert _SKIP.match(blocks[1].first_line) is not None


def test_a_page_run_shares_its_namespace_awaits_and_checks_output(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        "```python\nimport asyncio\nvalue = 41\n```\n\n"
        "```python\nawait asyncio.sleep(0)\nprint(value + 1)\n```\n\n```output\n42\n```\n\n"
        "```python\nprint('other')\n```\n\n```output\n42\n```\n",
        encoding="utf-8",
    )
    first, second, third = read_blocks(page)
    run = PageRun(workdir=tmp_path)
    assert run.run(first) is None
    assert run.run(second) is None
    with pytest.raises(AssertionError, match="printed"):
        run.run(third)


def test_markers_skip_blocks(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        "```python\n# docs: requires no_such_module_here\nimport no_such_module_here\n```\n\n"
        "```python\n# docs: skip-test (needs a server)\nraise RuntimeError\n```\n\n"
        "```python\n# docs: needs-key OPENAI_API_KEY\nraise RuntimeError\n```\n",
        encoding="utf-8",
    )
    needs, skipped, keyed = read_blocks(page)
    run = PageRun(workdir=tmp_path)
    assert (run.run(needs) or "").startswith("needs no_such_module_here (")
    assert run.run(skipped) == "needs a server"
    assert run.run(keyed) == "needs OPENAI_API_KEY (calls a model provider)"
    # only the block that needs a key may skip where everything is installed (--no-skips)
    assert [m.args for m in _case(keyed).marks] == [("OPENAI_API_KEY",)]
    assert not _case(skipped).marks


def test_a_file_block_is_saved_for_the_next_blocks(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        '```toml\n# file: conf/app.toml\nname = "x"\n```\n\n'
        "```python\nfrom pathlib import Path\nprint(Path('conf/app.toml').read_text())\n```\n",
        encoding="utf-8",
    )
    saved, reader = read_blocks(page)
    run = PageRun(workdir=tmp_path / "work")
    (tmp_path / "work").mkdir()
    assert run.run(saved) is None
    assert (tmp_path / "work" / "conf" / "app.toml").read_text() == saved.source
    assert run.run(reader) is None


def test_a_block_that_runs_too_long_is_stopped(tmp_path: Path) -> None:
    if not hasattr(signal, "SIGALRM"):
        pytest.skip("no SIGALRM on this platform")

    def spin() -> None:
        with time_limit(1):
            while True:
                pass

    with pytest.raises(BlockTimeoutError):
        spin()
