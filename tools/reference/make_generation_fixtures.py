#!/usr/bin/env python3
"""Records what Hugging Face transformers `generate` produces on the tiny decoder
checkpoints of tests/fixtures/models, for ingot's eager generation tests.

Every checkpoint is loaded in float32 with eager attention (bf16 / f16 weights are
upcast, as ingot does) and decoded greedily. Written to tests/fixtures/generation/<model>/,
all int64 .npy (sequences are prompt + new tokens, what `generate` returns):

  prompt.npy              [1, 7] random ids in [1, vocab)
  greedy.npy              [1, 7 + 40]  dynamic cache, no stop token
  greedy_static.npy       [1, 7 + 40]  cache_implementation="static" (max_cache_len = 47)
  stop_token.npy          [1]          a token greedy decoding first emits as its k-th new
                                       token (k >= 3 when there is one)
  stop.npy                [1, 7 + k + 1]  generate with eos_token_id = stop_token: ends on it
  padded_prompt.npy       [2, 7]       row 0 full, row 1 left-padded with 3 pad tokens (id 0)
  padded_mask.npy         [2, 7]       its attention mask
  padded_greedy.npy       [2, 7 + 32]  dynamic cache, pad_token_id 0
  padded_greedy_static.npy[2, 7 + 32]  static cache
  greedy_scores.npy       [1, 40, vocab] float32: the logits of each greedy step (tied-embedding
                          checkpoints repeat one token, so the tests compare logits too)
  padded_greedy_scores.npy[2, 32, vocab] float32
  reference.json          versions, settings, and the smallest top-1 / top-2 logit margin
                          seen in each greedy run (so a tie-break flip would be visible)

and tests/fixtures/generation/warpers/: transformers' sampling filters on random logits
(see warper_fixtures), and per model the greedy runs with a repetition penalty (see
penalty_fixtures).

A prompt is redrawn (up to 20 times) until every greedy run's margin exceeds 1e-4, so
that float32 rounding differences cannot flip a greedy choice.

Run with the reference venv:  $(tools/reference/setup-venv) tools/reference/make_generation_fixtures.py
"""
import json
import os
import shutil
import sys

import numpy as np
import torch
import transformers
from transformers import AutoModelForCausalLM
from transformers import GenerationConfig
from transformers.generation.logits_process import (MinPLogitsWarper,
                                                    RepetitionPenaltyLogitsProcessor,
                                                    TemperatureLogitsWarper, TopKLogitsWarper,
                                                    TopPLogitsWarper)

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
MODELS = os.path.join(ROOT, "tests", "fixtures", "models")
OUT = os.path.join(ROOT, "tests", "fixtures", "generation")
DECODERS = ["llama", "llama_llama3_rope_tied_bf16", "mistral_sliding_window",
            "qwen2_linear_rope", "qwen2_yarn_rope", "qwen3", "qwen3_dynamic_rope_f16", "gpt2"]
PROMPT = 7
NEW = 40
PADDED_NEW = 32
PAD = 0
MIN_MARGIN = 1e-4
PENALTY = 1.3
# Checkpoints whose transformers generate never uses a static cache (Phi-3 with LongRoPE
# drops the cache when the sequence passes original_max_position_embeddings): their
# greedy_static / padded_greedy_static files hold the dynamic-cache sequences, and
# reference.json says so.
DYNAMIC_ONLY = {"phi3_longrope", "phi3_longrope_short"}


@torch.no_grad()
def greedy(model, ids, new, static=False, mask=None, eos=None, **extra):
    """Sequences, per-step logits [batch, steps, vocab] and the smallest top-1 / top-2
    margin over every step and row."""
    kwargs = dict(max_new_tokens=new, do_sample=False, eos_token_id=eos, pad_token_id=PAD,
                  output_scores=True, return_dict_in_generate=True, **extra)
    if static:
        kwargs["cache_implementation"] = "static"
    if mask is not None:
        kwargs["attention_mask"] = mask
    out = model.generate(ids, **kwargs)
    if static:
        assert type(out.past_key_values).__name__ == "StaticCache", type(out.past_key_values)
    margin = float("inf")
    for step in out.scores:  # [batch, vocab] per step
        top = torch.topk(step.float(), 2, dim=-1).values
        margin = min(margin, float((top[:, 0] - top[:, 1]).min()))
    scores = torch.stack([step.float() for step in out.scores], 1)
    return out.sequences, margin, scores


