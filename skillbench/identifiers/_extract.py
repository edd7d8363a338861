"""The identifiers an answer uses, resolved against the suite's declared surfaces.

Markdown is read with mistune (fenced blocks with their language tag, inline code spans); Python with :mod:`ast`
(never regex-guessed): imports and their aliases, simple assignments that fix a variable's type, method chains
through the surfaces' return types, keyword arguments of resolved callables. What cannot be decided is
``unchecked``, never ``unresolved``:

- a receiver of unknown type (a local variable, a function's parameter), or a type the surface cannot follow;
- an attribute *read* on an instance (``df.price`` may be a column; an attribute set outside ``__init__``);
- a name missing from an open object (a module ``__getattr__``, a base class we cannot read);
- a keyword of a callable that takes ``**kwargs``;
- a member missing from a type read from a docstring rather than an annotation (statsmodels' results);
- code in a language the suite did not declare.

String literals are data, not code: ``"pd.fake"`` is no identifier.
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass
from typing import Any

import mistune
import yaml

from skillbench.identifiers._model import RESOLVED, UNCHECKED, UNRESOLVED, Identifier
from skillbench.identifiers._surface import Surface, Surfaces
from skillbench.identifiers._types import UNKNOWN_TYPE

# The aliases the libraries' own documentation uses, applied only when the answer shows no import or assignment of
# the name (answers often quote a line without its imports) and only to a declared surface.
CONVENTIONAL_ALIASES = {
    "pd": "pandas", "np": "numpy", "sm": "statsmodels.api", "smf": "statsmodels.formula.api", "sp": "scipy",
    "plt": "matplotlib.pyplot", "sns": "seaborn", "tsa": "statsmodels.tsa.api",
    "models": "qdrant_client.models",  # qdrant's documentation: `from qdrant_client import models`
}
# The name every pandas answer gives its frame: read as a DataFrame when the answer names no other frame library (a
# polars or Spark `df` has other methods), and only when not assigned in the answer (an assignment says what it is).
CONVENTIONAL_FRAMES = {"df": ("pandas", "pandas.core.frame.DataFrame")}
_OTHER_FRAMES_RE = re.compile(r"\b(?:polars|pyspark|spark|dask|modin|cudf|vaex|ibis|datatable|pyarrow|duckdb|koalas|"
                              r"geopandas|snowpark|sqlframe|daft|narwhals)\b|\bpl\.[A-Za-z_]")
PYTHON_TAGS = frozenset({"python", "py", "python3", "py3", "ipython", "pycon", "ipython3", "jupyter"})
CONFIG_TAGS = frozenset({"json", "jsonc", "yaml", "yml"})
REST_TAGS = frozenset({"http", "rest", "bash", "sh", "shell", "console", "curl", "zsh", ""})
MAX_ANSWER_CHARS = 1_000_000  # an answer longer than this is cut: bounded time, whatever a run wrote
MAX_BLOCK_LINES = 3_000
MAX_CONFIG_CHARS = 100_000  # a JSON/YAML block read for its keys (PyYAML is pure Python: seconds per megabyte)
MAX_CONFIG_KEYS = 2_000
MAX_PIECE_PARSES = 2_000  # parse attempts for one fragment read statement by statement
MAX_DEPTH = 200  # deeper expressions are left unchecked (ast itself refuses far deeper ones)
QUOTE_CHARS = 200
_REST_RE = re.compile(r"\b(GET|POST|PUT|PATCH|DELETE)\s+(?:https?://[^\s/]+)?(/[A-Za-z0-9_{}\-./:%]*)")
_CURL_RE = re.compile(r"curl\b[^\n]*?-X\s*(GET|POST|PUT|PATCH|DELETE)\b[^\n]*?https?://[^\s/'\"]+(/[^\s'\"?]*)")
_OTHER_TOKEN_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+")


@dataclass(frozen=True)
class _Val:
    """What an expression evaluates to, as far as the surfaces tell."""

    kind: str  # module | class | func | inst | opaque | unknown
    paths: tuple[str, ...] = ()
    surface: Surface | None = None
    hint: bool = False  # an instance whose type came from a docstring: missing members stay unchecked


_UNKNOWN = _Val("unknown")


def _quote(line: str) -> str:
    return line.strip()[:QUOTE_CHARS]


class _Python:
    """Evaluates one answer's Python (blocks and spans share the imports: an answer shows them once)."""

    def __init__(self, surfaces: Surfaces, out: list[Identifier], language: str):
        self.surfaces, self.out, self.language = surfaces, out, language
        self.env: dict[str, _Val] = {}
        self.frames: dict[str, _Val] = {}  # CONVENTIONAL_FRAMES this answer may use (check_answer decides)
        self.lines: list[str] = []
        self.depth = 0

    # -- emitting ---------------------------------------------------------------------------------------------------
    def emit(self, node: ast.AST, text: str, target: str, kind: str, status: str, surface: Surface | None) -> None:
        lineno = getattr(node, "lineno", 1) - 1
        line = self.lines[lineno] if 0 <= lineno < len(self.lines) else ""
        self.out.append(Identifier(text=text[:160], target=target if status != UNCHECKED or surface else "",
                                   kind=kind, language=self.language, status=status,
                                   surface=surface.label if surface is not None else "", quote=_quote(line)))

    # -- values -----------------------------------------------------------------------------------------------------
    def _value_of(self, surface: Surface, target: str) -> _Val:
        entry = surface.get(target) if target else None
        if not entry:
            return _Val("opaque", (target,), surface)
        kind = entry.get("k")
        if kind == "m":
            return _Val("module", (target,), surface)
        if kind == "c":
            return _Val("class", (target,), surface)
        if kind == "f":
            return _Val("func", (target,), surface)
        return self._instance(surface, entry.get("r") or [], bool(entry.get("hint")))

    @staticmethod
    def _union(values: list[_Val]) -> _Val:
        """One member found on several candidate types (``Rolling | Window``): its callables' keywords are the union."""
        if len(values) == 1:
            return values[0]
        kinds = {v.kind for v in values}
        if len(kinds) == 1 and kinds <= {"func", "inst"}:
            paths = tuple(dict.fromkeys(p for v in values for p in v.paths))
            return _Val(values[0].kind, paths, values[0].surface, any(v.hint for v in values))
        return _Val("opaque", (), values[0].surface)

    @staticmethod
    def _instance(surface: Surface, types: list[str], hint: bool) -> _Val:
        if not types:
            return _Val("opaque", (), surface)
        return _Val("inst", tuple(types), surface, hint)

    def module_value(self, dotted: str) -> _Val | None:
        """A declared module by its dotted path (``statsmodels.formula.api``), walking its surface's members."""
        surface = self.surfaces.for_path(dotted)
        if surface is None:
            return None
        if surface.objects is None:
            return _Val("opaque", (dotted,), surface)
        parts = dotted.split(".")
        val = _Val("module", (parts[0],), surface)
        for part in parts[1:]:
            entry = surface.get(val.paths[0]) if val.kind == "module" else None
            if entry is None or part not in entry.get("m", {}):
                return None
            val = self._value_of(surface, entry["m"][part])
        return val

    # -- names ------------------------------------------------------------------------------------------------------
    def name(self, node: ast.Name) -> _Val:
        if node.id in self.env:
            return self.env[node.id]
        if node.id in self.frames:
            return self.frames[node.id]
        module = CONVENTIONAL_ALIASES.get(node.id)
        if module is not None and self.surfaces.for_path(module) is not None:
            return self.module_value(module) or _UNKNOWN
        return _UNKNOWN

    def member(self, base: _Val, attr: str, called: bool) -> tuple[str, str, _Val]:
        """(status, target, value) of ``base.attr``."""
        surface = base.surface
        if surface is None or surface.objects is None or base.kind in ("unknown", "opaque"):
            return UNCHECKED, "", _Val("opaque", (), surface) if surface is not None else _UNKNOWN
        if attr.startswith("__") and attr.endswith("__"):
            return UNCHECKED, "", _Val("opaque", (), surface)  # `__file__`, `__name__`: the runtime's, not the API's
        if base.kind in ("module", "class"):
            entry = surface.get(base.paths[0]) or {}
            members = entry.get("m", {})
            if attr in members:
                return RESOLVED, f"{base.paths[0]}.{attr}", self._value_of(surface, members[attr])
            if entry.get("open", True):
                return UNCHECKED, "", _Val("opaque", (), surface)
            return UNRESOLVED, f"{base.paths[0]}.{attr}", _Val("opaque", (), surface)
        if base.kind == "inst":
            return self._instance_member(base, attr, called)
        return UNCHECKED, "", _Val("opaque", (), surface)  # a function's attribute (`f.__doc__`)

    def _instance_member(self, base: _Val, attr: str, called: bool) -> tuple[str, str, _Val]:
        surface = base.surface
        assert surface is not None
        decidable = not base.hint and called
        candidates = []
        found = [(path, (surface.get(path) or {}).get("m", {}).get(attr)) for path in base.paths]
        found = [(path, target) for path, target in found if target is not None]
        if found:
            return RESOLVED, f"{found[0][0]}.{attr}", self._union([self._value_of(surface, t) for _, t in found])
        for path in base.paths:
            entry = surface.get(path) if path != UNKNOWN_TYPE else None
            if not entry or entry.get("k") != "c":
                decidable = False
                continue
            candidates.append(path)
            if entry.get("open", True) or surface.subclass_has(path, attr):
                decidable = False
            getattr_types = entry.get("ga")
            if getattr_types is not None:  # a missing name becomes whatever __getattr__ returns: callable?
                for ga in getattr_types:
                    ga_entry = surface.get(ga) if ga != UNKNOWN_TYPE else None
                    if not ga_entry or ga_entry.get("open", True) or "__call__" in ga_entry.get("m", {}):
                        decidable = False
        target = f"{candidates[0]}.{attr}" if candidates else ""
        if decidable and candidates:
            return UNRESOLVED, target, _Val("opaque", (), surface)
        return UNCHECKED, target, _Val("opaque", (), surface)

    # -- expressions ------------------------------------------------------------------------------------------------
    def expr(self, node: ast.AST | None, called: bool = False) -> _Val:
        if node is None:
            return _UNKNOWN
        self.depth += 1
        try:
            if self.depth > MAX_DEPTH:
                return _UNKNOWN
            if isinstance(node, ast.Name):
                return self.name(node)
            if isinstance(node, ast.Attribute):
                return self.attribute(node, called)
            if isinstance(node, ast.Call):
                return self.call(node)
            if isinstance(node, ast.Subscript):
                return self.subscript(node)
            if isinstance(node, ast.Constant | ast.JoinedStr):
                return _UNKNOWN  # a string is data, and an f-string's parts are not API names either
            if isinstance(node, ast.Lambda):
                self.scoped(node.args, [node.body])
                return _UNKNOWN
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.expr):
                    self.expr(child)
                elif isinstance(child, ast.comprehension):
                    self.expr(child.iter)
                    self.bind(child.target, _UNKNOWN)
                    for cond in child.ifs:
                        self.expr(cond)
            return _UNKNOWN
        finally:
            self.depth -= 1

    def attribute(self, node: ast.Attribute, called: bool) -> _Val:
        base = self.expr(node.value)
        text = f"{_text(node.value)}.{node.attr}"
        if base.kind == "unknown":
            return _UNKNOWN
        status, target, val = self.member(base, node.attr, called)
        self.emit(node, text, target, "name", status, base.surface)
        return val

    def call(self, node: ast.Call) -> _Val:
        func = self.expr(node.func, called=True)
        for arg in node.args:
            self.expr(arg)
        for keyword in node.keywords:
            self.expr(keyword.value)
        surface = func.surface
        if surface is None or surface.objects is None or func.kind not in ("func", "class"):
            return _UNKNOWN if surface is None else _Val("opaque", (), surface)
        entries = [surface.get(p) or {} for p in func.paths]
        entry = entries[0]
        params = {name for e in entries for name in e.get("p", [])}
        var_kw = any(bool(e.get("kw", True)) for e in entries)
        for keyword in node.keywords:
            if keyword.arg is None:
                continue  # **options: names we cannot see
            text = f"{_text(node.func)}({keyword.arg}=...)"
            target = f"{func.paths[0]}({keyword.arg})"
            if keyword.arg in params:
                status = RESOLVED
            elif var_kw:
                status = UNCHECKED
            else:
                status = UNRESOLVED
            self.emit(keyword.value, text, target, "keyword", status, surface)
        if func.kind == "class":
            return _Val("inst", func.paths, surface)
        if len(entries) > 1:
            types = sorted({t for e in entries for t in (e.get("r") or [UNKNOWN_TYPE])})
            return self._instance(surface, types, any(bool(e.get("hint")) for e in entries))
        given = {k.arg for k in node.keywords if k.arg}
        for required, accepted, returns in entry.get("o") or []:
            if set(required) <= given and (accepted is None or given <= set(accepted)) and returns:
                return self._instance(surface, returns, bool(entry.get("hint")))
        return self._instance(surface, entry.get("r") or [], bool(entry.get("hint")))

    def subscript(self, node: ast.Subscript) -> _Val:
        base = self.expr(node.value)
        self.expr(node.slice)
        if base.kind != "inst" or base.surface is None:
            return _UNKNOWN if base.surface is None else _Val("opaque", (), base.surface)
        types: list[str] = []
        for path in base.paths:
            entry = base.surface.get(path) or {}
            getter = entry.get("m", {}).get("__getitem__")
            getter_entry = base.surface.get(getter) if getter else None
            types.extend((getter_entry or {}).get("r") or [UNKNOWN_TYPE])
        return self._instance(base.surface, sorted(set(types)), base.hint)

    # -- statements -------------------------------------------------------------------------------------------------
    def bind(self, target: ast.AST, val: _Val) -> None:
        if isinstance(target, ast.Name):
            self.env[target.id] = val
        elif isinstance(target, ast.Tuple | ast.List):
            for elt in target.elts:
                self.bind(elt, _UNKNOWN)
        elif isinstance(target, ast.Starred):
            self.bind(target.value, _UNKNOWN)
        else:  # df["x"] = …, obj.attr = …: the receiver's own identifiers still count
            self.expr(target)

    def scoped(self, args: ast.arguments, body: list[ast.AST]) -> None:
        saved = dict(self.env)
        for default in args.defaults + [d for d in args.kw_defaults if d is not None]:
            self.expr(default)
        for arg in args.posonlyargs + args.args + args.kwonlyargs + [a for a in (args.vararg, args.kwarg) if a]:
            self.env[arg.arg] = _UNKNOWN
        for stmt in body:
            self.stmt(stmt) if isinstance(stmt, ast.stmt) else self.expr(stmt)
        self.env = saved

    def stmt(self, node: ast.stmt) -> None:
        if isinstance(node, ast.Import):
            for alias in node.names:
                self.import_(node, alias.name, alias.asname)
        elif isinstance(node, ast.ImportFrom):
            if node.level == 0 and node.module:
                for alias in node.names:
                    self.import_from(node, node.module, alias.name, alias.asname)
        elif isinstance(node, ast.Assign):
            val = self.expr(node.value)
            for target in node.targets:
                self.bind(target, val if isinstance(target, ast.Name) else _UNKNOWN)
        elif isinstance(node, ast.AnnAssign | ast.AugAssign):
            val = self.expr(node.value) if node.value is not None else _UNKNOWN
            self.bind(node.target, val if isinstance(node, ast.AnnAssign) else _UNKNOWN)
        elif isinstance(node, ast.For | ast.AsyncFor):
            self.expr(node.iter)
            self.bind(node.target, _UNKNOWN)
            self.body(node.body + node.orelse)
        elif isinstance(node, ast.With | ast.AsyncWith):
            for item in node.items:
                self.expr(item.context_expr)
                if item.optional_vars is not None:
                    self.bind(item.optional_vars, _UNKNOWN)
            self.body(node.body)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            for deco in node.decorator_list:
                self.expr(deco)
            self.env[node.name] = _UNKNOWN
            self.scoped(node.args, node.body)
        elif isinstance(node, ast.ClassDef):
            for base in node.bases:
                self.expr(base)
            self.env[node.name] = _UNKNOWN
            saved = dict(self.env)
            self.body(node.body)
            self.env = saved
        else:
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.stmt):
                    self.stmt(child)
                elif isinstance(child, ast.expr):
                    self.expr(child)
                elif isinstance(child, ast.ExceptHandler):
                    if child.type is not None:
                        self.expr(child.type)
                    if child.name:
                        self.env[child.name] = _UNKNOWN
                    self.body(child.body)

    def body(self, stmts: list[ast.stmt]) -> None:
        for stmt in stmts:
            self.stmt(stmt)

    def import_(self, node: ast.AST, dotted: str, asname: str | None) -> None:
        surface = self.surfaces.for_path(dotted)
        if surface is None:
            self.env[asname or dotted.split(".")[0]] = _UNKNOWN
            return
        val = self.module_value(dotted)
        if surface.objects is None:
            status = UNCHECKED
        else:
            status = RESOLVED if val is not None else UNRESOLVED
        self.emit(node, f"import {dotted}", dotted, "name", status, surface)
        if asname:
            self.env[asname] = val or _Val("opaque", (), surface)
        else:
            head = dotted.split(".")[0]
            self.env[head] = self.module_value(head) or _Val("opaque", (), surface)

    def import_from(self, node: ast.AST, module: str, name: str, asname: str | None) -> None:
        surface = self.surfaces.for_path(module)
        if surface is None or name == "*":
            if name != "*":
                self.env[asname or name] = _UNKNOWN
            return
        base = self.module_value(module)
        if base is None:
            status, target, val = (UNRESOLVED if surface.objects is not None else UNCHECKED), module, _UNKNOWN
        else:
            status, target, val = self.member(base, name, called=False)
            if base.kind == "module" and status == UNCHECKED and surface.objects is not None:
                # `from statsmodels.tsa.arima import model`: a submodule not re-exported by its package
                sub = self.module_value(f"{module}.{name}")
                if sub is not None:
                    status, target, val = RESOLVED, f"{module}.{name}", sub
        self.emit(node, f"from {module} import {name}", target, "name", status, surface)
        self.env[asname or name] = val if val.surface is not None else _Val("opaque", (), surface)

    # -- a block of source ------------------------------------------------------------------------------------------
    def run(self, source: str) -> None:
        source = _strip_prompts(source)
        self.lines = source.splitlines()[:MAX_BLOCK_LINES]
        text = "\n".join(self.lines)
        tree = _parse(text)
        if tree is not None:
            self.body(tree.body)
            return
        self._run_pieces()

    def _run_pieces(self) -> None:
        """A fragment that does not parse as a whole: the longest statements that do, line by line (a `...`
        placeholder line, a prose line or an unclosed call skips only itself)."""
        i, n = 0, len(self.lines)
        budget = MAX_PIECE_PARSES  # an adversarial fragment (thousands of unclosed calls) costs bounded time
        while i < n and budget > 0:
            parsed = None
            for j in range(min(n, i + 25), i, -1):
                budget -= 1
                chunk = "\n".join(self.lines[i:j])
                tree = _parse(_dedent(chunk))
                if tree is not None and tree.body:
                    parsed = (tree, j)
                    break
            if parsed is None:
                i += 1
                continue
            tree, j = parsed
            offset = i
            for node in ast.walk(tree):
                if hasattr(node, "lineno"):
                    node.lineno += offset  # type: ignore[attr-defined]
            self.body(tree.body)
            i = j

    def span(self, code: str) -> None:
        """Inline code: an expression (`pd.merge_asof`, `rolling(..., closed="left")`) or one statement."""
        self.lines = [code]
        tree = _parse(code.strip())
        if tree is not None:
            self.body(tree.body)


