"""Run README.md's set-up commands as written, the way a newcomer runs them.

The commands are the ```bash blocks of README's "## Set up" section, read from the page itself
so that CI and README cannot drift apart. Each block runs with ``bash -e -o pipefail`` in
WORKDIR, in page order, with none of the variables a developer's shell may carry that a fresh
machine has not (``PYTHONPATH``, an activated ``VIRTUAL_ENV``, the ``TOOLRELAY_*`` settings and
test servers). The first failing block stops the run, and its exit status is this script's.

    python3 .ci/readme_setup.py README.md WORKDIR        # run them
    python3 .ci/readme_setup.py README.md --list         # print them, one block a paragraph

Uses the standard library only: it runs before any environment exists.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import time
from pathlib import Path

SECTION = "Set up"
"""The README heading (level 2) whose ```bash blocks are the set-up commands."""

_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})\s*([^`\s]*)")
# What a newcomer's shell does not have: a checkout's own sources on the path, another
# environment activated, toolrelay's settings and the CI's test servers.
_NOT_ON_A_FRESH_MACHINE = ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")
_NOT_ON_A_FRESH_MACHINE_PREFIX = "TOOLRELAY_"


class ReadmeError(Exception):
    """README.md has no set-up commands where CI looks for them."""


def setup_commands(markdown: str, section: str = SECTION) -> list[str]:
    """The ```bash blocks of the level-2 section ``section``, each as one script.

    Raises:
        ReadmeError: There is no such section, or it has no ```bash block.
    """
    lines = markdown.splitlines()
    start = None
    for number, line in enumerate(lines):
        heading = _HEADING.match(line)
        if heading and len(heading[1]) == 2 and heading[2] == section:
            start = number + 1
            break
    if start is None:
        raise ReadmeError(
            f'no "## {section}" section: CI runs the ```bash blocks under that heading as '
            "the set-up commands"
        )
    commands: list[str] = []
    fence: str | None = None  # the opening fence of the block being read
    shell = False  # whether that block is a ```bash one
    body: list[str] = []
    for line in lines[start:]:
        marker = _FENCE.match(line)
        if fence is None:
            heading = _HEADING.match(line)
            if heading and len(heading[1]) <= 2:
                break  # the next section
            if marker:
                fence, shell, body = marker[1], marker[2].lower() in ("bash", "sh", "shell"), []
        elif marker and not marker[2] and marker[1][0] == fence[0] and len(marker[1]) >= len(fence):
            if shell:
                commands.append("\n".join(body).strip())
            fence = None
        else:
            body.append(line)
    commands = [command for command in commands if command]
    if not commands:
        raise ReadmeError(
            f'the "## {section}" section has no ```bash block; its commands must be in '
            "```bash blocks for CI to run them"
        )
    return commands


def fresh_environment(environ: dict[str, str]) -> dict[str, str]:
    """``environ`` without what a developer's shell has and a fresh machine has not."""
    return {
        name: value
        for name, value in environ.items()
        if name not in _NOT_ON_A_FRESH_MACHINE
        and not name.startswith(_NOT_ON_A_FRESH_MACHINE_PREFIX)
    }


def run_commands(commands: list[str], workdir: Path, readme: str = "README.md") -> int:
    """Run ``commands`` in ``workdir`` in order; the exit status of the first that fails, or 0."""
    environment = fresh_environment(dict(os.environ))
    for command in commands:
        print(f"$ {command}", flush=True)
        started = time.monotonic()
        status = subprocess.run(
            ["bash", "-e", "-o", "pipefail", "-c", command],
            cwd=workdir,
            env=environment,
            check=False,
        ).returncode
        seconds = time.monotonic() - started
        if status != 0:
            print(
                f"error: {readme}'s set-up command failed (exit status {status}, "
                f"after {seconds:.0f} s): {command}",
                file=sys.stderr,
            )
            return status
        print(f"ok in {seconds:.0f} s", flush=True)
    return 0


def main(argv: list[str] | None = None) -> int:
    """The command line; see the module's docstring."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("readme", type=Path, help="the README to read the commands from")
    parser.add_argument("workdir", type=Path, nargs="?", help="where the commands run")
    parser.add_argument("--list", action="store_true", help="print the commands, run nothing")
    args = parser.parse_args(argv)
    try:
        commands = setup_commands(args.readme.read_text(encoding="utf-8"))
    except (OSError, ReadmeError) as exc:
        print(f"error: {args.readme}: {exc}", file=sys.stderr)
        return 2
    if args.list:
        print("\n\n".join(commands))
        return 0
    if args.workdir is None or not args.workdir.is_dir():
        parser.error("give the directory to run the commands in (an existing one), or --list")
    return run_commands(commands, args.workdir, readme=args.readme.name)


if __name__ == "__main__":
    sys.exit(main())
