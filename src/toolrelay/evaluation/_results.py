"""A results file: one JSON line per run, appended as runs finish, read back to resume.

Each line is a :meth:`RunResult.to_json <toolrelay.evaluation._runner.RunResult.to_json>` object,
keyed by (task, mode, repeat). Opening a file reads what it holds, so an evaluation run again
with the same file makes only the runs that are missing. A line cut off by an interrupted
write (the last one, without its newline) is dropped when the file is opened.
"""

from __future__ import annotations

import json
from pathlib import Path

from toolrelay.evaluation._runner import RunKey, RunResult
from toolrelay.exceptions import ConfigurationError, LoadError

__all__ = ["ResultsFile"]


class ResultsFile:
    """The results of one model on one suite, in a JSONL file.

    Args:
        path: The file; created (with its folder) on the first append.
        suite: The suite's name; every line must be of it.
        model: The model's name; every line must be of it.

    Raises:
        LoadError: A complete line is not a result.
        ConfigurationError: The file holds results of another suite or model.
    """

    def __init__(self, path: str | Path, *, suite: str, model: str) -> None:
        self.path = Path(path)
        self.suite = suite
        self.model = model
        self.results: dict[RunKey, RunResult] = {}
        self._read()

    def _read(self) -> None:
        if not self.path.is_file():
            return
        text = self.path.read_text(encoding="utf-8")
        if text and not text.endswith("\n"):
            # An interrupted write: keep the complete lines only.
            text = text[: text.rfind("\n") + 1]
            self.path.write_text(text, encoding="utf-8")
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                result = RunResult.from_json(json.loads(line))
            except (ValueError, KeyError, TypeError) as exc:
                raise LoadError(str(self.path), f"not a run result ({exc})", line=number) from exc
            if (result.suite, result.model) != (self.suite, self.model):
                raise ConfigurationError(
                    f"{self.path} holds results of model {result.model!r} on suite "
                    f"{result.suite!r}, not of {self.model!r} on {self.suite!r}; give another "
                    "results file"
                )
            self.results[result.key] = result

    def append(self, result: RunResult) -> None:
        """Write ``result`` as a line at the end of the file (replacing an earlier one's key)."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.path.open("a", encoding="utf-8") as file:
            file.write(json.dumps(result.to_json(), ensure_ascii=False) + "\n")
            file.flush()
        self.results[result.key] = result

    def missing(self, keys: list[RunKey]) -> list[RunKey]:
        """The ``keys`` the file holds no result for, in their order."""
        return [k for k in keys if k not in self.results]
