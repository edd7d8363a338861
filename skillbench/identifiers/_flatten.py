"""A package's API surface read statically with griffe and flattened into a compact JSON-able mapping.

One entry per reachable object, keyed by its canonical path:

- module ``{"k": "m", "m": {name: target}, "open": bool}``
- class ``{"k": "c", "m": {name: target}, "open": bool, "ga": [types] | None, "p": [...], "kw": bool}``
  (``m`` holds inherited members too; ``ga`` the return types of ``__getattr__``; ``p``/``kw`` its constructor)
- function ``{"k": "f", "p": [keyword names], "kw": bool, "r": [types], "hint": bool}``
- attribute (and property) ``{"k": "a", "r": [types]}``

A member's ``target`` is the canonical path of what it names, or ``""`` when that is outside the surface or cannot be
read (a compiled module without a ``.pyi``): such a name exists, and whatever follows it is unchecked. ``open`` says
the member list may be incomplete (a base class we cannot read, a module ``__getattr__``, a wildcard import from a
compiled module): a name missing from an open object is unchecked, never fabricated. ``types`` are class paths; ``"?"``
stands for a type we cannot follow (it keeps a missing member unchecked). ``hint`` marks return types read from a
numpy-style docstring rather than an annotation: they lead to members, but a member missing there is unchecked.
"""

from __future__ import annotations

import functools
import importlib
import logging
import re
from collections import deque
from pathlib import Path
from typing import Any

import griffe

from skillbench.identifiers._types import UNKNOWN_TYPE

# bases outside the package whose members we know without reading them: a class deriving only from these (and from
# classes of the package) has a complete member list. Others (numpy.ndarray, a compiled base) leave the class open.
_TRANSPARENT_BASES = frozenset({
    "object", "typing.Generic", "typing.Protocol", "abc.ABC", "typing_extensions.Protocol", "typing.NamedTuple",
    "abc.ABCMeta", "typing.Any",
})
_UNION_HEADS = frozenset({"typing.Union", "typing.Optional", "typing_extensions.Union", "Union", "Optional"})
_SELF = frozenset({"typing.Self", "typing_extensions.Self", "Self"})
_PROPERTY_LABELS = frozenset({"property", "cached_property", "cached", "writable"})
_PROPERTY_DECORATORS = ("cache_readonly", "cache_writable", "cached_property", "property", "cached_data")
# Decorators known to keep the signature they wrap. Any other decorator may add, rename or drop keywords at run time
# (scipy's `_axis_nan_policy_factory` adds `keepdims`, `_transition_to_rng` accepts `random_state`): the source's
# keywords are then unchecked unless the typed stubs, which describe the running signature, list them.
_TRANSPARENT_DECORATORS = frozenset({
    "property", "staticmethod", "classmethod", "overload", "abstractmethod", "final", "override", "cache_readonly",
    "cache_writable", "cached_property", "doc", "Appender", "Substitution", "set_module", "cache", "lru_cache",
    "setter", "deleter", "getter", "abstractproperty", "deprecated", "wraps", "unique", "dataclass", "no_type_check",
    "xp_capabilities",  # scipy's: records array-API support and returns the function itself (no wrapper)
})

_PYDANTIC_BASES = frozenset({"pydantic.BaseModel", "pydantic.main.BaseModel"})
_ALIAS_RE = re.compile(r"""\balias\s*=\s*['"]([A-Za-z_][A-Za-z0-9_]*)['"]""")
# External bases whose members are read at run time: the standard library and skillbench's own dependencies, never
# a declared package (that one is read statically). A base outside this list leaves the class open.
_RUNTIME_MODULES = frozenset({"builtins", "enum", "abc", "collections", "collections.abc", "numbers", "typing",
                              "pydantic", "pydantic.main", "dataclasses", "datetime", "decimal", "io", "string"})

logging.getLogger("griffe").setLevel(logging.ERROR)


@functools.cache
def _runtime_members(path: str) -> frozenset[str] | None:
    """The members of an allowed external base (``Exception``, ``enum.Enum``, ``pydantic.BaseModel``), or None."""
    module_name, _, name = path.rpartition(".")
    module_name = module_name or "builtins"
    if module_name not in _RUNTIME_MODULES:
        return None
    try:
        obj = getattr(importlib.import_module(module_name), name)
    except (ImportError, AttributeError):
        return None
    return frozenset(dir(obj)) if isinstance(obj, type) else None  # griffe's per-file notes are not ours to print


