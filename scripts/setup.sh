#!/usr/bin/env bash
# One set-up for everything: `make setup` runs this, and `make test`, `make weekly` and .ci/run call `make setup`.
# Idempotent and fast when everything is present. Prints what it could not do and which features fall back.
set -uo pipefail
cd "$(dirname "$0")/.."

CLAUDE_CODE_VERSION="${CLAUDE_CODE_VERSION:?set by the Makefile}"
PYTHON="${PYTHON:-python3}"
VENV=.venv
CLAUDE_PREFIX=.tools/claude-code
CLAUDE_BIN="$CLAUDE_PREFIX/node_modules/.bin/claude"
DOCKERD_LOG=/var/log/skillbench-dockerd.log
missing=()

say() { printf 'setup: %s\n' "$*"; }

# 1. Python environment (reinstalled only when pyproject.toml changes).
if [ ! -x "$VENV/bin/python" ]; then
  say "creating $VENV"
  "$PYTHON" -m venv "$VENV" || { say "cannot create a virtual environment with $PYTHON"; exit 1; }
fi
if [ ! -f "$VENV/.installed" ] || [ pyproject.toml -nt "$VENV/.installed" ]; then
  say "installing skillbench with its test extra into $VENV"
  "$VENV/bin/python" -m pip install -q --upgrade pip >/dev/null 2>&1 || true
  # uv (a PyPI package) installs the same pins in a third of pip's time, bytecode compiled on both cores: CI sets up
  # a fresh clone on every run. pip stays the fallback when uv cannot be installed.
  if "$VENV/bin/python" -m pip install -q uv >/dev/null 2>&1; then
    "$VENV/bin/python" -m uv pip install -q --python "$VENV/bin/python" --compile-bytecode -e '.[test]' \
      || { say "uv pip install failed"; exit 1; }
  else
    "$VENV/bin/python" -m pip install -q -e '.[test]' || { say "pip install failed"; exit 1; }
  fi
  touch "$VENV/.installed"
fi

# 2. System packages later features need (as root, when missing): Docker, debootstrap, strace, Chromium.
need_pkgs=()
command -v dockerd >/dev/null || need_pkgs+=(docker.io)
command -v debootstrap >/dev/null || need_pkgs+=(debootstrap)
command -v strace >/dev/null || need_pkgs+=(strace)
command -v chromium >/dev/null || need_pkgs+=(chromium)
command -v npm >/dev/null || need_pkgs+=(npm)
if [ ${#need_pkgs[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    say "installing Debian packages: ${need_pkgs[*]}"
    export DEBIAN_FRONTEND=noninteractive
    { apt-get update -qq && apt-get install -y -qq --no-install-recommends "${need_pkgs[@]}"; } >/tmp/skillbench-apt.log 2>&1 \
      || say "apt-get failed (see /tmp/skillbench-apt.log)"
  else
    say "not root (or no apt-get): cannot install ${need_pkgs[*]}"
  fi
fi

# 3. The pinned Claude Code CLI in a project-local npm prefix (a native binary; Node's engine warning is expected).
have_version=""
[ -x "$CLAUDE_BIN" ] && have_version=$("$CLAUDE_BIN" --version 2>/dev/null | awk '{print $1}')
if [ "$have_version" != "$CLAUDE_CODE_VERSION" ]; then
  if command -v npm >/dev/null; then
    say "installing @anthropic-ai/claude-code@$CLAUDE_CODE_VERSION into $CLAUDE_PREFIX"
    npm install --prefix "$CLAUDE_PREFIX" --no-audit --no-fund --loglevel=error \
      "@anthropic-ai/claude-code@$CLAUDE_CODE_VERSION" >/tmp/skillbench-npm.log 2>&1 \
      || say "npm install failed (see /tmp/skillbench-npm.log)"
  fi
  have_version=$("$CLAUDE_BIN" --version 2>/dev/null | awk '{print $1}')
  [ "$have_version" = "$CLAUDE_CODE_VERSION" ] || missing+=("Claude Code CLI $CLAUDE_CODE_VERSION (generation and CLI tests cannot run)")
fi

# 4. The Docker engine, without a bridge, so no private-range network is ever created here.
docker_ok() { "$VENV/bin/python" -c 'import sys, docker; sys.exit(0 if docker.from_env(timeout=5).ping() else 1)' 2>/dev/null; }
if ! docker_ok; then
  if command -v dockerd >/dev/null && [ "$(id -u)" = 0 ]; then
    say "starting dockerd --bridge=none (log: $DOCKERD_LOG)"
    mkdir -p "$(dirname "$DOCKERD_LOG")"
    nohup setsid dockerd --bridge=none --iptables=false --ip6tables=false >"$DOCKERD_LOG" 2>&1 </dev/null &
    for _ in $(seq 1 30); do docker_ok && break; sleep 1; done
  fi
  docker_ok || missing+=("Docker engine (generation falls back to the local sandbox)")
fi

# 5. The runner image (built locally from Debian's packages; rebuilt only when its inputs change).
if docker_ok && [ -x "$CLAUDE_BIN" ] && "$VENV/bin/skillbench" image --help >/dev/null 2>&1; then
  "$VENV/bin/skillbench" image build || missing+=("runner image (generation falls back to the local sandbox)")
fi

# 6. The project's Jupyter kernel, so papermill and JupyterLab run notebooks in this environment.
if ! "$VENV/bin/jupyter" kernelspec list 2>/dev/null | grep -q '^ *skillbench '; then
  "$VENV/bin/python" -m ipykernel install --sys-prefix --name skillbench --display-name "skillbench (.venv)" >/dev/null \
    || missing+=("Jupyter kernel 'skillbench'")
fi

# 7. The API surfaces the fabricated-identifier detector reads (docs/fabrication.md), cached per version: the bundled
# suite's and qdrant's, so its tests and benchmark run offline. Fast when cached; the first build reads the packages
# with griffe (never imports them) and fetches what is not installed (stubs, qdrant-client) once.
# The two suites' surfaces build side by side (one process per surface; ~25 CPU-s in all when nothing is cached).
"$VENV/bin/skillbench" surfaces --suite evals >/tmp/skillbench-surfaces.log 2>&1 &
surfaces_pid=$!
"$VENV/bin/skillbench" surfaces --config benchmarks/data/fabrication/qdrant.skillbench.toml \
  >/tmp/skillbench-surfaces-qdrant.log 2>&1 || missing+=("qdrant's API surface (see /tmp/skillbench-surfaces-qdrant.log)")
wait "$surfaces_pid" || missing+=("the bundled suite's API surfaces (unchecked identifiers; see /tmp/skillbench-surfaces.log)")

command -v chromium >/dev/null || missing+=("chromium (report screenshot test)")
if [ ${#missing[@]} -gt 0 ]; then
  say "set up with gaps:"
  for m in "${missing[@]}"; do say "  missing: $m"; done
else
  say "ready (CLI $CLAUDE_CODE_VERSION, Docker engine up, kernel 'skillbench')"
fi
exit 0
