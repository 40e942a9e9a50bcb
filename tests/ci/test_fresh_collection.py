"""README's test command on a machine with only ``.[dev]``: the suite collects without error.

The modules every extra brings (and not ``.[dev]``) are made unimportable in a child
interpreter, which then collects the whole suite. A test module that imports an extra without
skipping first fails here, on any machine, instead of on a newcomer's. Each skip must say
what it needs.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from importlib.metadata import (
    PackageNotFoundError,
    distribution,
    entry_points,
    packages_distributions,
)
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[2]

# Makes the given top-level modules unimportable (and unfindable), then collects the suite.
CHILD = """
import importlib.abc, importlib.util, json, sys

blocked = set(json.loads(sys.argv[1]))


class Blocker(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in blocked:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


sys.meta_path.insert(0, Blocker())
real_find_spec = importlib.util.find_spec


def find_spec(name, package=None):  # as an absent module answers
    if name.partition(".")[0] in blocked:
        return None
    return real_find_spec(name, package)


importlib.util.find_spec = find_spec
import pytest

# Plugins that extras bring (langsmith's, with langchain-core) are not there without them.
plugins = [arg for name in json.loads(sys.argv[2]) for arg in ("-p", f"no:{name}")]
sys.exit(pytest.main(["--collect-only", "-q", "-ra", "-p", "no:cacheprovider", *plugins, "tests"]))
"""


def _requirements(name: str, extras: set[str]) -> list[Requirement]:
    """What distribution ``name`` needs with ``extras`` (none if it is not installed)."""
    try:
        texts = distribution(name).requires or []
    except PackageNotFoundError:
        return []
    needed = []
    for text in texts:
        requirement = Requirement(text)
        marker = requirement.marker
        if marker is None or any(marker.evaluate({"extra": e}) for e in extras | {""}):
            needed.append(requirement)
    return needed


def _closure(roots: list[Requirement]) -> set[str]:
    """The distributions ``roots`` bring, transitively (canonical names)."""
    seen: set[str] = set()
    pending = list(roots)
    while pending:
        requirement = pending.pop()
        name = canonicalize_name(requirement.name)
        if name in seen:
            continue
        seen.add(name)
        pending.extend(_requirements(name, set(requirement.extras)))
    return seen


def _extra_only_distributions() -> set[str]:
    """Distributions installed here by an extra of toolrelay but not by ``.[dev]``."""
    own = distribution("toolrelay")
    extras = set(own.metadata.get_all("Provides-Extra") or [])
    kept = _closure(_requirements("toolrelay", {"dev"}))
    return _closure(_requirements("toolrelay", extras)) - kept


def _extra_only_plugins() -> list[str]:
    """The pytest plugins (``pytest11`` entry points) of those distributions."""
    extra_only = _extra_only_distributions()
    return sorted(
        point.name
        for point in entry_points(group="pytest11")
        if point.dist is not None and canonicalize_name(point.dist.name) in extra_only
    )


def _extra_only_modules() -> set[str]:
    """Top-level modules installed here by an extra of toolrelay but not by ``.[dev]``."""
    extra_only = _extra_only_distributions()
    return {
        module
        for module, names in packages_distributions().items()
        if any(canonicalize_name(name) in extra_only for name in names)
    }


def test_the_suite_collects_without_the_extras_and_every_skip_names_its_need() -> None:
    blocked = _extra_only_modules()
    child = subprocess.run(
        [
            sys.executable,
            "-c",
            CHILD,
            json.dumps(sorted(blocked)),
            json.dumps(_extra_only_plugins()),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    output = child.stdout + child.stderr
    assert child.returncode == 0, f"collection failed without the extras:\n{output[-6000:]}"
    reasons = re.findall(r"^SKIPPED \[\d+\] (\S+): (.*)$", output, flags=re.MULTILINE)
    vague = [(where, why) for where, why in reasons if not re.search(r"\bneeds?\b", why)]
    assert not vague, f"skips that do not say what they need: {vague}"
    # An extra is named with the one command that installs it from a checkout (needs_extra).
    unworded = [
        (where, why)
        for where, why in reasons
        if "extra" in why
        and not re.search(r"needs the ([\w-]+) extra: pip install -e '\.\[\1\]'", why)
    ]
    assert not unworded, f"skips naming an extra without its command: {unworded}"
