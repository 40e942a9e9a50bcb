"""Every example of docs/*.md and README.md runs, and prints what the page says.

Two kinds of fenced block run, in page order, each its own test (``docs/cli.md:42``, the line
of its fence; selecting one block runs the blocks of its page before it first):

- ```python blocks. Each page's blocks run in one namespace, so a later block can use what an
  earlier one defined. They run in a temporary working directory per page, with the
  repository root importable (``examples.refund_desk``), and may use a top-level ``await``
  (they are compiled like ``python -m asyncio`` input). A python block followed directly by an
  ```output block must print that text.
- ```console blocks: a transcript. Each ``$ `` line is a command, and the lines up to the next
  one are what it prints on standard output. ``$ toolrelay ARGS`` runs ``python -m toolrelay
  ARGS`` and ``$ python ARGS`` runs ``python ARGS``, both with this interpreter and this
  checkout's toolrelay, in the repository root, with ``COLUMNS=100`` so that tables wrap the
  same everywhere. The command must exit with status 0. Each distinct command runs once per
  session, however many pages show it. Other commands are an error: a command to copy, not
  to check, goes in a ```bash block, which never runs.

How output is compared (:func:`mask_durations`, :func:`page_view`):

- trailing spaces and leading or trailing blank lines do not count;
- **durations** in what a console command printed: a number followed by a unit of time
  (``0.3 ms``, ``1.25 s``, ``0.11 ms/query``) or a clock-style time (``0:00:31 remaining``) is
  shown as ``…`` (``… ms``, ``… remaining``), and the page shows it so. Nothing else is
  masked: tokens, scores and counts are compared as printed, and so is everything a python
  block prints (a timeout it sets is a figure like any other);
- **elision**: one line ``...`` in an output stands for the lines the page leaves out; the
  lines before it must be the first lines printed and the lines after it the last ones.

Markers on a block's first line (a console block's first lines, before its first command):

- ``# docs: skip-test (reason)``: never run (a server that runs until stopped);
- ``# docs: needs-key NAME``: never run, as it calls a model provider with the API key in
  environment variable NAME; marked ``needs_key`` (tests/skip_policy.py), so its skip is
  allowed where everything else must run;
- ``# docs: requires NAME[, NAME]``: skipped when a module is not installed (optional extras)
  or, for a ``$VARIABLE``, when that environment variable is not set (a server's URL); blocks
  that use what such a block defines carry the marker too. ``DOCS_WITHOUT_EXTRAS=1`` skips
  every block that requires a module, to check the pages run without any extra;
- ``# file: NAME`` (any language): not run but saved as NAME in the page's working
  directory, for the blocks after it to use (a server script, a config file).

A block that fails makes the later blocks of its page skip (their namespace is incomplete);
the failure itself is reported once.

``DOCS_REGENERATE=1`` (set by ``python -m tests.docs.regenerate``) turns a difference into a
rewrite: the page gets what the code printed now (with its elision and masked durations kept),
and the test passes. Blocks that are skipped keep what the page shows.
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
import shlex
import signal
import subprocess
import sys
import traceback
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import CodeType, FrameType
from typing import Any

import pytest

import toolrelay
from tests.extras import EXTRA_OF_MODULE, NOT_AN_EXTRA, install_command

ROOT = Path(__file__).resolve().parents[2]
PAGES = [*sorted((ROOT / "docs").glob("*.md")), ROOT / "README.md"]
TIMEOUT_SECONDS = 120  # generous: model-loading blocks are slow on a busy machine
COLUMNS = "100"  # the terminal width console blocks are printed for
ELISION = "..."
REGENERATE = bool(os.environ.get("DOCS_REGENERATE"))

_FENCE = re.compile(r"^(?P<indent> {0,3})(?P<fence>`{3,}|~{3,})(?P<info>[^`\n]*)$")
_SKIP = re.compile(r"^#\s*docs:\s*skip-test\b\s*(?P<reason>.*)$")
_NEEDS_KEY = re.compile(r"^#\s*docs:\s*needs-key\s+(?P<key>\w+)\s*$")
_REQUIRES = re.compile(r"^#\s*docs:\s*requires\s+(?P<names>[\w.,$\s]+)$")
_FILE = re.compile(r"^(#|//|--)\s*file:\s*(?P<name>[\w.\-/]+)\s*$")
_PROMPT = "$ "
# A number with a unit of time right after it, not preceded by a letter, digit or dot (so
# "R@5", "v2.5s" or "1.2.3 s" stay as they are); or a clock-style elapsed time or ETA.
_DURATION = re.compile(
    r"(?<![\w.@])\d[\d,]*(?:\.\d+)?(?=\s?(?:ms|µs|us|s|min)\b)|(?<![\w:])\d+:\d\d:\d\d\b"
)


@dataclass(frozen=True, kw_only=True)
class Block:
    """One fenced code block of a page."""

    page: Path
    line: int  # 1-based line of the opening fence
    language: str
    source: str
    indent: int = 0  # the fence's indentation, which its lines share
    output: str | None = None  # the ```output block right after a python block, if any
    output_line: int | None = None  # 1-based line of that block's opening fence

    @property
    def label(self) -> str:
        page = self.page.relative_to(ROOT) if self.page.is_relative_to(ROOT) else self.page.name
        return f"{page}:{self.line}"

    @property
    def first_line(self) -> str:
        return self.source.lstrip("\n").split("\n", 1)[0].strip()


@dataclass(frozen=True, kw_only=True)
class Command:
    """One ``$`` line of a console block and the lines the page shows it printing."""

    text: str
    shown: tuple[str, ...]

    def argv(self) -> list[str]:
        """What runs: ``toolrelay`` and ``python`` with this interpreter."""
        words = shlex.split(self.text, comments=True)
        if words and words[0] == "toolrelay":
            return [sys.executable, "-m", "toolrelay", *words[1:]]
        if words and words[0] == "python":
            return [sys.executable, *words[1:]]
        raise ValueError(
            f"console blocks run `toolrelay ...` and `python ...` commands, not {self.text!r}; "
            "put a command to copy in a ```bash block, or mark the block "
            "`# docs: skip-test (reason)`"
        )


def read_blocks(page: Path) -> list[Block]:
    """The blocks of a Markdown page that run or are saved, python blocks with their output."""
    lines = page.read_text(encoding="utf-8").splitlines()
    raw: list[tuple[int, str, str, int]] = []
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
        raw.append((start, language, "".join(f"{line}\n" for line in body), indent))
        index += 1
    blocks: list[Block] = []
    for position, (line, language, source, indent) in enumerate(raw):
        first = source.lstrip("\n").split("\n", 1)[0].strip()
        if language == "output":
            previous = raw[position - 1][1] if position else None
            if previous not in ("python", "py"):
                raise ValueError(
                    f"{page.name}:{line}: an ```output block must follow a ```python block "
                    "(a command's output goes in its ```console block)"
                )
            continue
        if language not in ("python", "py", "console") and _FILE.match(first) is None:
            continue
        following = raw[position + 1] if position + 1 < len(raw) else None
        has_output = following is not None and following[1] == "output"
        blocks.append(
            Block(
                page=page,
                line=line,
                language=language,
                source=source,
                indent=indent,
                output=following[2] if following is not None and has_output else None,
                output_line=following[0] if following is not None and has_output else None,
            )
        )
    return blocks


def console_commands(block: Block) -> tuple[list[str], list[Command]]:
    """A console block's marker lines and its commands, each with the output shown."""
    markers: list[str] = []
    commands: list[tuple[str, list[str]]] = []
    for line in block.source.splitlines():
        if line.startswith(_PROMPT):
            commands.append((line[len(_PROMPT) :].strip(), []))
        elif commands:
            commands[-1][1].append(line)
        elif line.strip().startswith("#") or not line.strip():
            markers.append(line)
        else:
            raise ValueError(
                f"{block.label}: a console block starts with its `$ ` command, not {line!r}"
            )
    if not commands:
        raise ValueError(f"{block.label}: a console block needs at least one `$ ` command")
    return markers, [Command(text=text, shown=tuple(shown)) for text, shown in commands]


