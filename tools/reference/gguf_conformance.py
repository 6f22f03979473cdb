#!/usr/bin/env python3
"""Conformance on a real GGUF: SmolLM2-135M-Instruct Q4_1 (tools/reference/fetch_smollm2.py
puts it in ~/.cache/ingot/checkpoints), ingot reading the file vs transformers' GGUF loader
reading the same file (AutoModelForCausalLM / AutoTokenizer .from_pretrained(dir,
gguf_file=...), float32).

Checks, each through the `ingot` command on the .gguf itself:
  tokenizer  `ingot generate --prompt S --json` prompt_ids == transformers' ids, for a set
             of strings (special tokens, unicode, whitespace runs, digits)
  chat       the chat prompt's ids == apply_chat_template(..., add_generation_prompt=True),
             and ingot's greedy ids == transformers' greedy generate() (32 new tokens max)
  logits     `ingot run` logits on the chat prompt within 1e-4 of transformers' (max |diff|
             relative to the largest logit), with float activations (INGOT_QUANT_ACTIVATIONS)

Prints SKIP with the reason (exit 0) when the GGUF or the venv's packages are absent.
Usage: <ref-venv python> tools/reference/gguf_conformance.py path/to/ingot [path/to/model.gguf]
"""
import json
import os
import subprocess
import sys
import tempfile

DEFAULT_GGUF = os.path.expanduser("~/.cache/ingot/checkpoints/SmolLM2-135M-Instruct.Q4_1.gguf")
STRINGS = [
    "Hello world",
    "  leading spaces and trailing  ",
    "<|im_start|>user\nhi<|im_end|>",
    "Numbers 3.14159, 1,000,000 and 2024-12-07",
    "Ünïcödé: 東京は日本の首都です。 🚀",
    "tabs\tand\nnewlines\r\n",
    "I'm sure you can't; we'll see.",
]
CHAT = [{"role": "user", "content": "What is the capital of France? Answer in one sentence."}]


def ingot_json(ingot: str, args: list[str]) -> dict:
    out = subprocess.run([ingot, *args, "--json"], check=True, capture_output=True, text=True)
    return json.loads(out.stdout)


def main() -> int:
    ingot = sys.argv[1]
    gguf_path = sys.argv[2] if len(sys.argv) > 2 else DEFAULT_GGUF
    if not os.path.exists(gguf_path):
        print(f"gguf conformance: SKIP — no {gguf_path} (tools/reference/fetch_smollm2.py fetches it)")
        return 0
    try:
        import numpy as np
        import torch
        import gguf  # noqa: F401  (transformers' GGUF loader needs it)
        from transformers import AutoModelForCausalLM, AutoTokenizer
    except ImportError as e:
        print(f"gguf conformance: SKIP — reference venv lacks {e.name}")
        return 0
    d, name = os.path.dirname(gguf_path), os.path.basename(gguf_path)
    tok = AutoTokenizer.from_pretrained(d, gguf_file=name)
    model = AutoModelForCausalLM.from_pretrained(d, gguf_file=name, dtype=torch.float32)
    failures = []

    for s in STRINGS:
        want = tok(s)["input_ids"]
        got = ingot_json(ingot, ["generate", gguf_path, "--prompt", s, "--max-new-tokens", "1",
                                 "--greedy"])["prompt_ids"]
        if got != want:
            failures.append(f"tokenizer: {s!r}: ingot {got} != transformers {want}")

    prompt = tok.apply_chat_template(CHAT, add_generation_prompt=True, tokenize=True,
                                     return_dict=False)
    if isinstance(prompt, dict) or hasattr(prompt, "input_ids"):
        prompt = prompt["input_ids"]
    with tempfile.TemporaryDirectory() as tmp:
        messages = os.path.join(tmp, "messages.json")
        with open(messages, "w") as f:
            json.dump(CHAT, f)
        result = ingot_json(ingot, ["generate", gguf_path, "--messages", messages,
                                    "--max-new-tokens", "32", "--greedy"])
        if result["prompt_ids"] != list(prompt):
            failures.append(f"chat prompt: ingot {result['prompt_ids']} != transformers {prompt}")
        ids = torch.tensor([prompt])
        with torch.no_grad():
            out = model.generate(ids, max_new_tokens=32, do_sample=False)
        want = out[0, len(prompt):].tolist()
        got = result["generated_ids"]
        if got != want[:len(got)] or (len(got) < len(want) and result["stop_reason"] != "stop_token"):
            failures.append(f"greedy: ingot {got} != transformers {want}")

        np.save(os.path.join(tmp, "ids.npy"), np.array([prompt], dtype=np.int64))
        # Float activations: the file's Q8_0 token table stays packed (docs/gguf.md) and
        # ingot's default int8 activations round x before the tied LM head (~1e-2 of the
        # largest logit); this check judges the file's values, the greedy one the default.
        subprocess.run([ingot, "run", gguf_path, "--input",
                        f"input_ids={os.path.join(tmp, 'ids.npy')}", "-o",
                        os.path.join(tmp, "out")], check=True, stdout=subprocess.DEVNULL,
                       env={**os.environ, "INGOT_QUANT_ACTIVATIONS": "float"})
        logits = np.load(os.path.join(tmp, "out", "logits.npy"))
    with torch.no_grad():
        ref = model(ids).logits.numpy()
    rel = float(np.abs(logits - ref).max() / np.abs(ref).max())
    if rel > 1e-4:
        failures.append(f"logits: max |diff| / max |ref| = {rel:.2e} > 1e-4")
    print(f"gguf conformance ({name}): {len(STRINGS)} strings, chat prompt {len(prompt)} ids, "
          f"greedy {len(result['generated_ids'])} ids {result['text']!r}, logits rel diff "
          f"{rel:.2e}: {'FAIL' if failures else 'ok'}")
    for f in failures:
        print("  " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
