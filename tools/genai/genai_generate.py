#!/usr/bin/env python3
"""Judge of ingot's ONNX Runtime GenAI directory: onnxruntime_genai's greedy ids == transformers'.

Run in the venv of tools/genai/setup-venv (it has onnxruntime-genai and transformers):

  genai_generate.py --dir GENAI_DIR --hf HF_FOLDER --steps N [--prompt TEXT | --ids 1,2,3]

 1. og.Model(GENAI_DIR) (what `ingot export --format onnx --task generation --genai` writes),
    greedy search (do_sample false), the prompt appended, then N generate_next_token()
    steps (fewer when GenAI stops at an eos token).
 2. transformers' AutoModelForCausalLM on HF_FOLDER (float32), N greedy steps over the
    same prompt ids: argmax of the last logits, no cache (the reference, no stop).
 3. GenAI's ids must equal transformers' first ids; when GenAI stopped early, its last id
    must be one of the model's eos ids.
The last stdout line is JSON: {"onnxruntime_genai", "prompt_ids", "genai", "transformers",
"match", "tok_s"}; exit status 1 on a mismatch. --time adds GenAI's decode tokens/s.
"""
from __future__ import annotations

import argparse
import json
import sys
import time


def genai_ids(directory: str, prompt_ids: list[int], steps: int) -> tuple[list[int], float]:
    import onnxruntime_genai as og
    model = og.Model(directory)
    params = og.GeneratorParams(model)
    params.set_search_options(max_length=len(prompt_ids) + steps, do_sample=False)
    g = og.Generator(model, params)
    g.append_tokens(prompt_ids)
    out: list[int] = []
    start = None
    while len(out) < steps and not g.is_done():
        g.generate_next_token()
        out.append(int(g.get_next_tokens()[0]))
        if start is None:
            start = time.perf_counter()  # after the prompt's token: decode steps only
    seconds = time.perf_counter() - start if start is not None else 0.0
    tok_s = (len(out) - 1) / seconds if len(out) > 1 and seconds > 0 else 0.0
    return out, tok_s


def reference_ids(hf: str, prompt_ids: list[int], steps: int) -> tuple[list[int], set[int]]:
    import torch
    from transformers import AutoModelForCausalLM
    model = AutoModelForCausalLM.from_pretrained(hf, dtype=torch.float32).eval()
    ids = torch.tensor([prompt_ids], dtype=torch.long)
    out: list[int] = []
    with torch.no_grad():
        for _ in range(steps):
            nxt = int(model(input_ids=ids).logits[0, -1].argmax())
            out.append(nxt)
            ids = torch.cat([ids, torch.tensor([[nxt]])], dim=1)
    eos = model.generation_config.eos_token_id
    eos = set(eos if isinstance(eos, list) else [] if eos is None else [eos])
    return out, eos


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dir", required=True, help="ingot's GenAI directory (genai_config.json)")
    ap.add_argument("--hf", required=True, help="the Hugging Face folder it was exported from")
    ap.add_argument("--steps", type=int, default=16)
    ap.add_argument("--prompt", default="The capital of France is")
    ap.add_argument("--ids", help="comma-separated prompt ids (instead of --prompt)")
    a = ap.parse_args()
    import onnxruntime_genai as og
    if a.ids:
        prompt_ids = [int(t) for t in a.ids.split(",")]
    else:
        tokenizer = og.Tokenizer(og.Model(a.dir))
        prompt_ids = [int(t) for t in tokenizer.encode(a.prompt)]
    got, tok_s = genai_ids(a.dir, prompt_ids, a.steps)
    want, eos = reference_ids(a.hf, prompt_ids, a.steps)
    match = got == want[: len(got)] and (len(got) == a.steps or (got and got[-1] in eos))
    print(json.dumps({"onnxruntime_genai": og.__version__, "prompt_ids": prompt_ids,
                      "genai": got, "transformers": want, "match": match, "tok_s": tok_s}))
    sys.exit(0 if match else 1)


if __name__ == "__main__":
    main()