ALL_BLOCKS = [block for page in PAGES if page.exists() for block in read_blocks(page)]


# --- comparing output ------------------------------------------------------------------------


def mask_durations(text: str) -> str:
    """Durations as a page shows them: ``searched in 0.3 ms`` becomes ``searched in … ms``."""
    return _DURATION.sub("…", text)


def normalised(text: str) -> list[str]:
    """The lines of ``text`` without trailing spaces or leading and trailing blank lines."""
    lines = [line.rstrip() for line in text.splitlines()]
    while lines and not lines[0]:
        lines.pop(0)
    while lines and not lines[-1]:
        lines.pop()
    return lines


def page_view(printed: str, shown: Sequence[str]) -> list[str]:
    """What a page showing ``shown`` should show for ``printed``.

    Where ``shown`` has an elision line, as many of the first and last lines printed as
    ``shown`` has before and after it. Equal to ``normalised(shown)`` when the page is right,
    and what regeneration writes.
    """
    lines = normalised(printed)
    page = normalised("\n".join(shown))
    cuts = [position for position, line in enumerate(page) if line.strip() == ELISION]
    if len(cuts) > 1:
        raise ValueError(f"an output shows at most one {ELISION!r} line, not {len(cuts)}")
    if not cuts:
        return lines
    head, tail = cuts[0], len(page) - cuts[0] - 1
    if len(lines) <= head + tail:
        return lines
    return [*lines[:head], ELISION, *lines[len(lines) - tail :]]