def load_package(module: str, search_path: Path, *, stubs: bool) -> tuple[griffe.GriffeLoader, griffe.Module]:
    """Load ``module`` (or its ``-stubs`` package) from ``search_path`` alone, statically: never imported."""
    loader = griffe.GriffeLoader(search_paths=[search_path], allow_inspection=False, force_inspection=False)
    root = loader.load(module, find_stubs_package=stubs)
    loader.resolve_aliases(implicit=True, external=False)
    return loader, root  # type: ignore[return-value]


class _Flattener:
    def __init__(self, loader: griffe.GriffeLoader, root: str, *, stubs: bool):
        self.loader, self.root, self.stubs = loader, root, stubs
        extra_roots: tuple[str, ...] = ()
        self.roots = (root, *extra_roots)
        self.out: dict[str, dict[str, Any]] = {}
        self._all_cache: dict[str, bool] = {}
        self.queue: deque[str] = deque()

    # -- paths ------------------------------------------------------------------------------------------------------
    def _inside(self, path: str) -> bool:
        return any(path == r or path.startswith(r + ".") for r in self.roots)

    def _get(self, path: str) -> Any | None:
        try:
            obj = self.loader.modules_collection.get_member(path)
        except Exception:  # griffe raises KeyError, AliasResolutionError, CyclicAliasError … for an unreadable path
            return None
        return self._final(obj)

    @staticmethod
    def _final(obj: Any) -> Any | None:
        if obj is None:
            return None
        if getattr(obj, "is_alias", False):
            try:
                return obj.final_target
            except Exception:  # an alias into a compiled module or another package
                return None
        return obj

    def _target(self, member: Any) -> str:
        final = self._final(member)
        if final is None or not self._inside(final.path):
            return ""
        return final.path

    def enqueue(self, path: str) -> None:
        if path and path not in self.out and self._inside(path):
            self.out[path] = {}  # reserved, filled when popped
            self.queue.append(path)

    def _compiled(self, obj: Any) -> bool:
        """Defined in a ``.pyi`` the *package* ships beside a compiled module (pandas' ``_libs``, scipy's
        ``_ckdtree``): such a file describes the compiled code for a type checker, often partly. Its classes stay
        open and its signatures unchecked (the typed stubs package, a separate project, is read as complete)."""
        if self.stubs:
            return False
        try:
            path = obj.filepath
        except Exception:  # a namespace or builtin object has no file
            return False
        return isinstance(path, Path) and path.suffix == ".pyi"

    # -- types ------------------------------------------------------------------------------------------------------
    def types(self, expr: Any, owner: Any) -> list[str]:
        """The class paths an annotation names (unions and Optional split, generics reduced to their class)."""
        found: list[str] = []
        self._types(expr, owner, found, 0)
        return sorted(set(found))

    def _types(self, expr: Any, owner: Any, found: list[str], depth: int) -> None:
        if expr is None or depth > 8:
            return
        if isinstance(expr, str):
            found.append(UNKNOWN_TYPE)
            return
        if isinstance(expr, griffe.ExprBinOp) and expr.operator == "|":
            self._types(expr.left, owner, found, depth + 1)
            self._types(expr.right, owner, found, depth + 1)
            return
        if isinstance(expr, griffe.ExprSubscript):
            head = expr.left
            head_path = getattr(head, "canonical_path", "")
            if head_path in _UNION_HEADS:
                inner = expr.slice
                items = inner.elements if isinstance(inner, griffe.ExprTuple) else [inner]
                for item in items:
                    self._types(item, owner, found, depth + 1)
                return
            self._types(head, owner, found, depth + 1)
            return
        if isinstance(expr, griffe.ExprName | griffe.ExprAttribute):
            path = expr.canonical_path if isinstance(expr, griffe.ExprName) else expr.path
            if path in _SELF:
                cls = owner.parent if owner is not None and owner.parent is not None and owner.parent.is_class else None
                found.append(cls.path if cls is not None else UNKNOWN_TYPE)
                return
            if path == "None":
                return
            obj = self._get(path)
            if obj is not None and obj.is_class and self._inside(obj.path):
                found.append(obj.path)
                self.enqueue(obj.path)
            else:
                found.append(UNKNOWN_TYPE)
            return
        if isinstance(expr, griffe.ExprConstant) and expr.value == "None":
            return
        found.append(UNKNOWN_TYPE)

    def _docstring_types(self, func: Any) -> list[str]:
        """Return types a numpy-style docstring names (statsmodels annotates nothing): hints, never proof."""
        if not func.docstring:
            return []
        try:
            sections = func.docstring.parse("numpy", warn_unknown_params=False)
        except Exception:  # a docstring griffe cannot parse says nothing
            return []
        found: list[str] = []
        for section in sections:
            if section.kind.value != "returns":
                continue
            for item in section.value:
                name = str(item.annotation or item.name or "").strip()
                if not name.isidentifier():
                    continue
                try:
                    path = func.parent.resolve(name) if func.parent is not None else ""
                except Exception:  # the name is not in scope
                    continue
                obj = self._get(path)
                if obj is not None and obj.is_class and self._inside(obj.path):
                    found.append(obj.path)
                    self.enqueue(obj.path)
        return sorted(set(found))

    # -- objects ----------------------------------------------------------------------------------------------------
    def run(self) -> dict[str, dict[str, Any]]:
        self.enqueue(self.root)
        while self.queue:
            path = self.queue.popleft()
            obj = self._get(path)
            if obj is None:
                del self.out[path]
                continue
            if obj.is_module:
                self.out[path] = self._module(obj)
            elif obj.is_class:
                self.out[path] = self._class(obj)
            elif obj.is_function:
                self.out[path] = self._function(obj)
            else:
                self.out[path] = {"k": "a", "r": self.types(getattr(obj, "annotation", None), obj)}
        return self.out

    def _module(self, mod: Any) -> dict[str, Any]:
        members: dict[str, str] = {}
        is_open = False
        for name, member in mod.members.items():
            if member.is_alias and getattr(member, "wildcard", None):
                source = self._get(member.wildcard)
                if source is None or not source.is_module:
                    is_open = True  # `from ._compiled import *` we could not read: its names are unknown
                    continue
                # a wildcard griffe left unexpanded (a module-named package of the same name): its public names
                exported = source.exports if isinstance(source.exports, list | set | tuple) else None
                for sub_name, sub in source.members.items():
                    if (sub_name in exported) if exported is not None else not sub_name.startswith("_"):
                        members.setdefault(sub_name, self._target(sub))
                continue
            target = self._target(member)
            members[name] = target
            if target and (not name.startswith("_") or member.is_module):
                self.enqueue(target)
            if getattr(member, "wildcard_imported", False) and self._dynamic_all(member.target_path.rpartition(".")[0]):
                is_open = True  # `from ._distns import *` whose __all__ is computed: what it exports is not static
        self._overload_only(mod, members)
        entry: dict[str, Any] = {"k": "m", "m": members, "open": is_open}
        if is_open:
            entry["why"] = "wildcard"  # the running module's dir() can close it (installed packages only)
        if "__getattr__" in members:  # PEP 562: names made on demand (scipy's lazy submodules, deprecations)
            entry["open"], entry["why"] = True, "getattr"
        return entry

    def _external_bases(self, cls: Any) -> tuple[list[str], bool]:
        """The bases of ``cls`` (and of its ancestors in the package) outside the package; True when one of them
        is neither transparent nor known at run time (then the member list is open)."""
        try:
            chain = [cls, *cls.mro()]
        except Exception:  # a base we cannot resolve makes the order unknowable
            return [], True
        external: list[str] = []
        unknown = False
        for klass in chain:
            if not self._inside(klass.path):
                continue
            if self._compiled(klass):
                unknown = True
            for base in klass.bases:
                head = base.left if isinstance(base, griffe.ExprSubscript) else base
                head_path = getattr(head, "canonical_path", str(head))
                if head_path in _TRANSPARENT_BASES:
                    continue
                resolved = self._get(head_path)
                if resolved is not None and resolved.is_class and self._inside(resolved.path):
                    continue
                if _runtime_members(head_path) is None:
                    unknown = True
                else:
                    external.append(head_path)
        return external, unknown

    def _overload_only(self, obj: Any, members: dict[str, str]) -> None:
        """A stub that declares a function by its ``@overload`` signatures alone (scipy-stubs' ``quad``) gives griffe
        no member, only overloads: one function entry from them (keywords and return types their union)."""
        for name, overloads in (getattr(obj, "overloads", None) or {}).items():
            if not overloads or members.get(name):
                continue
            path = f"{obj.path}.{name}"
            members[name] = path
            if self.out.get(path):
                continue
            names: set[str] = set()
            var_kw = False
            returns: set[str] = set()
            for overload in overloads:
                params, kw = self._params(overload)
                names.update(params)
                var_kw = var_kw or kw
                returns.update(self.types(overload.returns, overload))
            self.out[path] = {"k": "f", "p": sorted(names), "kw": var_kw, "r": sorted(returns), "hint": False,
                              "o": [self._overload(o) for o in overloads]}

    def _dynamic_all(self, module_path: str) -> bool:
        if module_path in self._all_cache:
            return self._all_cache[module_path]
        module = self._get(module_path)
        dunder_all = module.members.get("__all__") if module is not None and module.is_module else None
        value = str(getattr(dunder_all, "value", "") or "") if dunder_all is not None else ""
        dynamic = bool(value) and not (value.startswith(("[", "(")) and "+" not in value and "*" not in value)
        self._all_cache[module_path] = dynamic
        return dynamic

    def _class(self, cls: Any) -> dict[str, Any]:
        external, is_open = self._external_bases(cls)
        compiled = not self.stubs and any(self._compiled(k) for k in [cls, *self._safe_mro(cls)])
        members: dict[str, str] = {}
        for base_path in external:
            members.update(dict.fromkeys(_runtime_members(base_path) or (), ""))
        try:
            all_members = cls.all_members
        except Exception:  # griffe cannot merge the inherited members
            all_members, is_open = dict(cls.members), True
        for name, member in all_members.items():
            target = self._target(member)
            members[name] = target
            if target and not name.startswith("_") or name in ("__init__", "__getitem__", "__call__", "__getattr__"):
                self.enqueue(target)
        self._overload_only(cls, members)
        getattr_types = None
        if "__getattr__" in members or "__getattribute__" in members:
            hook = self._final(all_members.get("__getattr__") or all_members.get("__getattribute__"))
            getattr_types = self.types(getattr(hook, "returns", None), hook) or [UNKNOWN_TYPE]
        constructor = "__init__" if "__init__" in all_members or "__new__" not in all_members else "__new__"
        params, var_kw = self._params(self._final(all_members.get(constructor)))
        if constructor not in all_members:
            var_kw = True  # an inherited constructor we cannot see takes what it takes
        try:
            ancestors = [a.path for a in cls.mro() if self._inside(a.path)]
        except Exception:  # as in _external_bases: the class is open already
            ancestors = []
        if _PYDANTIC_BASES & set(external):
            params, var_kw = self._pydantic_fields(cls, all_members)
        entry = {"k": "c", "m": members, "open": is_open, "ga": getattr_types, "p": params, "kw": var_kw,
                 "b": ancestors}
        if compiled:
            entry["cmp"] = True  # stays open whatever the stubs say: they describe compiled classes partly
        return entry

    @staticmethod
    def _safe_mro(cls: Any) -> list[Any]:
        try:
            return list(cls.mro())
        except Exception:  # unresolvable bases: the class is open anyway
            return []

    def _pydantic_fields(self, cls: Any, all_members: dict[str, Any]) -> tuple[list[str], bool]:
        """A pydantic model's constructor keywords are its fields (and their aliases); any keyword is accepted
        unless the model forbids extra fields (``class M(BaseModel, extra="forbid")``, as qdrant's models do)."""
        names: set[str] = set()
        for name, member in all_members.items():
            final = self._final(member)
            if final is None or not final.is_attribute or name.startswith("_") or "class-attribute" in final.labels \
                    and final.annotation is None:
                continue
            names.add(name)
            alias = _ALIAS_RE.search(str(final.value or ""))
            if alias:
                names.add(alias.group(1))
        try:
            chain = [cls, *cls.mro()]
        except Exception:  # unknowable order: accept any keyword
            return sorted(names), True
        forbids = any("forbid" in str(k.keywords.get("extra", "")) or "forbid" in str(
            getattr(k.members.get("model_config"), "value", "")) for k in chain if self._inside(k.path))
        return sorted(names), not forbids

    def _params(self, func: Any) -> tuple[list[str], bool]:
        if func is None or not getattr(func, "is_function", False):
            return [], True
        names: set[str] = set()
        var_kw = False
        for variant in [func, *(getattr(func, "overloads", None) or [])]:
            for param in variant.parameters:
                kind = param.kind.value if param.kind is not None else ""
                if kind == "variadic keyword":
                    typed = self._typed_kwargs(param.annotation)
                    if typed is None:
                        var_kw = True
                    else:
                        names.update(typed)
                elif kind not in ("positional-only", "variadic positional") and param.name not in ("self", "cls"):
                    names.add(param.name)
        return sorted(names), var_kw

    def _typed_kwargs(self, annotation: Any) -> list[str] | None:
        """The keys of ``**kwds: Unpack[SomeTypedDict]`` (PEP 692: pandas' ``read_csv``), or None (any keyword)."""
        if not isinstance(annotation, griffe.ExprSubscript):
            return None
        if not str(getattr(annotation.left, "canonical_path", "")).endswith("Unpack"):
            return None
        inner = annotation.slice
        head = inner.left if isinstance(inner, griffe.ExprSubscript) else inner
        typed = self._get(getattr(head, "canonical_path", ""))
        if typed is None or not typed.is_class:
            return None
        bases = {str(getattr(b, "canonical_path", b)) for k in [typed, *self._safe_mro(typed)] for b in k.bases}
        if not any(b.endswith("TypedDict") for b in bases):
            return None
        try:
            members = typed.all_members
        except Exception:  # an unreadable base: any keyword
            return None
        return [n for n, m in members.items() if getattr(self._final(m), "is_attribute", False)]

    def _function(self, func: Any) -> dict[str, Any]:
        returns = self.types(func.returns, func)
        for overload in getattr(func, "overloads", None) or []:
            returns = sorted(set(returns) | set(self.types(overload.returns, overload)))
        labels = set(func.labels)
        decorators = {str(d.value).rsplit(".", 1)[-1] for d in func.decorators}
        is_property = bool(labels & _PROPERTY_LABELS) or bool(decorators & set(_PROPERTY_DECORATORS))
        hint = False
        if not returns:
            returns = self._docstring_types(func)
            hint = bool(returns)
        if is_property:
            return {"k": "a", "r": returns, "hint": hint}
        params, var_kw = self._params(func)
        entry: dict[str, Any] = {"k": "f", "p": params, "kw": var_kw, "r": returns, "hint": hint}
        reshaping = {str(d.value).split("(", 1)[0].rsplit(".", 1)[-1] for d in func.decorators}
        if not self.stubs and (reshaping - _TRANSPARENT_DECORATORS or self._compiled(func)):
            entry["dec"] = True  # keywords we cannot vouch for (merge: the stubs' own say, else unchecked)
            entry["kw"] = True
        if getattr(func, "overloads", None):
            entry["o"] = [self._overload(o) for o in func.overloads]
        return entry

    def _overload(self, overload: Any) -> list[Any]:
        """[required keyword-only names, accepted keyword names (None: **kwargs), return types]: a call picks the
        first overload it fits, as a type checker does (``read_csv(…)`` → DataFrame, ``read_csv(…, chunksize=)`` →
        TextFileReader)."""
        required, accepted, var_kw = [], [], False
        for param in overload.parameters:
            kind = param.kind.value if param.kind is not None else ""
            if kind == "variadic keyword":
                var_kw = True
            elif kind not in ("positional-only", "variadic positional") and param.name not in ("self", "cls"):
                accepted.append(param.name)
                if kind == "keyword-only" and param.default is None:
                    required.append(param.name)
        return [sorted(required), None if var_kw else sorted(accepted), self.types(overload.returns, overload)]


