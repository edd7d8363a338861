"""The suite-format registry: one :class:`Layout` per way of writing a suite, found by name or by detection.

A layout says everything skillbench needs to know about one suite format: how a folder is recognised
(:meth:`Layout.detect`), how it is read and checked into the one :class:`~skillbench.suite._format.Suite`
(:meth:`Layout.preflight`), the roots it resolves — the suite folder, the skills root, the fixtures
(:meth:`Layout.roots`) —, what ``git archive`` takes to materialise it at a ref (:meth:`Layout.archived`),
whether the absence rule grades its unmarked must items (:attr:`Layout.absence_rule`), and its row and file fields
in the docs' table (:func:`layouts_table`). Every stage asks this registry; none names a format.

The built-in layouts, in the order detection tries them:

* ``qdrant`` — ``SUITE_DIR/test-prompts/*.json`` (qdrant's format, and the bundled suite;
  :mod:`skillbench.suite._qdrant`);
* ``dotnet`` — a dotnet/skills tree, ``DIR/tests/<plugin>/<skill>/eval.yaml`` beside ``DIR/plugins/``
  (:mod:`skillbench.suite.dotnet._layout`);
* ``skill-creator`` — a skill folder with ``evals/evals.json``, or a folder of them
  (:mod:`skillbench.suite.skill_creator._layout`).

A new format is one module that defines a :class:`Layout` subclass decorated with :func:`register_layout`, named in
:data:`BUILTIN_MODULES` so it is registered when the registry is first read.

The registry loads the layout modules only when it is first asked (:data:`FORMATS` is read lazily), so building
the command line's parsers imports no loader.
"""

from __future__ import annotations

import importlib
from abc import ABC, abstractmethod
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar, TypeVar, overload

if TYPE_CHECKING:
    from skillbench.suite._config import SuiteConfig
    from skillbench.suite._format import Suite
    from skillbench.suite._validation import PreflightReport

QDRANT, DOTNET, SKILL_CREATOR = "qdrant", "dotnet", "skill-creator"
# The modules that define the built-in layouts, in detection order (qdrant first: it is also the fallback).
BUILTIN_MODULES = (
    "skillbench.suite._qdrant", "skillbench.suite.dotnet._layout", "skillbench.suite.skill_creator._layout",
)
FALLBACK = QDRANT  # a folder no layout recognises is read as qdrant's, whose preflight says what is missing


@dataclass(frozen=True)
class FileField:
    """One field of a layout's files, for the docs: where it is, and what skillbench makes of it."""

    file: str  # e.g. "test-prompts/<name>.json"
    field: str  # e.g. "skill_url"
    meaning: str


@dataclass(frozen=True)
class SuiteRoots:
    """The folders a loaded suite reads: the suite itself, the skills root, and the fixtures (those that exist).

    Attributes:
        suite: the folder the suite was loaded from (``SUITE_DIR``).
        skills: the folder its families are installed from (a family's folder is
            :meth:`~skillbench.suite._format.Suite.family_dir`).
        fixtures: folders a task's workspace files and solutions are read from, when they exist.
    """

    suite: Path
    skills: Path
    fixtures: tuple[Path, ...] = ()


class Layout(ABC):
    """One suite format. Subclass it in the format's own module and decorate the class with :func:`register_layout`.

    The class attributes are the format's documentation (one row of :func:`layouts_table` and its file fields);
    the methods are what the stages call.
    """

    name: ClassVar[str]  # what --format takes and Suite.layout records
    detected_by: ClassVar[str]  # how detect() recognises a folder, in words (docs, --help)
    loads: ClassVar[str]  # what one item of the format becomes (docs)
    roots_doc: ClassVar[str]  # where the suite, its skills and its fixtures are (docs)
    fields: ClassVar[tuple[FileField, ...]] = ()
    # Whether the absence detection rule (skillbench.suite._absence) decides the unmarked must items of the prompts
    # this layout loads: true for imported formats, which have no way to mark an item; a format with its own
    # ``absence`` field opts in per item instead.
    absence_rule: ClassVar[bool] = True

    @abstractmethod
    def detect(self, folder: Path) -> bool:
        """True when ``folder`` is a suite of this format."""

    @abstractmethod
    def preflight(self, suite_dir: Path, *, skills_root: str | Path | None = None, site_base: str | None = None,
                  heldout_prefixes: list[str] | None = None, config: SuiteConfig | None = None,
                  skip_missing: bool = False, trigger_set: str | Path | None = None) -> PreflightReport:
        """Read and check the suite (see :func:`skillbench.suite._validation.preflight`); never raises for a defect."""

    def roots(self, suite: Suite) -> SuiteRoots:
        """The folders the loaded suite reads (by default the suite, its skills root, and ``fixtures/`` and
        ``solutions/`` beside the prompts when they exist)."""
        from skillbench.ledgers import FIXTURES_DIR, SOLUTIONS_DIR

        extra = tuple(p for p in (suite.suite_dir / FIXTURES_DIR, suite.suite_dir / SOLUTIONS_DIR) if p.exists())
        return SuiteRoots(suite.suite_dir, suite.skills_root, extra)

    def archived(self, roots: SuiteRoots) -> tuple[Path, ...]:
        """The folders ``git archive`` takes to materialise the suite at a ref
        (:meth:`skillbench.suite._versions.SuiteRepo.at_commit`): the suite folder, the skills root when it lies
        outside it (qdrant's ``skills/`` beside ``evals/``) and the fixtures. A skills root that holds the suite (a
        skill-creator skill, whose root is its parent) is left out: its families are inside the suite already, and
        archiving it would take the whole repository."""
        suite = roots.suite.resolve()
        extra = [p for p in (roots.skills, *roots.fixtures) if not suite.is_relative_to(p.resolve())]
        return (roots.suite, *(p for p in extra if not p.resolve().is_relative_to(suite)))


