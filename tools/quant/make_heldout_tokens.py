"""Writes tests/fixtures/demo_lm/heldout_tokens.npy: the demo LM's held-out token stream
(the last 1% of the tokenised Austen corpus, the end of Persuasion), exactly as
tools/reference/train_demo_lm.py splits it, tokenised with the committed tokenizer.

The quantisation quality test (tests/exporters/quantize_quality_test.cpp) measures the
held-out perplexity of the demo LM in float32 and quantised on these ids.

Usage (repository root, reference venv; apt-get downloads the pinned .deb):
    $(tools/reference/setup-venv) tools/quant/make_heldout_tokens.py [--deb FILE]
"""
import argparse
import os
import sys
import tempfile

import numpy as np
from tokenizers import Tokenizer

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tools", "reference"))
import train_demo_lm as demo  # noqa: E402  (its corpus loader and split constants)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--deb", help=f"a downloaded {demo.DEB_NAME}_{demo.DEB_VERSION}_all.deb")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as workdir:
        books = demo.load_books(demo.fetch_deb(workdir, args.deb))
    text = f"\n\n{demo.EOT}".join(books[name] for name in demo.BOOKS)
    tok = Tokenizer.from_file(os.path.join(demo.ASSET_DIR, "tokenizer.json"))
    ids = np.array(tok.encode(text).ids, dtype=np.int32)
    n_valid = int(ids.size * demo.VALID_FRACTION)
    heldout = ids[-n_valid:]
    out = os.path.join(ROOT, "tests", "fixtures", "demo_lm", "heldout_tokens.npy")
    np.save(out, heldout)
    print(f"{ids.size} tokens, {heldout.size} held out -> {out}")


if __name__ == "__main__":
    main()
