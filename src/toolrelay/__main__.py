"""``python -m toolrelay`` and the ``toolrelay`` console script: the command line.

The command needs the ``cli`` extra (typer, rich); without it, it says so in one line instead
of a traceback.
"""

import sys


def main() -> None:
    """Run the ``toolrelay`` command line, or name the extra it needs."""
    try:
        from toolrelay.cli import main as run
    except ImportError as exc:
        # The packages of the cli extra, whose absence toolrelay.cli reports naming the extra;
        # any other import failure is a bug, with its traceback.
        if exc.name not in ("typer", "rich"):
            raise
        sys.exit(f"error: {exc.msg}")
    run()


if __name__ == "__main__":
    main()
