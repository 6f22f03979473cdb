#!/usr/bin/env python3
"""Tiny random encoder-decoder checkpoints with transformers' reference outputs (issue 18).

Two T5ForConditionalGeneration checkpoints, written to tests/fixtures/encdec/<name>/:

  t5        T5 v1.0 style: feed_forward_proj "relu", tied embeddings (decoder output
            rescaled by d_model**-0.5 before the LM head), 2 layers each
  t5_gated  T5 v1.1 style: "gated-gelu" (wi_0 / wi_1, gelu_new), its own lm_head.weight and
            an old v1.1 config.json (tie_word_embeddings false: no rescale), 3 layers each, d_kv * heads != d_model
(Equal encoder and decoder depths: transformers 5.23's generate sizes the cross-attention
cache by num_layers, so num_decoder_layers != num_layers fails there.)

Both use 8 relative-position buckets with max_distance 12, so the prompt and the 20
generated tokens reach the logarithmic and the clamped buckets. Each folder holds:

  config.json, model.safetensors, generation_config.json    the checkpoint
  tokenizer.json, tokenizer_config.json    a WordLevel tokenizer that appends </s> as
                                           T5's does (T5's own Unigram model is not used)
  prompt.txt           the encoder's text
  input_ids.npy        the tokenizer's ids of prompt.txt (with </s>)
  encoder_hidden_states.npy   model.encoder(input_ids).last_hidden_state
  cross_key.npy, cross_value.npy   every decoder layer's EncDecAttention k / v over the
                       encoder states, [layers, 1, heads, source, d_kv]
  decoder_input_ids.npy  decoder_start_token_id + the greedy tokens but the last
  logits.npy           the full forward (input_ids, decoder_input_ids): teacher forcing
  greedy.npy           generate(max_new_tokens=20, greedy): the new tokens only
  reference.json       tool versions, the greedy top-2 margin

and tests/fixtures/encdec/relative_buckets.json: torch's T5Attention._relative_position_bucket
over relative positions -300..300 for several (bidirectional, num_buckets, max_distance).

Run with the reference venv:  $(tools/reference/setup-venv) tools/reference/make_encdec_fixtures.py
"""
import json
import os

import numpy as np
import torch
import transformers as T
from safetensors.torch import load_file, save_file
from tokenizers import Tokenizer, models, pre_tokenizers, processors

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
OUT = os.path.join(ROOT, "tests", "fixtures", "encdec")
WORDS = ("translate english to german : summarize the cat sat on a mat . dog house is red "
         "blue green small big and it was there are two one der die das ist ein eine katze "
         "hund haus rot klein").split()
SPECIAL = ["<pad>", "</s>", "<unk>"]
NEW_TOKENS = 20
PROMPT = "translate english to german : the small cat sat on a red mat ."


def make_tokenizer(folder):
    """WordLevel over WORDS with </s> appended (T5's post-processor)."""
    vocab = {t: i for i, t in enumerate(SPECIAL + WORDS)}
    tok = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tok.add_special_tokens(SPECIAL)
    tok.post_processor = processors.TemplateProcessing(
        single="$A </s>", pair="$A </s> $B </s>", special_tokens=[("</s>", vocab["</s>"])])
    fast = T.PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="</s>", unk_token="<unk>",
                                     pad_token="<pad>")
    fast.save_pretrained(folder)
    return fast, vocab


def save(folder, name, t):
    a = t.detach().cpu().numpy() if torch.is_tensor(t) else np.asarray(t)
    if a.dtype == np.float64:
        a = a.astype(np.float32)
    np.save(os.path.join(folder, name + ".npy"), a)


def build(folder, seed, untied, vocab, **kw):
    """A random T5 saved to `folder` and loaded back (the references come from the loaded one).

    untied: the checkpoint gets its own lm_head.weight and an old T5 v1.1 config.json
    (tie_word_embeddings false, no scale_decoder_outputs), as the hub's v1.1 / flan-t5
    checkpoints have; transformers then keeps the file's lm_head and does not rescale."""
    torch.manual_seed(seed)
    config = T.T5Config(vocab_size=len(vocab), d_model=32, num_heads=4,
                        relative_attention_num_buckets=8, relative_attention_max_distance=12,
                        dropout_rate=0.0, layer_norm_epsilon=1e-6, initializer_factor=1.0,
                        pad_token_id=0, eos_token_id=1, decoder_start_token_id=0, **kw)
    model = T.T5ForConditionalGeneration(config).eval()
    with torch.no_grad():  # T5's own init keeps tiny models near-constant: spread it
        for n, p in model.named_parameters():
            if "layer_norm" in n:
                p.add_(torch.randn_like(p) * 0.2)
            elif "relative_attention_bias" in n:
                p.copy_(torch.randn_like(p) * 2.0)
            else:
                p.copy_(torch.randn_like(p) * p.shape[-1] ** -0.5 * 1.5)
    model.save_pretrained(folder)
    model.generation_config.save_pretrained(folder)
    if untied:
        path = os.path.join(folder, "model.safetensors")
        state = load_file(path)
        state["lm_head.weight"] = torch.randn_like(state["shared.weight"]) * 0.3
        save_file(state, path, metadata={"format": "pt"})
        cpath = os.path.join(folder, "config.json")
        with open(cpath) as f:
            saved = json.load(f)
        saved["tie_word_embeddings"] = False
        saved.pop("scale_decoder_outputs", None)
        with open(cpath, "w") as f:
            json.dump(saved, f, indent=2)
    model = T.T5ForConditionalGeneration.from_pretrained(folder, attn_implementation="eager").eval()
    if untied:
        assert not torch.equal(model.lm_head.weight, model.shared.weight)
        assert not model.config.scale_decoder_outputs
    return model, model.config