def _strip_prompts(source: str) -> str:
    lines = source.splitlines()
    if not any(line.lstrip().startswith(">>> ") for line in lines):
        return source
    kept = []
    for line in lines:
        stripped = line.lstrip()
        if stripped.startswith((">>> ", "... ")) or stripped in (">>>", "..."):
            kept.append(stripped[4:])
        else:
            kept.append("")  # output lines: blank keeps line numbers for the quotes
    return "\n".join(kept)


def _dedent(text: str) -> str:
    import textwrap

    return textwrap.dedent(text)


def _parse(text: str) -> ast.Module | None:
    try:
        return ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError):
        return None


def _text(node: ast.AST) -> str:
    """How the answer wrote an expression, with calls' arguments shortened to `(...)` (iteratively: a chain of a
    thousand calls is one line of an answer, not a thousand frames)."""
    parts: list[str] = []
    while len(parts) < 64:
        if isinstance(node, ast.Attribute):
            parts.append(f".{node.attr}")
            node = node.value
        elif isinstance(node, ast.Call):
            parts.append("(...)")
            node = node.func
        elif isinstance(node, ast.Subscript):
            parts.append("[...]")
            node = node.value
        else:
            parts.append(node.id if isinstance(node, ast.Name) else "…")
            break
    else:
        parts.append("…")
    return "".join(reversed(parts))