@dataclass(frozen=True, kw_only=True)
class Rewrite:
    """New lines for the body of a block, which starts on line ``first`` of its page."""

    page: Path
    first: int  # 1-based
    indent: int
    old: tuple[str, ...]  # the body as read, to check that the page has not changed since
    lines: tuple[str, ...]


def apply_rewrites(rewrites: Sequence[Rewrite]) -> list[Path]:
    """Write ``rewrites`` into their pages, bottom up so that line numbers stay valid."""
    changed: list[Path] = []
    for page in sorted({r.page for r in rewrites}):
        lines = page.read_text(encoding="utf-8").splitlines()
        for rewrite in sorted((r for r in rewrites if r.page == page), key=lambda r: -r.first):
            pad = " " * rewrite.indent
            start, end = rewrite.first - 1, rewrite.first - 1 + len(rewrite.old)
            if [line[rewrite.indent :] for line in lines[start:end]] != list(rewrite.old):
                raise RuntimeError(f"{page} changed while its blocks ran; regenerate again")
            lines[start:end] = [f"{pad}{line}" if line else "" for line in rewrite.lines]
        page.write_text("\n".join(lines) + "\n", encoding="utf-8")
        changed.append(page)
    return changed


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


def missing_requirements(block: Block) -> list[str]:
    """What a ``# docs: requires`` marker names and this environment lacks."""
    marker = next(
        (found for line in _marker_lines(block) if (found := _REQUIRES.match(line.strip()))),
        None,
    )
    if marker is None:
        return []
    names = [n.strip() for n in marker["names"].split(",") if n.strip()]
    missing = []
    for name in names:
        if name.startswith("$"):
            if not os.environ.get(name[1:]):
                missing.append(name)
        elif os.environ.get("DOCS_WITHOUT_EXTRAS") or not installed(name):
            missing.append(name)
    return missing


def required_modules(blocks: Iterable[Block]) -> set[str]:
    """Every module a ``# docs: requires`` marker of ``blocks`` names."""
    modules: set[str] = set()
    for block in blocks:
        for line in _marker_lines(block):
            if found := _REQUIRES.match(line.strip()):
                names = (n.strip() for n in found["names"].split(","))
                modules |= {n for n in names if n and not n.startswith("$")}
    return modules


def skip_reason(block: Block) -> str | None:
    """Why a block does not run here (its skip-test marker, a missing requirement), or None."""
    skip = next((found for line in _marker_lines(block) if (found := _SKIP.match(line))), None)
    if skip is not None:
        return skip["reason"].strip(" ()") or "marked skip-test"
    key = needed_key(block)
    if key is not None:
        return f"needs {key} (calls a model provider)"
    missing = missing_requirements(block)
    if not missing:
        return None
    # Each missing module as the extra that installs it, with the command.
    reasons = dict.fromkeys(
        f"needs {name} set" if name.startswith("$") else install_command(name) for name in missing
    )
    without = " (DOCS_WITHOUT_EXTRAS is set)" if os.environ.get("DOCS_WITHOUT_EXTRAS") else ""
    return "; ".join(reasons) + without


def _marker_lines(block: Block) -> list[str]:
    if block.language != "console":
        return [block.first_line]
    return [line.strip() for line in console_commands(block)[0]]


def command_environment() -> dict[str, str]:
    """The environment of a console command: this one, at a fixed width, with this toolrelay."""
    env = {k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR", "TOOLRELAY_DEBUG")}
    source = str(Path(toolrelay.__file__).resolve().parents[1])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (source, env.get("PYTHONPATH")) if p)
    env.update(COLUMNS=COLUMNS, PYTHONIOENCODING="utf-8", NO_COLOR="1")
    return env