_REGISTRY: dict[str, Layout] = {}
_loaded = False
L = TypeVar("L", bound=type[Layout])


def register_layout(cls: L) -> L:
    """Class decorator: register one instance of a :class:`Layout` subclass under its ``name``.

    Raises:
        ValueError: another layout already has the name.
    """
    if cls.name in _REGISTRY and type(_REGISTRY[cls.name]) is not cls:
        raise ValueError(f"suite layout {cls.name!r} is registered twice")
    _REGISTRY[cls.name] = cls()
    return cls


def _load_builtins() -> None:
    global _loaded
    if not _loaded:
        _loaded = True  # first, so a layout module that reads the registry while importing does not recurse
        for module in BUILTIN_MODULES:
            importlib.import_module(module)


def _order(layout: Layout) -> int:
    module = type(layout).__module__
    return BUILTIN_MODULES.index(module) if module in BUILTIN_MODULES else len(BUILTIN_MODULES)


def registered_layouts() -> list[Layout]:
    """Every registered layout, in detection order: the built-ins in :data:`BUILTIN_MODULES`' order (whichever
    module was imported first), then others in the order they were registered."""
    _load_builtins()
    return sorted(_REGISTRY.values(), key=_order)  # stable: registration order among the others


def layout_named(name: str) -> Layout:
    """The layout registered as ``name``.

    Raises:
        ValueError: no layout has that name (the message lists the names).
    """
    _load_builtins()
    try:
        return _REGISTRY[name]
    except KeyError:
        raise ValueError(f"unknown suite format {name!r} (use one of: {', '.join(FORMATS)})") from None


class _Names(Sequence[str]):
    """The registered layouts' names, read when first used: ``--format``'s choices cost nothing to declare."""

    def _names(self) -> list[str]:
        return [layout.name for layout in registered_layouts()]

    @overload
    def __getitem__(self, index: int) -> str: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[str]: ...
    def __getitem__(self, index):  # type: ignore[no-untyped-def]
        return self._names()[index]

    def __len__(self) -> int:
        return len(self._names())

    def __iter__(self) -> Iterator[str]:
        return iter(self._names())

    def __contains__(self, name: object) -> bool:
        return name in self._names()

    def __repr__(self) -> str:
        return repr(tuple(self._names()))


FORMATS: Sequence[str] = _Names()


def detect_layout(suite_dir: str | Path) -> Layout:
    """The first registered layout that recognises the folder, else the fallback (qdrant's, whose preflight says
    what is missing)."""
    folder = Path(suite_dir)
    for layout in registered_layouts():
        if layout.detect(folder):
            return layout
    return layout_named(FALLBACK)


def detect_format(suite_dir: str | Path) -> str:
    """The name of :func:`detect_layout`'s layout."""
    return detect_layout(suite_dir).name


def is_suite(suite_dir: str | Path) -> bool:
    """True when some layout recognises the folder (the fallback does not make a folder a suite)."""
    folder = Path(suite_dir)
    return any(layout.detect(folder) for layout in registered_layouts())


def detection_summary() -> str:
    """How each registered layout is recognised, in one plain line (``validate --help``)."""
    rules = [f"{layout.name} when {layout.detected_by.split(' (')[0]}" for layout in registered_layouts()]
    return "; ".join(rules).replace("`", "") + f"; else {FALLBACK}"


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def layouts_table() -> str:
    """The registered layouts as a GitHub-flavoured markdown table (format, detection, roots, what it loads, its file
    fields), for the docs site (``<!-- skillbench-table: skillbench.suite:layouts_table -->``)."""
    rows = ["| Format | Detected when | Roots (suite, skills, fixtures) | Loads | File fields |",
            "| --- | --- | --- | --- | --- |"]
    for layout in registered_layouts():
        fields = "<br>".join(f"`{_cell(f.file)}` `{_cell(f.field)}`: {_cell(f.meaning)}" for f in layout.fields)
        absence = "; an unmarked must item is graded by the absence rule" if layout.absence_rule else ""
        rows.append(f"| `{layout.name}` | {_cell(layout.detected_by)} | {_cell(layout.roots_doc)} | "
                    f"{_cell(layout.loads + absence)} | {fields} |")
    return "\n".join(rows) + "\n"