def _blocks(text: str) -> tuple[list[tuple[str, str]], list[str]]:
    """(language, code) of every fenced or indented block, and every inline code span, in order."""
    markdown = mistune.create_markdown(renderer=None)
    tokens = markdown(text)
    blocks: list[tuple[str, str]] = []
    spans: list[str] = []
    stack: list[Any] = list(reversed(tokens if isinstance(tokens, list) else []))
    while stack:
        token = stack.pop()
        if not isinstance(token, dict):
            continue
        if token.get("type") == "block_code":
            info = ((token.get("attrs") or {}).get("info") or "").strip().split()
            blocks.append(((info[0] if info else "").lower(), token.get("raw", "")))
        elif token.get("type") == "codespan":
            spans.append(token.get("raw", ""))
        stack.extend(reversed(token.get("children") or []))
    return blocks, spans


def _rest(text: str, language: str, surfaces: Surfaces, out: list[Identifier]) -> bool:
    """REST paths (``PUT /collections/{name}/points``, ``curl -X PUT http://…/collections/…``) resolved against the
    declared HTTP API; the JSON body that follows one in the same block is checked against its request model.
    True when the text held a REST call."""
    declared = [s for s in surfaces.config_surfaces() if s.spec.rest_modules]
    if not declared:
        return False
    lines = text.splitlines()
    seen = False
    offset = 0
    for line in lines:
        for match in list(_REST_RE.finditer(line)) + list(_CURL_RE.finditer(line)):
            seen = True
            method, path = match.group(1), match.group(2).split("?")[0].rstrip("/") or "/"
            for surface in declared:
                if surface.objects is None or not _api_root(surface, path):
                    # no declared route starts like it: another service's URL (qdrant's skills curl their own
                    # snippet search at skills.qdrant.tech), not a call of this API
                    status, target, body = UNCHECKED, "", ""
                else:
                    target, body = _match_rest(surface, method, path)
                    status = RESOLVED if target else UNRESOLVED
                    target = target or f"{method} {path}"
                out.append(Identifier(text=f"{method} {path}"[:160], target=target, kind="rest_path",
                                      language=language, status=status, surface=surface.label, quote=_quote(line)))
                data = _json_after(text, offset + match.end()) if body else None
                if data is not None:
                    _body_keys(surface, body, data, text, language, out, 0)
        offset += len(line) + 1
    return seen


