#!/usr/bin/env python3
"""The peer of `make bench-peer`: what a researcher writes instead of fragility.

llama-cpp-python, greedy decoding, the exact full-vocabulary entropy of every
token in numpy (float64), items one at a time. It decodes the items of a
fragility run directory (traces.jsonl: the exact prompt token ids), each for
as many tokens as fragility generated for it, so that both tools do the same
work; it also counts the items whose greedy tokens equal fragility's.

Usage: peer.py MODEL.gguf RUN_DIR THREADS
Prints one JSON object on stdout: items, tokens, seconds (model load
excluded), tokens_per_s, entropy_ms_per_token, same_tokens (items whose
tokens equal the run's), max_entropy_diff_bits (largest difference from the
run's per-token entropy at the positions up to and including each item's
first differing token, where both decoded the same context).
"""
import json
import math
import os
import sys
import time

import numpy as np
from llama_cpp import Llama


def main():
    if len(sys.argv) != 4:
        sys.stderr.write("usage: peer.py MODEL.gguf RUN_DIR THREADS\n")
        sys.exit(2)
    model, run_dir, threads = sys.argv[1], sys.argv[2], int(sys.argv[3])
    items = []
    with open(os.path.join(run_dir, "traces.jsonl")) as f:
        for line in f:
            if line.strip():
                t = json.loads(line)
                if t.get("tokens"):
                    items.append(t)
    if not items:
        sys.stderr.write(f"{run_dir}/traces.jsonl: no generated item\n")
        sys.exit(1)
    # n_threads_batch is left at llama-cpp-python's default, every core, as
    # a researcher's script leaves it (fragility's --threads-batch default).
    llm = Llama(model_path=model, n_ctx=2048, n_threads=threads, n_batch=512, verbose=False)
    n_vocab = llm.n_vocab()
    log2 = math.log(2.0)

    tokens, same, ent_sec, max_diff = 0, 0, 0.0, 0.0
    start = time.perf_counter()
    for it in items:
        want = it["tokens"]
        llm.reset()
        llm.eval(it["prompt_token_ids"])
        got = []
        diverged = False
        for k in range(len(want)):
            logits = np.ctypeslib.as_array(llm._ctx.get_logits(), shape=(n_vocab,)).astype(np.float64)
            t0 = time.perf_counter()
            z = logits - logits.max()
            p = np.exp(z)
            s = p.sum()
            h = (math.log(s) - float(np.dot(p, z)) / s) / log2  # H = log Z - E[z], in bits
            ent_sec += time.perf_counter() - t0
            tok = int(np.argmax(logits))
            got.append(tok)
            tokens += 1
            if not diverged:  # same context as fragility's so far
                max_diff = max(max_diff, abs(h - want[k]["entropy_bits"]))
                diverged = tok != want[k]["id"]
            if k + 1 < len(want):
                llm.eval([tok])
        same += got == [t["id"] for t in want]
    sec = time.perf_counter() - start
    print(json.dumps({"items": len(items), "tokens": tokens, "seconds": sec, "tokens_per_s": tokens / sec,
                      "entropy_ms_per_token": 1000 * ent_sec / tokens, "same_tokens": same,
                      "max_entropy_diff_bits": max_diff}))


if __name__ == "__main__":
    main()
