#!/usr/bin/env python3
"""Tiny random checkpoints of the architectures added after the first six (Gemma 1-3,
Qwen2/Qwen3 per-layer sliding windows, Phi-3 LongRoPE, OLMo 2, Granite, GPT-NeoX,
StableLM, SmolLM3), with transformers' reference outputs and greedy generations.

Same layout as make_model_fixtures.py (tests/fixtures/models/<name>/: checkpoint,
input_ids / attention_mask, logits, hidden_states, reference.json) and, for each, the
make_generation_fixtures.py files in tests/fixtures/generation/<name>/. Each config
turns on the feature it is there for, so a wrong implementation shows in the numbers:

  * sliding windows (3 or 4) shorter than the 9-token fixture sequence, so they cut in;
  * soft-capping thresholds near the logits' size (tanh far from linear), checked below;
  * norm weights perturbed away from their init (Gemma's zeros would hide `1 + w`);
  * LongRoPE past original_max_position_embeddings (long factors) and within it (short);
  * a NoPE layer among rotary layers (SmolLM3), partial rotary (GPT-NeoX, StableLM).

Each case has its own random streams (seeded by its name), so adding a case leaves the
others' files unchanged; make_model_fixtures.py's fixtures are not touched.

Run with the reference venv:
  $(tools/reference/setup-venv) tools/reference/make_architecture_fixtures.py [names...]
"""
import json
import os
import sys
import zlib

import numpy as np
import torch
import transformers as T

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_generation_fixtures as gen  # noqa: E402
from make_model_fixtures import OUT, VOCAB, inputs, run, save_case  # noqa: E402

COMMON = dict(vocab_size=VOCAB, hidden_size=64, intermediate_size=96, max_position_embeddings=128,
              pad_token_id=0, bos_token_id=1, eos_token_id=2, initializer_range=0.1,
              attn_implementation="eager")


def cases():
    """name -> (model class, config). Softcaps are (attention, final) logit caps."""
    longrope = dict(rope_type="longrope", rope_theta=10000.0,
                    short_factor=[1.0, 1.1, 1.3, 1.6, 2.0, 2.5, 3.1, 3.8],
                    long_factor=[1.0, 1.5, 2.4, 3.5, 5.0, 6.8, 9.0, 12.0])
    return {
        "gemma": (T.GemmaForCausalLM, T.GemmaConfig(
            **COMMON, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=1,
            head_dim=32, hidden_act="gelu_pytorch_tanh", rms_norm_eps=1e-6)),
        "gemma2": (T.Gemma2ForCausalLM, T.Gemma2Config(
            **COMMON, num_hidden_layers=3, num_attention_heads=4, num_key_value_heads=2,
            head_dim=16, query_pre_attn_scalar=24, sliding_window=4,
            attn_logit_softcapping=1.0, final_logit_softcapping=1.0)),
        "gemma3": (T.Gemma3ForCausalLM, T.Gemma3TextConfig(
            **COMMON, num_hidden_layers=3, num_attention_heads=4, num_key_value_heads=2,
            head_dim=16, query_pre_attn_scalar=16, sliding_window=3,
            layer_types=["sliding_attention", "sliding_attention", "full_attention"],
            rope_parameters={"sliding_attention": dict(rope_type="default", rope_theta=10000.0),
                             "full_attention": dict(rope_type="default", rope_theta=1000000.0)})),
        "qwen2_sliding_window": (T.Qwen2ForCausalLM, T.Qwen2Config(
            **COMMON, num_hidden_layers=3, num_attention_heads=4, num_key_value_heads=2,
            use_sliding_window=True, sliding_window=4, max_window_layers=1,
            tie_word_embeddings=False)),
        "qwen3_sliding_window": (T.Qwen3ForCausalLM, T.Qwen3Config(
            **COMMON, num_hidden_layers=3, num_attention_heads=4, num_key_value_heads=2,
            head_dim=16, use_sliding_window=True, sliding_window=3, max_window_layers=2,
            tie_word_embeddings=True)),
        # original_max_position_embeddings 4: every fixture sequence (9 tokens, 7-token
        # prompts) is past it, so the long factors are used from the first token on (a
        # prompt shorter than it would make transformers' generate re-run the prompt when
        # the sequence crosses it, which ingot does not do: see docs/models.md).
        "phi3_longrope": (T.Phi3ForCausalLM, T.Phi3Config(
            **COMMON, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
            original_max_position_embeddings=4,
            rope_parameters={**longrope, "original_max_position_embeddings": 4})),
        # ... and 64: never crossed, the short factors throughout.
        "phi3_longrope_short": (T.Phi3ForCausalLM, T.Phi3Config(
            **COMMON, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=4,
            original_max_position_embeddings=64, tie_word_embeddings=True,
            rope_parameters={**longrope, "original_max_position_embeddings": 64})),
        "olmo2": (T.Olmo2ForCausalLM, T.Olmo2Config(
            **COMMON, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2)),
        "granite": (T.GraniteForCausalLM, T.GraniteConfig(
            **COMMON, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
            embedding_multiplier=6.0, attention_multiplier=0.2, residual_multiplier=0.4,
            logits_scaling=3.0, tie_word_embeddings=True)),
        "gpt_neox": (T.GPTNeoXForCausalLM, T.GPTNeoXConfig(
            **COMMON, num_hidden_layers=2, num_attention_heads=4, use_parallel_residual=True,
            rope_parameters=dict(rope_type="default", rope_theta=10000.0,
                                 partial_rotary_factor=0.25))),
        "stablelm": (T.StableLmForCausalLM, T.StableLmConfig(
            **COMMON, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
            qk_layernorm=True, use_qkv_bias=True, use_parallel_residual=False,
            rope_parameters=dict(rope_type="default", rope_theta=10000.0,
                                 partial_rotary_factor=0.25))),
        "stablelm_parallel_residual": (T.StableLmForCausalLM, T.StableLmConfig(
            **COMMON, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=4,
            use_parallel_residual=True, tie_word_embeddings=True,
            rope_parameters=dict(rope_type="default", rope_theta=10000.0,
                                 partial_rotary_factor=0.5))),
        "smollm3": (T.SmolLM3ForCausalLM, T.SmolLM3Config(
            **COMMON, num_hidden_layers=3, num_attention_heads=4, num_key_value_heads=2,
            no_rope_layer_interval=2)),
        # 8 experts, 2 per token: over the 18 fixture tokens the router picks experts
        # unevenly (check_routing below prints the counts and needs an unused expert or a
        # spread of at least 3).
        "mixtral": (T.MixtralForCausalLM, T.MixtralConfig(
            **COMMON, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
            num_local_experts=8, num_experts_per_tok=2, sliding_window=5,
            tie_word_embeddings=False)),
        # Layer 1 dense (mlp_only_layers), layers 0 and 2 sparse; raw top-k weights.
        "qwen3_moe": (T.Qwen3MoeForCausalLM, T.Qwen3MoeConfig(
            **COMMON, num_hidden_layers=3, num_attention_heads=4, num_key_value_heads=2,
            head_dim=16, num_experts=6, num_experts_per_tok=2, moe_intermediate_size=32,
            norm_topk_prob=False, mlp_only_layers=[1], tie_word_embeddings=True)),
    }