def float32_error(model, input_ids, decoder_input_ids):
    """max |float32 logits - float64 logits| of the teacher-forced forward."""
    import copy
    with torch.no_grad():
        f32 = model(input_ids=input_ids, decoder_input_ids=decoder_input_ids).logits
        f64 = copy.deepcopy(model).double()(input_ids=input_ids,
                                            decoder_input_ids=decoder_input_ids).logits
    return float((f32.double() - f64).abs().max())


def make_t5(name, seed, untied, **kw):
    folder = os.path.join(OUT, name)
    os.makedirs(folder, exist_ok=True)
    tokenizer, vocab = make_tokenizer(folder)
    input_ids = tokenizer(PROMPT, return_tensors="pt")["input_ids"]
    assert input_ids[0, -1] == vocab["</s>"] and (input_ids != vocab["<unk>"]).all()
    # A seed whose greedy continuation varies (>= 6 distinct tokens), is not decided by a
    # hair (top-2 logit margin > 0.01 at every step), is well conditioned (float32 logits
    # within 2e-5 of float64: a 1e-4 tolerance then judges ingot, not rounding) and does
    # not stop at </s> within
    # NEW_TOKENS, so that every runtime (eos as a stop token) produces all of them.
    for s in range(seed, seed + 300):
        model, config = build(folder, s, untied, vocab, **kw)
        with torch.no_grad():
            gen = model.generate(input_ids, max_new_tokens=NEW_TOKENS, do_sample=False,
                                 output_scores=True, return_dict_in_generate=True)
        new = gen.sequences[0, 1:]
        margin = min(float(torch.topk(x[0], 2).values[0] - torch.topk(x[0], 2).values[1])
                     for x in gen.scores)
        if (len(new) == NEW_TOKENS and (new != config.eos_token_id).all()
                and len(set(new.tolist())) >= 6 and margin > 0.01
                and float32_error(model, input_ids, gen.sequences[:, :-1]) < 2e-5):
            break
    else:
        raise RuntimeError(f"{name}: no seed with a varied greedy continuation")
    with open(os.path.join(folder, "prompt.txt"), "w") as f:
        f.write(PROMPT)
    save(folder, "input_ids", input_ids)
    with torch.no_grad():
        enc = model.encoder(input_ids=input_ids).last_hidden_state
        save(folder, "encoder_hidden_states", enc)
        h, d = config.num_heads, config.d_kv
        keys, values = [], []
        for block in model.decoder.block:
            a = block.layer[1].EncDecAttention
            keys.append(a.k(enc).view(1, -1, h, d).transpose(1, 2))
            values.append(a.v(enc).view(1, -1, h, d).transpose(1, 2))
        save(folder, "cross_key", torch.stack(keys))
        save(folder, "cross_value", torch.stack(values))
        decoder_input_ids = gen.sequences[:, :-1]
        save(folder, "decoder_input_ids", decoder_input_ids)
        out = model(input_ids=input_ids, decoder_input_ids=decoder_input_ids)
        save(folder, "logits", out.logits)
        # Teacher forcing reproduces the greedy choice at every position.
        assert torch.equal(out.logits[0].argmax(-1), gen.sequences[0, 1:])
    save(folder, "greedy", gen.sequences[:, 1:])
    margins = [float(torch.topk(s[0], 2).values[0] - torch.topk(s[0], 2).values[1])
               for s in gen.scores]
    with open(os.path.join(folder, "config.json")) as f:
        saved = json.load(f)
    ref = {"torch": torch.__version__, "transformers": T.__version__,
           "script": "tools/reference/make_encdec_fixtures.py", "seed": s, "dtype": "float32",
           "attn_implementation": "eager", "source_tokens": int(input_ids.shape[1]),
           "max_new_tokens": NEW_TOKENS, "min_top2_margin": min(margins),
           "scale_decoder_outputs": bool(config.scale_decoder_outputs),
           "config_tie_word_embeddings": saved.get("tie_word_embeddings"),
           "greedy": gen.sequences[0, 1:].tolist()}
    with open(os.path.join(folder, "reference.json"), "w") as f:
        json.dump(ref, f, indent=2)
    print(name, ref)


def make_buckets():
    rel = torch.arange(-300, 301)
    cases = []
    for bidirectional in (True, False):
        for num_buckets, max_distance in ((32, 128), (8, 12), (16, 40), (64, 256)):
            b = T.models.t5.modeling_t5.T5Attention._relative_position_bucket(
                rel, bidirectional=bidirectional, num_buckets=num_buckets,
                max_distance=max_distance)
            cases.append({"bidirectional": bidirectional, "num_buckets": num_buckets,
                          "max_distance": max_distance, "first_relative_position": -300,
                          "buckets": b.tolist()})
    with open(os.path.join(OUT, "relative_buckets.json"), "w") as f:
        json.dump({"script": "tools/reference/make_encdec_fixtures.py",
                   "transformers": T.__version__, "cases": cases}, f)


if __name__ == "__main__":
    os.makedirs(OUT, exist_ok=True)
    make_buckets()
    make_t5("t5", 18, d_kv=8, d_ff=64, num_layers=2, num_decoder_layers=2,
            feed_forward_proj="relu", untied=False)
    make_t5("t5_gated", 1800, d_kv=6, d_ff=48, num_layers=3, num_decoder_layers=3,
            feed_forward_proj="gated-gelu", untied=True)