def model_fixtures(name, rng):
    model = AutoModelForCausalLM.from_pretrained(os.path.join(MODELS, name), dtype=torch.float32,
                                                 attn_implementation="eager").eval()
    vocab = model.config.vocab_size
    for attempt in range(20):
        prompt = torch.from_numpy(rng.integers(1, vocab, size=(1, PROMPT), dtype=np.int64))
        seq, m1, scores = greedy(model, prompt, NEW)
        dynamic_only = name in DYNAMIC_ONLY
        seq_static, m2, _ = (seq, m1, None) if dynamic_only else greedy(model, prompt, NEW, static=True)
        assert seq.shape[1] == PROMPT + NEW, "generation stopped early"
        assert torch.equal(seq, seq_static), f"{name}: HF static != dynamic cache"
        new = seq[0, PROMPT:].tolist()
        fresh = [i for i in range(NEW) if new[i] not in new[:i]]  # first occurrences
        k = next((i for i in fresh if i >= 3), fresh[-1])
        stop_token = new[k]
        stop, m3, _ = greedy(model, prompt, NEW, eos=stop_token)
        assert stop.shape[1] == PROMPT + k + 1 and int(stop[0, -1]) == stop_token
        padded = torch.cat([prompt, prompt.clone()], 0)
        padded[1, :3] = PAD
        padded[1, 3:] = torch.from_numpy(rng.integers(1, vocab, size=(PROMPT - 3,), dtype=np.int64))
        mask = torch.ones_like(padded)
        mask[1, :3] = 0
        pseq, m4, pscores = greedy(model, padded, PADDED_NEW, mask=mask)
        pseq_static, m5, _ = ((pseq, m4, None) if dynamic_only else
                              greedy(model, padded, PADDED_NEW, static=True, mask=mask))
        assert torch.equal(pseq, pseq_static), f"{name}: HF padded static != dynamic cache"
        margins = dict(greedy=m1, greedy_static=m2, stop=m3, padded_greedy=m4,
                       padded_greedy_static=m5)
        if min(margins.values()) > MIN_MARGIN:
            break
    else:
        raise RuntimeError(f"{name}: no prompt with greedy margins above {MIN_MARGIN}")
    folder = os.path.join(OUT, name)
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)
    arrays = dict(prompt=prompt, greedy=seq, greedy_static=seq_static,
                  stop_token=torch.tensor([stop_token]), stop=stop, padded_prompt=padded,
                  padded_mask=mask, padded_greedy=pseq, padded_greedy_static=pseq_static)
    for key, value in arrays.items():
        np.save(os.path.join(folder, key + ".npy"), value.numpy().astype(np.int64))
    np.save(os.path.join(folder, "greedy_scores.npy"), scores.numpy())
    np.save(os.path.join(folder, "padded_greedy_scores.npy"), pscores.numpy())
    with open(os.path.join(folder, "reference.json"), "w") as f:
        json.dump({"torch": torch.__version__, "transformers": transformers.__version__,
                   "script": "tools/reference/make_generation_fixtures.py",
                   "checkpoint": f"tests/fixtures/models/{name}", "dtype": "float32",
                   "attn_implementation": "eager", "prompt_attempts": attempt + 1,
                   "max_new_tokens": NEW, "padded_max_new_tokens": PADDED_NEW,
                   "static_max_cache_len": {"greedy": PROMPT + NEW,
                                            "padded": PROMPT + PADDED_NEW},
                   "pad_token_id": PAD, "min_top2_margin": margins,
                   "static_reference": "dynamic cache (transformers uses no static cache here)"
                   if dynamic_only else "static cache"}, f, indent=2)
    print(f"wrote {name}: margins {min(margins.values()):.2e}, stop after {k + 1} new tokens")


def warper_fixtures(rng):
    """transformers' sampling filters (temperature, top-k, top-p, in generate's order) on
    random logits: logits.npy [4, 32] float32, and per case <case>.npy, the filtered
    logits with -inf where a token was removed."""
    folder = os.path.join(OUT, "warpers")
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)
    logits = torch.from_numpy(rng.normal(0, 2, size=(4, 32)).astype(np.float32))
    logits[3, :8] = logits[3, 8]  # ties at the top-k boundary
    np.save(os.path.join(folder, "logits.npy"), logits.numpy())
    cases = {
        "temperature_0.7": [TemperatureLogitsWarper(0.7)],
        "top_k_5": [TopKLogitsWarper(5)],
        "top_k_1": [TopKLogitsWarper(1)],
        "top_p_0.8": [TopPLogitsWarper(0.8)],
        "top_p_0.3": [TopPLogitsWarper(0.3)],
        "temperature_1.3_top_k_10_top_p_0.9": [TemperatureLogitsWarper(1.3), TopKLogitsWarper(10),
                                               TopPLogitsWarper(0.9)],
    }
    for case, warpers in cases.items():
        scores = logits.clone()
        for w in warpers:
            scores = w(None, scores)
        np.save(os.path.join(folder, case + ".npy"), scores.numpy())
    print("wrote warpers:", ", ".join(cases))
    processor_fixtures(folder, logits, rng)