def flatten(loader: griffe.GriffeLoader, root: str, *, stubs: bool = False) -> dict[str, dict[str, Any]]:
    """Every object reachable from ``root``'s public names (and the types its annotations name), flattened."""
    return _Flattener(loader, root, stubs=stubs).run()


def merge(source: dict[str, dict[str, Any]], stubs: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """One surface from the package's source and its typed stubs: a name exists when either has it (stubs lag and
    lead the release by a little; precision first), the stubs' return types lead through method chains, keywords
    are the union, and a member list is open only when both are open (the stubs list what a compiled base adds)."""
    out = dict(source)
    for path, entry in stubs.items():
        mine = out.get(path)
        if mine is None or not mine:
            out[path] = entry
            continue
        if mine["k"] != entry["k"]:
            if entry["k"] == "a" and mine["k"] == "f":  # a property in the stubs is a method in the source: reads
                out[path] = {**entry, "r": entry["r"] or mine.get("r", [])}
            continue
        merged = dict(mine)
        if "m" in entry:
            merged["m"] = {**entry["m"], **{k: v for k, v in mine["m"].items() if v or k not in entry["m"]}}
            if mine["k"] == "c" and not mine.get("cmp"):
                # a class the stubs list completely is closed (they list what an external base adds)
                merged["open"] = mine["open"] and entry["open"]
            # a module stays as its source says: stubs lag (scipy-stubs lists no `distributions.norm_gen`)
        if "p" in entry:
            merged["p"] = sorted(set(mine.get("p", [])) | set(entry["p"]))
            # a reshaping decorator's keywords: the stubs describe the running signature
            source_kw = bool(mine.get("kw")) and not mine.get("dec")
            merged["kw"] = source_kw or bool(entry["kw"])
        if entry.get("r") and not entry.get("hint"):
            merged["r"], merged["hint"] = entry["r"], False
            if "o" in entry:
                merged["o"] = entry["o"]
        if entry["k"] == "c":
            # the stubs say whether arbitrary attribute access is part of the type (DataFrame: columns; Series: no)
            merged["ga"] = entry.get("ga")
            merged["b"] = sorted(set(mine.get("b", [])) | set(entry.get("b", [])))
        out[path] = merged
    return out


# Run by `introspect_modules` in a separate, isolated interpreter: it imports the *installed* package's modules and
# prints their dir(). Never used for a fetched wheel (that code would run).
_INTROSPECT = """
import importlib, json, sys, warnings
warnings.simplefilter("ignore")
out = {}
for name in json.loads(sys.argv[1]):
    try:
        out[name] = sorted(dir(importlib.import_module(name)))
    except Exception:
        pass
print(json.dumps(out))
"""


def introspect_modules(objects: dict[str, dict[str, Any]], timeout_s: float = 120.0) -> int:
    """Close the modules a wildcard import left open (a compiled source, a computed ``__all__``) with the names the
    running module has: introspection as the fallback griffe cannot do statically. Only for the installed package
    at the declared version (the caller checks); in a separate ``python -I`` process. The number closed."""
    import json
    import subprocess
    import sys
    import tempfile

    from skillbench.identifiers._source import scrubbed_env

    wanted = sorted(p for p, e in objects.items() if e.get("k") == "m" and e.get("why") == "wildcard")
    if not wanted:
        return 0
    try:
        # no credential in its environment, and a working folder of its own
        done = subprocess.run([sys.executable, "-I", "-c", _INTROSPECT, json.dumps(wanted)], capture_output=True,
                              text=True, timeout=timeout_s, check=False, env=scrubbed_env(),
                              cwd=tempfile.gettempdir())
        names = json.loads(done.stdout.strip().splitlines()[-1]) if done.returncode == 0 else {}
    except (subprocess.TimeoutExpired, ValueError, IndexError):
        return 0  # the modules stay open: unchecked, never fabricated
    for path, members in names.items():
        entry = objects[path]
        for name in members:
            entry["m"].setdefault(name, "")
        entry["open"] = False
        entry["why"] = "introspected"
    return len(names)
