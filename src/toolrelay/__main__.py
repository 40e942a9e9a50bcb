"""``python -m toolrelay``: the ``toolrelay`` command line."""

from toolrelay.cli import main

if __name__ == "__main__":
    main()
