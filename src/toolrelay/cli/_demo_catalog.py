"""Finding and loading the demo catalog: ``examples/refund_desk`` of a toolrelay checkout.

The examples are not library code (they are scripts and fixtures), so the demo loads them by
path: ``--catalog PATH``, else ``examples/refund_desk`` under the working directory, else the
copy shipped with the package (the checkout's, or the wheel's under ``toolrelay/_bundled``;
see :mod:`toolrelay.cli._bundled`). A demo catalog is a package folder defining
``build_catalog()`` (tools bound to a fresh, seeded back end on each call), ``TASK`` and
``REQUIRED_TOOLS``. A catalog that speaks other languages also defines ``TASKS`` (the task by
language code, e.g. ``"zh"``) and accepts ``build_catalog(lang=CODE)``.
"""

from __future__ import annotations

import hashlib
import importlib.util
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

from toolrelay.cli._bundled import bundled_root
from toolrelay.exceptions import LoadError, ToolRelayError
from toolrelay.tools import ToolCatalog, as_tools

__all__ = [
    "DEFAULT_CATALOG",
    "DemoCatalog",
    "candidate_paths",
    "demo_catalog_of",
    "import_package",
    "is_demo_catalog",
    "load_demo_catalog",
    "locate_demo_catalog",
    "shown_path",
]

DEFAULT_CATALOG = Path("examples") / "refund_desk"
"""Where the demo catalog lives in a checkout, relative to its root."""

_ATTRIBUTES = ("build_catalog", "TASK", "REQUIRED_TOOLS")


@dataclass(frozen=True, kw_only=True)
class DemoCatalog:
    """A loaded demo catalog.

    Attributes:
        path: The package folder.
        catalog: Its tools, bound to a freshly seeded back end.
        task: What the user asks.
        required_tools: The tools the task needs, in the order they are used.
        language: The language of the task and the catalog's texts (``"en"`` by default).
    """

    path: Path
    catalog: ToolCatalog
    task: str
    required_tools: tuple[str, ...]
    language: str = "en"


def candidate_paths() -> list[Path]:
    """Where the demo catalog is looked for when ``--catalog`` is not given, in order."""
    candidates = [Path.cwd() / DEFAULT_CATALOG]
    root = bundled_root()
    if root is not None:
        candidates.append(root / DEFAULT_CATALOG)
    return candidates


def shown_path(path: Path) -> str:
    """``path`` relative to the working directory when it is under it, for messages."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def locate_demo_catalog(path: Path | None) -> Path:
    """The demo catalog's folder: ``path``, or the first of :func:`candidate_paths` found.

    Raises:
        LoadError: ``path`` is not a package folder, or no candidate exists.
    """
    if path is not None:
        if not path.exists():
            raise LoadError(str(path), "no such folder")
        if not (path / "__init__.py").is_file():
            raise LoadError(str(path), "not a Python package folder (no __init__.py)")
        return path
    for candidate in candidate_paths():
        if (candidate / "__init__.py").is_file():
            return candidate
    raise LoadError(
        str(DEFAULT_CATALOG),
        "the demo catalog was not found; run the command from the root of a toolrelay "
        "checkout, or pass --catalog PATH/TO/refund_desk",
    )


def import_package(path: Path) -> ModuleType:
    """Import the package in folder ``path`` under a private name (once per folder).

    Raises:
        LoadError: Importing it failed.
    """
    resolved = path.resolve()
    digest = hashlib.sha1(str(resolved).encode(), usedforsecurity=False).hexdigest()[:10]
    name = f"_toolrelay_catalog_{digest}"
    loaded = sys.modules.get(name)
    if loaded is not None:
        return loaded
    spec = importlib.util.spec_from_file_location(
        name, resolved / "__init__.py", submodule_search_locations=[str(resolved)]
    )
    if spec is None or spec.loader is None:
        raise LoadError(str(path), "cannot be imported")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        # The package is the user's code: any failure while importing it is a load failure.
        for key in [k for k in sys.modules if k == name or k.startswith(name + ".")]:
            del sys.modules[key]
        raise LoadError(str(path), f"importing failed: {type(exc).__name__}: {exc}") from exc
    return module


def load_demo_catalog(path: Path, *, lang: str = "en") -> DemoCatalog:
    """Import the demo catalog in ``path`` and build its tools on a fresh back end.

    Args:
        path: The package folder.
        lang: The language: ``"en"`` uses ``TASK`` and ``build_catalog()``; any other code
            ``TASKS[lang]`` and ``build_catalog(lang=lang)``.

    Raises:
        LoadError: It cannot be imported, lacks ``build_catalog``/``TASK``/
            ``REQUIRED_TOOLS`` (or the task in ``lang``), or building the catalog fails.
    """
    return demo_catalog_of(import_package(path), path, lang=lang)


def is_demo_catalog(module: ModuleType) -> bool:
    """Whether ``module`` defines ``build_catalog``, ``TASK`` and ``REQUIRED_TOOLS``."""
    return all(hasattr(module, a) for a in _ATTRIBUTES)


def demo_catalog_of(module: ModuleType, path: Path, *, lang: str = "en") -> DemoCatalog:
    """The demo catalog of the imported package ``module`` (from folder ``path``).

    Raises:
        LoadError: As :func:`load_demo_catalog`, after the import.
    """
    missing = [a for a in _ATTRIBUTES if not hasattr(module, a)]
    if missing:
        raise LoadError(str(path), f"not a demo catalog: it defines no {', '.join(missing)}")
    task = module.TASK if lang == "en" else _task_in(module, path, lang)
    try:
        built = module.build_catalog() if lang == "en" else module.build_catalog(lang=lang)
    except ToolRelayError:
        raise
    except Exception as exc:
        raise LoadError(str(path), f"build_catalog() failed: {type(exc).__name__}: {exc}") from exc
    catalog = built if isinstance(built, ToolCatalog) else ToolCatalog(as_tools(built))
    required = module.REQUIRED_TOOLS
    if not isinstance(task, str) or not all(isinstance(n, str) for n in required):
        raise LoadError(str(path), "TASK must be a string and REQUIRED_TOOLS tool names")
    unknown = [n for n in required if n not in catalog]
    if unknown:
        raise LoadError(str(path), f"REQUIRED_TOOLS names tools not in the catalog: {unknown}")
    return DemoCatalog(
        path=path, catalog=catalog, task=task, required_tools=tuple(required), language=lang
    )


def _task_in(module: ModuleType, path: Path, lang: str) -> object:
    """The package's task in ``lang``, from its ``TASKS`` mapping."""
    tasks = getattr(module, "TASKS", None)
    if not isinstance(tasks, Mapping) or lang not in tasks:
        raise LoadError(str(path), f"the demo catalog has no task in {lang!r} (TASKS[{lang!r}])")
    return tasks[lang]