_COMMANDS: dict[tuple[str, ...], str] = {}  # argv -> what it printed, once per session


def run_command(command: Command) -> str:
    """Run a console command (once per session per distinct command); its standard output."""
    argv = tuple(command.argv())
    if argv not in _COMMANDS:
        done = subprocess.run(
            argv,
            cwd=ROOT,
            env=command_environment(),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            encoding="utf-8",
            timeout=TIMEOUT_SECONDS,
            check=False,
        )
        if done.returncode != 0:
            raise AssertionError(
                f"`{command.text}` exited with status {done.returncode}:\n{done.stderr}"
            )
        _COMMANDS[argv] = done.stdout
    return _COMMANDS[argv]


def needed_key(block: Block) -> str | None:
    """The provider key a ``needs-key`` block names."""
    found = _NEEDS_KEY.match(block.first_line)
    return None if found is None else found["key"]


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
    regenerate: bool = False  # rewrite what differs instead of failing
    # Run like a script: what a block defines belongs to ``__main__``.
    namespace: dict[str, Any] = field(default_factory=lambda: {"__name__": "__main__"})
    done: int = 0  # blocks of the page run (or skipped) so far
    failed: str | None = None  # the label of the block that failed
    rewrites: list[Rewrite] = field(default_factory=list)

    def run(self, block: Block) -> str | None:
        """Run one block; the reason when it is skipped, ``None`` when it ran."""
        saved_as = _FILE.match(block.first_line)
        if saved_as is not None:
            (self.workdir / saved_as["name"]).parent.mkdir(parents=True, exist_ok=True)
            (self.workdir / saved_as["name"]).write_text(block.source, encoding="utf-8")
            return None
        reason = skip_reason(block)
        if reason is not None:
            return reason
        if block.language == "console":
            self._run_console(block)
        else:
            self._run_python(block)
        return None

    def _run_python(self, block: Block) -> None:
        code = compile_block(block)
        captured = io.StringIO()
        with pytest.MonkeyPatch.context() as patch:
            patch.chdir(self.workdir)
            patch.syspath_prepend(str(ROOT))
            with time_limit(TIMEOUT_SECONDS), contextlib.redirect_stdout(captured):
                if code.co_flags & inspect.CO_COROUTINE:
                    asyncio.run(eval(code, self.namespace))
                else:
                    exec(code, self.namespace)
        if block.output is None or block.output_line is None:
            return
        shown = block.output.splitlines()
        expected = page_view(captured.getvalue(), shown)
        if expected == normalised(block.output):
            return
        if not self.regenerate:
            raise AssertionError(
                f"{block.label} printed:\n" + "\n".join(expected) + "\n--- but the page shows:\n"
                f"{block.output}"
            )
        self.rewrites.append(
            Rewrite(
                page=block.page,
                first=block.output_line + 1,
                indent=block.indent,
                old=tuple(shown),
                lines=tuple(expected),
            )
        )

    def _run_console(self, block: Block) -> None:
        markers, commands = console_commands(block)
        body = list(markers)
        differs = []
        for command in commands:
            expected = page_view(mask_durations(run_command(command)), command.shown)
            if expected != normalised("\n".join(command.shown)):
                differs.append(
                    f"`{command.text}` printed:\n" + "\n".join(expected) + "\n--- but the page "
                    "shows:\n" + "\n".join(command.shown)
                )
            body += [f"{_PROMPT}{command.text}", *expected]
        if not differs:
            return
        if not self.regenerate:
            raise AssertionError(f"{block.label}: " + "\n\n".join(differs))
        self.rewrites.append(
            Rewrite(
                page=block.page,
                first=block.line + 1,
                indent=block.indent,
                old=tuple(block.source.splitlines()),
                lines=tuple(body),
            )
        )


@pytest.fixture(scope="session")
def page_runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[Path, PageRun]]:
    # Embedding caches and other per-user files go to a temporary folder (console commands
    # inherit the environment).
    runs: dict[Path, PageRun] = {}
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("cache")))
        patch.setenv("XDG_DATA_HOME", str(tmp_path_factory.mktemp("data")))
        yield runs
    rewrites = [rewrite for run in runs.values() for rewrite in run.rewrites]
    for page in apply_rewrites(rewrites):
        count = sum(1 for rewrite in rewrites if rewrite.page == page)
        print(f"\nrewrote {count} output(s) of {page.relative_to(ROOT)}")