def check_routing(name, model, feeds):
    """Counts how often each expert is chosen in the first sparse layer."""
    for module in model.modules():
        gate = getattr(module, "gate", None)
        if gate is not None and hasattr(gate, "top_k"):
            seen = {}
            def hook(_, args, out):
                seen["index"] = out[2]
            handle = gate.register_forward_hook(hook)
            run(model, feeds)
            handle.remove()
            counts = torch.bincount(seen["index"].flatten(), minlength=gate.num_experts)
            print(f"  {name}: expert choices per expert {counts.tolist()}")
            assert counts.min() == 0 or counts.max() - counts.min() >= 3, "routing too even"
            return


def perturb_norms(model, generator):
    """Moves every norm weight (and bias) away from its init by N(0, 0.1^2)."""
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "norm" in name:
                p.add_(0.1 * torch.randn(p.shape, generator=generator))


def check_softcaps(name, config, out):
    """The final-logit cap must bend the logits: some |logit| / cap above 0.5."""
    cap = getattr(config, "final_logit_softcapping", None)
    if cap:
        ratio = float(out.logits.abs().max()) / cap
        assert ratio > 0.5, f"{name}: final softcap inactive (max |logit| / cap = {ratio:.2f})"
        print(f"  {name}: max |logit| / final cap = {ratio:.2f}")


def main(argv):
    os.makedirs(OUT, exist_ok=True)
    selected = argv[1:] or list(cases())
    for name in selected:
        cls, config = cases()[name]
        seed = zlib.crc32(name.encode())
        torch.manual_seed(seed)
        model = cls(config).eval()
        perturb_norms(model, torch.Generator().manual_seed(seed))
        feeds = inputs(np.random.default_rng(seed))
        out = run(model, feeds)
        check_softcaps(name, config, out)
        check_routing(name, model, feeds)
        outputs = {"logits": out.logits.float().numpy(),
                   "hidden_states": torch.stack(out.hidden_states).float().numpy()}
        save_case(name, model, feeds, outputs, {})
        reference = os.path.join(OUT, name, "reference.json")
        with open(reference) as f:
            meta = json.load(f)
        meta["script"] = "tools/reference/make_architecture_fixtures.py"
        with open(reference, "w") as f:
            json.dump(meta, f, indent=2)
        print("wrote", name)
        gen.model_fixtures(name, np.random.default_rng(seed))


if __name__ == "__main__":
    sys.exit(main(sys.argv))