def _api_root(surface: Surface, path: str) -> bool:
    """Whether a declared route shares the path's first segment (``/collections``, ``/cluster``, ``/``)."""
    first = next((p for p in path.split("/") if p), "")
    return any(next((p for p in template.split("/") if p), "") == first for _m, template, _b in surface.rest)


def _match_rest(surface: Surface, method: str, path: str) -> tuple[str, str]:
    """(``METHOD /template``, its request model) of the declared call a path matches, or ("", "")."""
    parts = [p for p in path.split("/") if p]
    for m, template, body in surface.rest:
        if m != method:
            continue
        tparts = [p for p in template.split("/") if p]
        if len(tparts) == len(parts) and all(t.startswith("{") or t == p or p.startswith(("{", "<", ":"))
                                             for t, p in zip(tparts, parts, strict=True)):
            return f"{m} {template}", body
    return "", ""


def _json_after(text: str, start: int) -> Any:
    """The JSON object that follows a REST call (an http block's body, curl's ``-d '{…}'``), or None."""
    brace = text.find("{", start)
    if brace < 0 or brace - start > 400:  # far away: not this call's body
        return None
    try:
        data, _end = json.JSONDecoder().raw_decode(text, brace)
    except (ValueError, RecursionError):
        return None
    return data if isinstance(data, dict) else None