def _run_through(block: Block, runs: dict[Path, PageRun], workdir: Path) -> str | None:
    """Run the page's blocks up to and including ``block``; its skip reason, if any."""
    run = runs.setdefault(block.page, PageRun(workdir=workdir, regenerate=REGENERATE))
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
    assert any(block.language == "console" for block in ALL_BLOCKS)


def test_a_block_needing_an_extra_skips_naming_it_with_its_install_command(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Every module a page requires is known (tests/extras.py), so that a reader without it
    # is told which extra to install.
    unknown = required_modules(ALL_BLOCKS) - set(EXTRA_OF_MODULE) - set(NOT_AN_EXTRA)
    assert not unknown, f"add {sorted(unknown)} to EXTRA_OF_MODULE in tests/extras.py"
    block = next(b for b in ALL_BLOCKS if "mcp" in required_modules([b]))
    monkeypatch.setenv("DOCS_WITHOUT_EXTRAS", "1")
    reason = skip_reason(block)
    assert reason is not None
    assert "needs the mcp extra: pip install -e '.[mcp]'" in reason
    assert reason.endswith(" (DOCS_WITHOUT_EXTRAS is set)")


def awaits_at_top_level(block: Block) -> bool:
    """Whether a python block awaits outside any function, as no script can."""
    code = compile(
        block.source, "<block>", "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT, dont_inherit=True
    )
    return bool(code.co_flags & inspect.CO_COROUTINE)


def test_a_page_whose_examples_await_at_top_level_says_how_to_run_them() -> None:
    # The test runs such blocks in an event loop; a reader copying one into a script must be
    # told how: in `python -m asyncio`, a notebook, or an async def run by asyncio.run.
    for page in PAGES:
        awaiting = [
            b
            for b in ALL_BLOCKS
            if b.page == page and b.language == "python" and awaits_at_top_level(b)
        ]
        if awaiting:
            told = "`python -m asyncio`" in page.read_text(encoding="utf-8")
            assert told, (
                f"{awaiting[0].label} awaits at top level and the page does not say how to run "
                "it: add the note the other pages have (`python -m asyncio`) after that block"
            )


def test_every_console_command_is_one_the_test_runs() -> None:
    # Skipped blocks too: a console block is a transcript of toolrelay or python, never a
    # command the docs test could not check once its marker goes.
    for block in (b for b in ALL_BLOCKS if b.language == "console"):
        for command in console_commands(block)[1]:
            assert command.argv()[0] == sys.executable, block.label


def test_read_blocks_finds_python_and_console_blocks_markers_and_output(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        "Text\n\n```python\nx = 1\nprint(x)\n```\n\n```output\n1\n```\n\n"
        "```bash\necho no\n```\n\n"
        "```python\n# docs: skip-test (needs a key)\nraise SystemExit\n```\n\n"
        "- a list item:\n\n  ```console\n  $ toolrelay --version\n  toolrelay 0\n  ```\n",
        encoding="utf-8",
    )
    blocks = read_blocks(page)
    assert [b.line for b in blocks] == [3, 16, 23]
    assert blocks[0].source == "x = 1\nprint(x)\n"
    assert (blocks[0].output, blocks[0].output_line) == ("1\n", 8)
    assert blocks[1].output is None
    assert _SKIP.match(blocks[1].first_line) is not None
    console = blocks[2]
    assert (console.language, console.indent) == ("console", 2)
    markers, (command,) = console_commands(console)
    assert markers == []
    assert (command.text, command.shown) == ("toolrelay --version", ("toolrelay 0",))
    assert command.argv() == [sys.executable, "-m", "toolrelay", "--version"]


def test_an_output_block_without_its_python_block_is_an_error(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text("```text\nhello\n```\n\n```output\nhello\n```\n", encoding="utf-8")
    with pytest.raises(ValueError, match="must follow a ```python block"):
        read_blocks(page)


def test_console_blocks_run_only_toolrelay_and_python() -> None:
    assert Command(text="python -m toolrelay x  # a comment", shown=()).argv() == [
        sys.executable,
        "-m",
        "toolrelay",
        "x",
    ]
    with pytest.raises(ValueError, match="```bash block"):
        Command(text="pip install toolrelay", shown=()).argv()


def test_durations_are_masked_and_nothing_else() -> None:
    printed = (
        "62 of 78 tools matched; searched in 0.2 ms, indexed in 0.31 s\n"
        "search 0.11 ms/query, indexing 1,250 s; 5 requests: 33,373 tokens, 76.7% saved\n"
        "R@5 83.8, score 2.513, 3 searches in 12 µs, v2.5s; 1,200/2,574 tools 0:00:31 remaining"
    )
    assert mask_durations(printed) == (
        "62 of 78 tools matched; searched in … ms, indexed in … s\n"
        "search … ms/query, indexing … s; 5 requests: 33,373 tokens, 76.7% saved\n"
        "R@5 83.8, score 2.513, 3 searches in … µs, v2.5s; 1,200/2,574 tools … remaining"
    )


def test_an_elided_output_keeps_its_first_and_last_lines() -> None:
    printed = "a\nb\nc\nd\ne\n"
    assert page_view(printed, ["a", "...", "e"]) == ["a", ELISION, "e"]
    assert page_view(printed, ["a", "b", "...", "x"]) == ["a", "b", ELISION, "e"]
    assert page_view(printed, ["...", "d", "e"]) == [ELISION, "d", "e"]
    assert page_view("a\nb\n", ["a", "...", "b"]) == ["a", "b"]  # nothing left out
    with pytest.raises(ValueError, match="at most one"):
        page_view(printed, ["a", "...", "c", "...", "e"])


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


def test_a_console_block_runs_its_commands_and_checks_their_output(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        "```console\n$ python -c \"print('one'); print('two'); print('in 0.5 s')\"\n"
        'one\n...\nin … s\n$ python -c "print(2 + 2)"\n4\n```\n\n'
        '```console\n$ python -c "print(2 + 2)"\n5\n```\n\n'
        '```console\n$ python -c "raise SystemExit(3)"\n```\n',
        encoding="utf-8",
    )
    right, wrong, failing = read_blocks(page)
    run = PageRun(workdir=tmp_path)
    assert run.run(right) is None
    with pytest.raises(AssertionError, match="printed:\n4\n--- but the page shows:\n5"):
        run.run(wrong)
    with pytest.raises(AssertionError, match="exited with status 3"):
        run.run(failing)


def test_regenerating_rewrites_what_differs_and_keeps_the_rest(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        "Intro.\n\n```python\nprint('new'); print('in 1.5 ms')\n```\n\n```output\nold\n```\n\n"
        "- In a list:\n\n  ```console\n  # docs: requires sys\n"
        "  $ python -c \"print('a'); print('b'); print('c in 0.2 s')\"\n  a\n  ...\n  z\n"
        "  ```\n\n```python\nprint('same')\n```\n\n```output\nsame\n```\n",
        encoding="utf-8",
    )
    run = PageRun(workdir=tmp_path, regenerate=True)
    for block in read_blocks(page):
        assert run.run(block) is None
    assert len(run.rewrites) == 2
    apply_rewrites(run.rewrites)
    assert page.read_text(encoding="utf-8") == (
        "Intro.\n\n```python\nprint('new'); print('in 1.5 ms')\n```\n\n"
        "```output\nnew\nin 1.5 ms\n```\n\n"
        "- In a list:\n\n  ```console\n  # docs: requires sys\n"
        "  $ python -c \"print('a'); print('b'); print('c in 0.2 s')\"\n  a\n  ...\n"
        "  c in … s\n  ```\n\n```python\nprint('same')\n```\n\n```output\nsame\n```\n"
    )


def test_markers_skip_blocks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NO_SUCH_SERVER_URL", raising=False)
    page = tmp_path / "page.md"
    page.write_text(
        "```python\n# docs: requires no_such_module_here\nimport no_such_module_here\n```\n\n"
        "```python\n# docs: skip-test (needs an OpenAI key)\nraise RuntimeError\n```\n\n"
        "```python\n# docs: requires sys, $NO_SUCH_SERVER_URL\nraise RuntimeError\n```\n\n"
        "```console\n# docs: skip-test (runs until stopped)\n$ toolrelay serve x.toml\n```\n\n"
        "```python\n# docs: needs-key OPENAI_API_KEY\nraise RuntimeError\n```\n",
        encoding="utf-8",
    )
    needs, skipped, server, serving, keyed = read_blocks(page)
    run = PageRun(workdir=tmp_path)
    assert run.run(needs) == "needs no_such_module_here"
    assert run.run(skipped) == "needs an OpenAI key"
    assert run.run(server) == "needs $NO_SUCH_SERVER_URL set"
    assert run.run(serving) == "runs until stopped"
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