def processor_fixtures(folder, logits, rng):
    """Min-p and the repetition penalty on the same logits, the penalty over seen_ids.npy
    [4, 12] int64 (ids seen so far, with repeats), and `full_chain`: what generate's own
    _get_logits_processor builds for do_sample with every setting at once (its order is
    recorded in processors.json)."""
    seen = torch.from_numpy(rng.integers(0, logits.shape[1], size=(4, 12), dtype=np.int64))
    np.save(os.path.join(folder, "seen_ids.npy"), seen.numpy())
    cases = {
        "min_p_0.1": [MinPLogitsWarper(0.1)],
        "min_p_0.5": [MinPLogitsWarper(0.5)],
        "repetition_penalty_1.5": [RepetitionPenaltyLogitsProcessor(1.5)],
        "repetition_penalty_0.7": [RepetitionPenaltyLogitsProcessor(0.7)],
    }
    model = AutoModelForCausalLM.from_pretrained(os.path.join(MODELS, "llama"),
                                                 dtype=torch.float32).eval()
    config = GenerationConfig(do_sample=True, temperature=0.8, top_k=12, top_p=0.95, min_p=0.05,
                              repetition_penalty=1.3)
    chain = model._get_logits_processor(config, input_ids_seq_length=seen.shape[1],
                                        model_kwargs={"attention_mask": torch.ones_like(seen)})
    cases["full_chain"] = list(chain)
    for case, processors in cases.items():
        scores = logits.clone()
        for p in processors:
            scores = p(seen, scores)
        np.save(os.path.join(folder, case + ".npy"), scores.numpy())
    with open(os.path.join(folder, "processors.json"), "w") as f:
        json.dump({"transformers": transformers.__version__,
                   "full_chain": {"settings": dict(temperature=0.8, top_k=12, top_p=0.95,
                                                   min_p=0.05, repetition_penalty=1.3),
                                  "order": [type(p).__name__ for p in chain]}}, f, indent=2)
    print("wrote processors:", ", ".join(cases), "order", [type(p).__name__ for p in chain])


def penalty_fixtures(name):
    """Greedy decoding with repetition_penalty = PENALTY (a logits processor, so it applies
    to greedy search too) from the committed prompts, in tests/fixtures/generation/<name>/:
      penalty.npy                [1, 7 + 40] and penalty_scores.npy [1, 40, vocab] float32
      padded_penalty.npy         [2, 7 + 32] the left-padded batch (transformers ignores
                                 each row's padding) and padded_penalty_scores.npy
    Skipped (not written) when a greedy choice is within MIN_MARGIN of a tie."""
    model = AutoModelForCausalLM.from_pretrained(os.path.join(MODELS, name), dtype=torch.float32,
                                                 attn_implementation="eager").eval()
    folder = os.path.join(OUT, name)
    prompt = torch.from_numpy(np.load(os.path.join(folder, "prompt.npy")))
    padded = torch.from_numpy(np.load(os.path.join(folder, "padded_prompt.npy")))
    mask = torch.from_numpy(np.load(os.path.join(folder, "padded_mask.npy")))
    seq, m1, scores = greedy(model, prompt, NEW, repetition_penalty=PENALTY)
    pseq, m2, pscores = greedy(model, padded, PADDED_NEW, mask=mask, repetition_penalty=PENALTY)
    if min(m1, m2) <= MIN_MARGIN:
        print(f"skipped penalty fixtures of {name}: margin {min(m1, m2):.2e}")
        return
    np.save(os.path.join(folder, "penalty.npy"), seq.numpy().astype(np.int64))
    np.save(os.path.join(folder, "penalty_scores.npy"), scores.numpy())
    np.save(os.path.join(folder, "padded_penalty.npy"), pseq.numpy().astype(np.int64))
    np.save(os.path.join(folder, "padded_penalty_scores.npy"), pscores.numpy())
    path = os.path.join(folder, "reference.json")
    with open(path) as f:
        reference = json.load(f)
    reference["repetition_penalty"] = {"penalty": PENALTY, "min_top2_margin": min(m1, m2)}
    with open(path, "w") as f:
        json.dump(reference, f, indent=2)
    print(f"wrote {name} penalty fixtures: margin {min(m1, m2):.2e}")


def main():
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    os.makedirs(OUT, exist_ok=True)
    for name in DECODERS:
        model_fixtures(name, rng)
    warper_fixtures(rng)
    for name in DECODERS:
        penalty_fixtures(name)


if __name__ == "__main__":
    sys.exit(main())