def _body_keys(surface: Surface, model: str, data: dict[str, Any], text: str, language: str,
               out: list[Identifier], depth: int) -> None:
    """Keys of a request body against the model's fields: unknown keys are flagged only where the model forbids
    extra fields; a field typed as one model is followed into its object, anything looser (a payload, a union) not."""
    entry = surface.get(model)
    if not entry or entry.get("k") != "c" or depth > 12:
        return
    fields, closed = set(entry.get("p", [])), not entry.get("kw", True)
    for key, value in list(data.items())[:500]:
        key = str(key)
        status = RESOLVED if key in fields else UNRESOLVED if closed else UNCHECKED
        line = next((ln for ln in text.splitlines() if f'"{key}"' in ln), "")
        out.append(Identifier(text=key[:160], target=f"{model}.{key}", kind="config_key", language=language,
                              status=status, surface=surface.label, quote=_quote(line)))
        if status == RESOLVED and isinstance(value, dict):
            types = (surface.get(entry.get("m", {}).get(key, "")) or {}).get("r") or []
            if len(types) == 1 and types[0] != UNKNOWN_TYPE:
                _body_keys(surface, types[0], value, text, language, out, depth + 1)


def _config_keys(code: str, language: str, surfaces: Surfaces, out: list[Identifier]) -> None:
    """A free-standing JSON/YAML block: its keys may be payload data (``{"city": …}``) as well as configuration, and
    nothing says which model holds them, so they are counted unchecked. (The body of a REST call is checked against
    its request model: :func:`_rest`.)"""
    declared = [s for s in surfaces.config_surfaces() if s.spec.config_models]
    if not declared:
        return
    data = _load_config_block(code[:MAX_CONFIG_CHARS], language)
    if data is None:
        return
    for key, line in _keys(data, code, [MAX_CONFIG_KEYS]):
        out.append(Identifier(text=key[:160], target="", kind="config_key", language=language, status=UNCHECKED,
                              surface="", quote=_quote(line)))


