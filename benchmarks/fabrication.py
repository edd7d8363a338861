"""Benchmark: the fabricated-identifier detector's precision and recall on labelled sets (docs/fabrication.md).

Two kinds of labelled code, each label decided by an oracle independent of the detector (the detector reads the
libraries statically with griffe; the oracles run the installed libraries, in a separate process):

- **real**: (1) the libraries' own documentation examples — every ``>>>`` block of the installed pandas, scipy and
  statsmodels docstrings (read with ``doctest.DocTestParser`` at benchmark time; examples marked ``+SKIP`` or that
  expect an exception are left out: the projects' doctest runs vouch only for the others); (2) for every surface,
  receivers built by running their set-up code (``df = pd.DataFrame(…)``, ``client = QdrantClient(":memory:")``) and a
  seeded sample of their public members and keywords as the running library lists them (``dir``,
  ``inspect.signature``); (3) for qdrant, the code-like evidence quotes of its real week-1 answers, read from
  ``../shared/datasets/qdrant-skills/`` at benchmark time (never copied here).
- **fabricated**: (1) APIs removed between versions, listed by hand with the changelog entry that removed them
  (``benchmarks/data/fabrication/removed.json``); (2) plausible inventions generated from each receiver's real
  names (``df.rolling_mean()``, ``stats.ttest_ind(equalvar=…)``): a name the running object does not have
  (``hasattr`` false), a keyword its runtime signature neither names nor accepts through ``**kwargs``.

A flag is an ``unresolved`` identifier. Precision = flags on fabricated ÷ all flags (any flag on real code, set-up
lines included, is false); recall = fabricated identifiers flagged ÷ fabricated identifiers. Intervals are 95 %
Clopper–Pearson (two-sided). ``--label`` regenerates the committed labelled sets (needs the installed libraries and,
for qdrant, ``--qdrant-path`` a folder where ``pip install --target`` put qdrant-client 1.19.0 and its dependencies);
the default run reads them, needs only the cached surfaces (``make setup``), and ``--write`` records the result in
``skillbench/data/fabrication-precision.json``, which the fabrication gate reads.

    .venv/bin/python benchmarks/fabrication.py [--write] [--label [--qdrant-path DIR]]
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import random
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "benchmarks" / "data" / "fabrication"
QDRANT_CONFIG = DATA / "qdrant.skillbench.toml"
QDRANT_SHARED = ROOT.parent / "shared" / "datasets" / "qdrant-skills"
RECORD = ROOT / "skillbench" / "data" / "fabrication-precision.json"
COMMAND = "python benchmarks/fabrication.py --write"
SEED = 33
PER_RECEIVER_REAL = 40
PER_RECEIVER_FABRICATED = 40

# Receivers: (surface module, variable, set-up code). The oracle runs the set-up, so every set-up line is real code.
RECEIVERS: dict[str, list[tuple[str, str]]] = {
    "pandas": [
        ("pd", "import pandas as pd"),
        ("df", "import pandas as pd\ndf = pd.DataFrame({'a': [1.0, 2.0], 'b': [3, 4]})"),
        ("s", "import pandas as pd\ns = pd.Series([1.0, 2.0])"),
        ("g", "import pandas as pd\ndf = pd.DataFrame({'a': [1.0, 2.0], 'b': [3, 4]})\ng = df.groupby('a')"),
        ("r", "import pandas as pd\ndf = pd.DataFrame({'a': [1.0, 2.0], 'b': [3, 4]})\nr = df.rolling(2)"),
        ("e", "import pandas as pd\ns = pd.Series([1.0, 2.0])\ne = s.expanding()"),
        ("idx", "import pandas as pd\nidx = pd.Index([1, 2])"),
        ("ts", "import pandas as pd\nts = pd.Timestamp('2024-01-01')"),
    ],
    "scipy": [
        ("stats", "from scipy import stats"),
        ("optimize", "from scipy import optimize"),
        ("integrate", "from scipy import integrate"),
        ("interpolate", "from scipy import interpolate"),
        ("linalg", "from scipy import linalg"),
        ("signal", "from scipy import signal"),
        ("special", "from scipy import special"),
        ("sparse", "from scipy import sparse"),
        ("kde", "from scipy import stats\nkde = stats.gaussian_kde([1.0, 2.0, 3.5, 4.0])"),
        ("spline", "from scipy import interpolate\nspline = interpolate.CubicSpline([0.0, 1.0, 2.0], [0.0, 1.0, 4.0])"),
    ],
    "statsmodels": [
        ("sm", "import statsmodels.api as sm"),
        ("smf", "import statsmodels.formula.api as smf"),
        ("tsa", "import statsmodels.tsa.api as tsa"),
        ("model", "import statsmodels.api as sm\nmodel = sm.OLS([1.0, 2.0, 3.5], [[1.0], [2.0], [3.0]])"),
        ("glm", "import statsmodels.api as sm\nglm = sm.GLM([1.0, 2.0, 3.5], [[1.0], [2.0], [3.0]])"),
        ("sms", "import statsmodels.stats.api as sms"),
        ("logit", "import statsmodels.api as sm\nlogit = sm.Logit([0.0, 1.0, 1.0], [[1.0], [2.0], [3.0]])"),
        ("arima", "import statsmodels.tsa.api as tsa\n"
                  "arima = tsa.ARIMA([1.0, 2.0, 3.0, 2.0, 1.0, 2.0], order=(1, 0, 0))"),
    ],
    "qdrant_client": [
        ("models", "from qdrant_client import models"),
        ("client", "from qdrant_client import QdrantClient\nclient = QdrantClient(':memory:')"),
    ],
}
# Model classes of qdrant_client.models whose keywords are sampled (their runtime `model_fields`).
QDRANT_MODELS = ("VectorParams", "PointStruct", "Filter", "FieldCondition", "MatchValue", "HnswConfigDiff",
                 "ScalarQuantization", "ScalarQuantizationConfig", "OptimizersConfigDiff", "SearchParams",
                 "PayloadSchemaType", "Range", "SparseVectorParams", "BinaryQuantization", "QuantizationSearchParams",
                 "KeywordIndexParams", "Prefetch", "FusionQuery", "WalConfigDiff", "CreateAlias")
DOCTEST_PACKAGES = ("pandas", "scipy", "statsmodels")


# ---------------------------------------------------------------------------------------------------------------
# The oracle: runs in its own process, imports the installed libraries, never imports skillbench.
# ---------------------------------------------------------------------------------------------------------------
def _oracle(request: dict[str, Any]) -> dict[str, Any]:  # noqa: C901 - one self-contained worker
    import inspect
    import warnings

    warnings.simplefilter("ignore")
    rng = random.Random(SEED)
    module = request["module"]
    items: list[dict[str, Any]] = []

    def keywords_of(fn: Any) -> tuple[list[str], bool] | None:
        try:
            sig = inspect.signature(fn)
        except (TypeError, ValueError):
            return None
        names = [p.name for p in sig.parameters.values()
                 if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) and p.name not in ("self", "cls")]
        var_kw = any(p.kind == p.VAR_KEYWORD for p in sig.parameters.values())
        return names, var_kw

    def mutations(name: str) -> list[str]:
        parts = name.split("_")
        out = [name + "s", name + "_all", "to_" + name, name.replace("_", ""), "get_" + name, name + "_values",
               "_".join(reversed(parts)) if len(parts) > 1 else name + "ed"]
        if name.endswith("s"):
            out.append(name[:-1])
        return [m for m in out if m.isidentifier() and m != name and not m.startswith("_")]

    for var, setup in request["receivers"]:
        namespace: dict[str, Any] = {}
        exec(setup, namespace)  # noqa: S102 - our own set-up lines, run against the installed library
        obj = namespace[var]
        public = sorted(n for n in dir(obj) if not n.startswith("_"))
        callables = []
        for n in public:
            try:
                value = getattr(obj, n)
            except Exception:  # a property that raises on this small object
                continue
            if callable(value) and not inspect.isclass(value) or inspect.isclass(value):
                callables.append((n, value))
        is_module = inspect.ismodule(obj)
        # real: names (a module's attribute; an instance's method, called) and keywords of those callables
        for n, value in rng.sample(callables, min(PER_RECEIVER_REAL, len(callables))):
            call = "" if is_module and not callable(value) else "()"
            items.append({"label": "real", "kind": "name", "code": f"{setup}\n{var}.{n}{call}",
                          "expect": f"{var}.{n}", "oracle": "dir() of the running object"})
            sig = keywords_of(value)
            if sig and sig[0]:
                kw = rng.choice(sig[0])
                items.append({"label": "real", "kind": "keyword", "code": f"{setup}\n{var}.{n}({kw}=None)",
                              "expect": f"{var}.{n}({kw}=...)", "oracle": "inspect.signature"})
        # fabricated: invented names the running object lacks, and keywords its signature refuses
        invented = sorted({m for n, _ in callables for m in mutations(n) if not hasattr(obj, m)})
        for m in rng.sample(invented, min(PER_RECEIVER_FABRICATED // 2, len(invented))):
            items.append({"label": "fabricated", "kind": "name", "code": f"{setup}\n{var}.{m}()",
                          "expect": f"{var}.{m}", "oracle": "hasattr() false on the running object"})
        refusing = []
        for n, value in callables:
            sig = keywords_of(value)
            if sig and sig[0] and not sig[1]:
                for kw in sig[0]:
                    for wrong in mutations(kw):
                        if wrong not in sig[0]:
                            refusing.append((n, wrong))
        for n, wrong in rng.sample(refusing, min(PER_RECEIVER_FABRICATED // 2, len(refusing))):
            items.append({"label": "fabricated", "kind": "keyword", "code": f"{setup}\n{var}.{n}({wrong}=None)",
                          "expect": f"{var}.{n}({wrong}=...)",
                          "oracle": "inspect.signature: not a parameter, no **kwargs"})
    if module == "qdrant_client":
        from qdrant_client import models

        setup = "from qdrant_client import models"
        for name in QDRANT_MODELS:
            cls = getattr(models, name, None)
            fields = sorted(getattr(cls, "model_fields", {}) or {})
            if not fields:
                continue
            forbid = (getattr(cls, "model_config", {}) or {}).get("extra") == "forbid"
            for field in rng.sample(fields, min(4, len(fields))):
                items.append({"label": "real", "kind": "keyword", "code": f"{setup}\nmodels.{name}({field}=None)",
                              "expect": f"models.{name}({field}=...)", "oracle": "model_fields of the running model"})
            if forbid:
                wrongs = sorted({w for f in fields for w in mutations(f) if w not in fields})
                for wrong in rng.sample(wrongs, min(10, len(wrongs))):
                    items.append({"label": "fabricated", "kind": "keyword",
                                  "code": f"{setup}\nmodels.{name}({wrong}=None)",
                                  "expect": f"models.{name}({wrong}=...)",
                                  "oracle": "not in model_fields of a model that forbids extra fields"})
    for entry in request["removed"]:
        namespace = {}
        exec(entry["setup"], namespace)  # noqa: S102 - our own set-up line
        obj = namespace[entry["receiver"]]
        gone = not hasattr(obj, entry["name"])
        items.append({"label": "fabricated" if gone else "real", "kind": "name",
                      "code": f"{entry['setup']}\n{entry['receiver']}.{entry['name']}()",
                      "expect": f"{entry['receiver']}.{entry['name']}",
                      "oracle": f"hasattr() {'false' if gone else 'true'}; {entry['changelog']}"})
    return {"items": items}


def _doctests(package: str) -> list[str]:
    """Every docstring's ``>>>`` examples (no +SKIP, no expected exception) of a package's public API, one snippet
    per docstring (its examples share a namespace, as doctest runs them)."""
    import doctest
    import importlib
    import inspect
    import pkgutil
    import warnings

    warnings.simplefilter("ignore")
    parser = doctest.DocTestParser()
    root = importlib.import_module(package)
    modules = [root]
    for info in pkgutil.walk_packages(root.__path__, prefix=f"{package}."):
        parts = info.name.split(".")
        if any(p.startswith("_") or p in ("tests", "testing", "conftest") for p in parts[1:]):
            continue
        try:
            modules.append(importlib.import_module(info.name))
        except Exception:  # an optional dependency is missing: that module has no examples for us
            continue
    seen: set[str] = set()  # by text: a ufunc's __doc__ is made on each access, so an id() can be reused
    snippets: list[str] = []
    for mod in modules:
        objects = [mod] + [getattr(mod, n, None) for n in dir(mod) if not n.startswith("_")]
        for obj in list(objects):
            if inspect.isclass(obj):
                objects.extend(getattr(obj, n, None) for n in vars(obj) if not n.startswith("_"))
        for obj in objects:
            doc = getattr(obj, "__doc__", None)
            if not isinstance(doc, str) or ">>>" not in doc or doc in seen:
                continue
            seen.add(doc)
            try:
                examples = parser.get_examples(doc)
            except ValueError:
                continue
            lines = [ex.source for ex in examples if not ex.options.get(doctest.SKIP) and not ex.exc_msg]
            if lines:
                snippets.append("".join(lines))
    return snippets


def _adjudicate(flags: list[list[str]]) -> list[bool]:
    """For each flagged (kind, target) of a documentation example: does the running library have it? A flag the
    runtime confirms (the example uses what no longer exists: statsmodels' `sm.tsa.ARMA`) is a documentation error,
    not a false flag; the others are false flags."""
    import importlib
    import inspect
    import warnings

    warnings.simplefilter("ignore")

    def resolve(path: str) -> tuple[bool, Any]:
        parts = path.split(".")
        for cut in range(len(parts), 0, -1):
            try:
                obj = importlib.import_module(".".join(parts[:cut]))
            except Exception:  # not a module: try a shorter prefix
                continue
            for name in parts[cut:]:
                try:
                    obj = getattr(obj, name)
                except Exception:  # missing, or a property that raises on the class
                    try:
                        obj = importlib.import_module(f"{obj.__name__}.{name}")
                    except Exception:  # missing as a submodule too
                        return False, None
            return True, obj
        return False, None

    out = []
    for kind, target in flags:
        if kind == "keyword" and target.endswith(")") and "(" in target:
            path, kw = target[:-1].split("(", 1)
            ok, obj = resolve(path)
            try:
                params = inspect.signature(obj).parameters.values() if ok else []
            except (TypeError, ValueError):
                out.append(True)  # no signature to refute it: count it as real (a false flag)
                continue
            out.append(ok and any(p.name == kw or p.kind == p.VAR_KEYWORD for p in params))
        else:
            path = target[len("import "):] if target.startswith("import ") else target
            out.append(resolve(path)[0])
    return out


def _oracle_main() -> None:
    request = json.loads(sys.stdin.read())
    if request.get("adjudicate"):
        print(json.dumps({"exists": _adjudicate(request["adjudicate"])}))
    elif request.get("doctests"):
        print(json.dumps({"snippets": _doctests(request["doctests"])}))
    else:
        print(json.dumps(_oracle(request)))


def _run_oracle(request: dict[str, Any], extra_path: str | None = None) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    if extra_path:
        env["PYTHONPATH"] = extra_path
    done = subprocess.run([sys.executable, __file__, "--oracle"], input=json.dumps(request), capture_output=True,
                          text=True, env=env, cwd="/tmp", check=False, timeout=1800)
    if done.returncode != 0:
        sys.exit(f"oracle failed for {request.get('module') or request.get('doctests')}: {done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


# ---------------------------------------------------------------------------------------------------------------
# Labelling (regenerates the committed sets) and measuring.
# ---------------------------------------------------------------------------------------------------------------
def label(qdrant_path: str | None) -> None:
    removed = json.loads((DATA / "removed.json").read_text("utf-8"))
    for module, receivers in RECEIVERS.items():
        if module == "qdrant_client" and not qdrant_path:
            print("qdrant_client: skipped (pass --qdrant-path)")
            continue
        request = {"module": module, "receivers": receivers,
                   "removed": [r for r in removed if r["module"] == module]}
        items = _run_oracle(request, qdrant_path if module == "qdrant_client" else None)["items"]
        out = DATA / f"labels-{module}.json"
        out.write_text(json.dumps(items, indent=1) + "\n", encoding="utf-8")
        counts = defaultdict(int)
        for item in items:
            counts[item["label"]] += 1
        print(f"{module}: {dict(counts)} → {out.relative_to(ROOT)}")


def clopper_pearson(k: int, n: int) -> tuple[float, float]:
    from scipy.stats import beta

    if n == 0:
        return 0.0, 1.0
    low = 0.0 if k == 0 else float(beta.ppf(0.025, k, n - k + 1))
    high = 1.0 if k == n else float(beta.ppf(0.975, k + 1, n - k))
    return low, high


def _qdrant_quotes() -> list[str]:
    """Code-like evidence quotes of qdrant's real week-1 answers (read here, never copied into the project)."""
    path = QDRANT_SHARED / "evals" / "weekly" / "20260808" / "scores.csv"
    if not path.is_file():
        return []
    with open(path, encoding="utf-8", newline="") as fh:
        quotes = {row["evidence_quote"] for row in csv.DictReader(fh) if row.get("evidence_quote")}
    return sorted(q for q in quotes if "models." in q or "client." in q or "qdrant_client" in q)


def measure(write: bool) -> int:
    sys.path.insert(0, str(ROOT))
    from skillbench.identifiers import UNRESOLVED, check_answer, load_surfaces
    from skillbench.identifiers._precision import DETECTOR_FORMAT

    bundled = load_surfaces(ROOT / "evals")
    from skillbench.suite import read_config

    qdrant = load_surfaces(read_config(QDRANT_CONFIG))
    for warning in bundled.warnings + qdrant.warnings:
        print(f"warning: {warning}")
    stats: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    false_flags: list[tuple[str, str, str]] = []
    missed: list[tuple[str, str]] = []
    started = time.perf_counter()
    answers = 0

    doc_flags: list[tuple[str, str, str, str]] = []  # (surface, kind, target, where) of documentation examples

    def account(module: str, surfaces: Any, code: str, item: dict[str, Any] | None, source: str) -> None:
        nonlocal answers
        answers += 1
        label_ = surfaces.by_module[module].label
        found = check_answer(f"```python\n{code}\n```\n", surfaces)
        target_flagged = False
        for ident in found:
            if ident.surface != label_:
                continue
            is_target = item is not None and ident.text == item["expect"]
            if is_target and item["label"] == "fabricated":
                target_flagged = ident.status == UNRESOLVED
                continue
            if ident.status != "unchecked":
                stats[label_]["real_checked"] += 1
            if ident.status == UNRESOLVED and source.endswith("doctest"):
                doc_flags.append((label_, ident.kind, ident.target, f"{source}: {ident.quote}"))
            elif ident.status == UNRESOLVED:
                stats[label_]["false_flags"] += 1
                false_flags.append((label_, ident.text, f"{source}: {ident.quote}"))
        if item is not None and item["label"] == "fabricated":
            stats[label_]["fabricated"] += 1
            stats[label_]["true_flags"] += target_flagged
            if not target_flagged:
                missed.append((label_, item["expect"]))

    for module in RECEIVERS:
        path = DATA / f"labels-{module}.json"
        surfaces = qdrant if module == "qdrant_client" else bundled
        for item in json.loads(path.read_text("utf-8")) if path.is_file() else []:
            account(module, surfaces, item["code"], item, "labelled")
    for package in DOCTEST_PACKAGES:
        for snippet in _run_oracle({"doctests": package})["snippets"]:
            account(package, bundled, snippet, None, f"{package} doctest")
    for quote in _qdrant_quotes():
        account("qdrant_client", qdrant, quote, None, "qdrant week-1 quote")
    doc_errors = []
    if doc_flags:
        exists = _run_oracle({"adjudicate": [[k, t] for _, k, t, _ in doc_flags]})["exists"]
        for (surface, _kind, target, where), real in zip(doc_flags, exists, strict=True):
            if real:
                stats[surface]["false_flags"] += 1
                false_flags.append((surface, target, where))
            else:
                doc_errors.append((surface, target, where))
    seconds = time.perf_counter() - started

    rows: dict[str, dict[str, Any]] = {}
    print(f"{'surface':28} {'real':>6} {'fab':>5} {'TP':>5} {'FP':>4} {'precision [95% low]':>22} "
          f"{'recall [95% CI]':>24}")
    totals: dict[str, int] = defaultdict(int)
    for surface in sorted(stats):
        s = stats[surface]
        for key, value in s.items():
            totals[key] += value
        rows[surface] = _row(s)
        _print(surface, rows[surface])
    overall = _row(totals)
    _print("overall", overall)
    print(f"{answers} snippets checked in {seconds:.1f} s")
    for surface, text, where in false_flags[:40]:
        print(f"false flag: {surface} {text} ({where[:140]})")
    for surface, text in missed[:: max(1, len(missed) // 30)]:
        print(f"missed: {surface} {text}")
    for surface, target, where in doc_errors:
        print(f"documentation example using what the running library lacks (not counted): {surface} {target} "
              f"({where[:120]})")
    if write:
        record = {"detector_format": DETECTOR_FORMAT, "command": COMMAND, "measured_kinds": ["name", "keyword"],
                  "overall": overall, "surfaces": rows,
                  "sets": "benchmarks/data/fabrication/ (docs/fabrication.md)"}
        RECORD.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
        print(f"recorded in {RECORD.relative_to(ROOT)}")
    return 0


def _row(s: dict[str, int]) -> dict[str, Any]:
    tp, fp, fab = s.get("true_flags", 0), s.get("false_flags", 0), s.get("fabricated", 0)
    p_low, _ = clopper_pearson(tp, tp + fp)
    r_low, r_high = clopper_pearson(tp, fab)
    return {"precision": round(tp / (tp + fp), 4) if tp + fp else None, "precision_low": round(p_low, 4),
            "recall": round(tp / fab, 4) if fab else 0.0, "recall_low": round(r_low, 4),
            "recall_high": round(r_high, 4), "true_flags": tp, "false_flags": fp,
            "real": s.get("real_checked", 0), "fabricated": fab}


def _print(name: str, r: dict[str, Any]) -> None:
    precision = "n/a" if r["precision"] is None else f"{r['precision']:.3f} [{r['precision_low']:.3f}]"
    print(f"{name:28} {r['real']:>6} {r['fabricated']:>5} {r['true_flags']:>5} {r['false_flags']:>4} "
          f"{precision:>22} {r['recall']:>8.3f} [{r['recall_low']:.3f}, {r['recall_high']:.3f}]")


def main() -> int:
    if "--oracle" in sys.argv:
        _oracle_main()
        return 0
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--write", action="store_true", help=f"record the result in {RECORD.relative_to(ROOT)}")
    parser.add_argument("--label", action="store_true", help="regenerate the labelled sets with the oracles")
    parser.add_argument("--qdrant-path", help="a `pip install --target` folder holding qdrant-client 1.19.0")
    args = parser.parse_args()
    if args.label:
        label(args.qdrant_path)
        return 0
    return measure(args.write)


if __name__ == "__main__":
    sys.exit(main())
