#!/usr/bin/env python3
"""Greedy text from an exported generation directory with OpenVINO GenAI's LLMPipeline.

  python genai_generate.py DIR --prompt TEXT --max-new-tokens N

DIR is what `ingot export FOLDER --format openvino --task generation -o DIR` writes
(openvino_model.xml/.bin, config.json, generation_config.json, tokenizer.json, ...).
When DIR has no openvino_tokenizer.xml / openvino_detokenizer.xml, they are made from its
tokenizer files with openvino_tokenizers.convert_tokenizer (transformers' tokenizer
reader, no torch) and saved into DIR first. The pipeline runs on CPU in float32
(INFERENCE_PRECISION_HINT) with the stateful SDPA backend (ATTENTION_BACKEND=SDPA: the
model's own KV-cache variables; the paged-attention rewrite does not apply to a static
cache). Prints one JSON object {"text": ..., "openvino_genai": version}.
"""
from __future__ import annotations

import argparse
import json
import os
import sys

import openvino as ov
import openvino_genai


def ensure_tokenizer_ir(folder: str) -> None:
    tok, detok = os.path.join(folder, "openvino_tokenizer.xml"), os.path.join(folder, "openvino_detokenizer.xml")
    if os.path.exists(tok) and os.path.exists(detok):
        return
    from openvino_tokenizers import convert_tokenizer
    from transformers import AutoTokenizer

    hf = AutoTokenizer.from_pretrained(folder)
    ov_tok, ov_detok = convert_tokenizer(hf, with_detokenizer=True)
    ov.save_model(ov_tok, tok)
    ov.save_model(ov_detok, detok)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("folder")
    ap.add_argument("--prompt", required=True)
    ap.add_argument("--max-new-tokens", type=int, default=32)
    args = ap.parse_args()
    ensure_tokenizer_ir(args.folder)
    pipe = openvino_genai.LLMPipeline(args.folder, "CPU", ATTENTION_BACKEND="SDPA",
                                      INFERENCE_PRECISION_HINT="f32")
    config = openvino_genai.GenerationConfig()
    config.max_new_tokens = args.max_new_tokens
    config.do_sample = False
    config.ignore_eos = True
    text = pipe.generate(args.prompt, config)
    print(json.dumps({"text": str(text), "openvino_genai": openvino_genai.__version__}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