def _load_config_block(code: str, language: str) -> Any:
    try:
        if language.startswith("json"):
            return json.loads(code)
        return yaml.safe_load(code)
    except (ValueError, yaml.YAMLError, RecursionError):
        return None


def _keys(data: Any, code: str, budget: list[int], depth: int = 0) -> list[tuple[str, str]]:
    """Every key of a parsed block, depth first, within ``budget`` nodes in all (YAML aliases share one object many
    times: a "billion laughs" block is a tree of 10⁹ nodes built from 10 lines)."""
    found: list[tuple[str, str]] = []
    if depth > 20 or budget[0] <= 0:
        return found
    budget[0] -= 1
    if isinstance(data, dict):
        for key, value in list(data.items())[:200]:
            line = next((ln for ln in code.splitlines() if str(key) in ln), "")
            found.append((str(key), line))
            found.extend(_keys(value, code, budget, depth + 1))
    elif isinstance(data, list):
        for item in data[:200]:
            found.extend(_keys(item, code, budget, depth + 1))
    return found


def _other_language(code: str, language: str, out: list[Identifier]) -> None:
    """Code in a language the suite did not declare: its dotted names counted, all unchecked."""
    seen: set[str] = set()
    for line in code.splitlines()[:MAX_BLOCK_LINES]:
        for match in _OTHER_TOKEN_RE.finditer(line):
            token = match.group(0)
            if token not in seen:
                seen.add(token)
                out.append(Identifier(text=token[:160], target="", kind="name", language=language, status=UNCHECKED,
                                      surface="", quote=_quote(line)))


def check_answer(text: str, surfaces: Surfaces) -> list[Identifier]:
    """Every identifier the answer uses in its code, each resolved, unresolved or unchecked (one per distinct
    identifier and status, with the first line that used it as its quote)."""
    text = text[:MAX_ANSWER_CHARS]
    found: list[Identifier] = []
    blocks, spans = _blocks(text)
    python_declared = "python" in surfaces.languages
    py = _Python(surfaces, found, "python")
    py.frames = _conventional_frames(text, surfaces)
    for language, code in blocks:
        if language in PYTHON_TAGS or (language == "" and python_declared and _parse(code) is not None):
            if python_declared:
                py.language = "python"
                _guarded(py.run, code)
            else:
                _other_language(code, language or "python", found)
            continue
        if language in REST_TAGS:
            if not _rest(code, language or "text", surfaces, found) and language:
                _other_language(code, language, found)
            continue
        if language in CONFIG_TAGS:
            _config_keys(code, language, surfaces, found)
            continue
        _other_language(code, language or "text", found)
    if python_declared:
        py.language = ""
        for span in spans:
            _guarded(py.span, span)
    _rest("\n".join(spans), "", surfaces, found)
    return _distinct(found)


def _conventional_frames(text: str, surfaces: Surfaces) -> dict[str, _Val]:
    """The conventional frame names (``df``) this answer may be read with: a declared pandas surface that has the
    class, and no other frame library named anywhere in the answer."""
    if _OTHER_FRAMES_RE.search(text):
        return {}
    out = {}
    for name, (module, cls) in CONVENTIONAL_FRAMES.items():
        surface = surfaces.for_path(module)
        if surface is not None and surface.objects is not None and (surface.get(cls) or {}).get("k") == "c":
            out[name] = _Val("inst", (cls,), surface)
    return out


def _guarded(read: Any, code: str) -> None:
    """A block whose expressions nest deeper than the interpreter's stack is left out (its identifiers unread),
    never a crash of the pass that reads every answer."""
    try:
        read(code)
    except RecursionError:
        return


def _distinct(found: list[Identifier]) -> list[Identifier]:
    seen: set[tuple[str, str, str, str]] = set()
    out: list[Identifier] = []
    for ident in found:
        key = (ident.kind, ident.text, ident.status, ident.target)
        if key not in seen:
            seen.add(key)
            out.append(ident)
    return out
