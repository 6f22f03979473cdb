#!/usr/bin/env python3
"""Trains the instruct-style fixture tests/fixtures/models/instruct_chatml/: a tiny Qwen2
chat model whose answers end with <|im_end|>, and transformers' reference outputs for it.

Why: an instruct model stops when it emits its end-of-turn token, which is not the
tokenizer's <|endoftext|> but <|im_end|>, named by generation_config.json. The fixture
checks the whole chat path of `ingot generate --chat` against transformers: the chat
template (Qwen 2.5's published ChatML template, byte for byte from
tests/fixtures/chat_templates/templates/qwen2_5.jinja), the encoding of its special
tokens, the eos ids of generation_config.json, and greedy generation stopping there.

Tokenizer: byte-level BPE laid out as Qwen 2's tokenizer.json (NFC normalizer, Qwen's
Split regex then ByteLevel without its regex, ByteLevel decoder), trained with the
`tokenizers` package on the synthetic conversations; 381 tokens, then the added special
tokens <|endoftext|>, <|im_start|>, <|im_end|> (ids 381-383, after the vocabulary as in
Qwen). No BOS.

Model: Qwen2ForCausalLM, hidden 64, 2 layers, 4 query heads / 2 key-value heads, qkv
bias, intermediate 128, tied embeddings, float32. config.json keeps the base model's
eos_token_id (<|endoftext|>); generation_config.json sets eos_token_id [<|im_end|>,
<|endoftext|>] and greedy decoding, as Qwen 2.5 instruct releases do: a generator that
read config.json instead would never stop at <|im_end|>.

Data: synthetic ChatML conversations (1-3 user/assistant turns, an optional system
message, else the template's default one) of four tasks with deterministic answers:
"What is 3 plus 4?" -> "3 plus 4 is 7.", "Repeat: red cat sun" -> "red cat sun",
"Say hello to Anna." -> "Hello, Anna! Nice to meet you.", "Count to 4." -> "1, 2, 3, 4.".
Rendered with tokenizer.apply_chat_template; the loss is on the assistant answers and
their <|im_end|> only. AdamW, a fixed step count, seed 0, one CPU thread: 3 to 5 minutes
on a shared 2-core machine; the output is the same byte for byte on every run.

Outputs (tests/fixtures/models/instruct_chatml/):
  config.json, model.safetensors, generation_config.json, tokenizer.json,
  tokenizer_config.json, chat_template.jinja      the model folder (save_pretrained)
  reference.json   for three conversations (what `ingot generate` is given: --chat,
                   --chat + --system, --messages): apply_chat_template(...,
                   add_generation_prompt=True, tokenize=False) text and its ids,
                   model.generate(max_new_tokens=32) greedy ids (ending with <|im_end|>),
                   their decoded text, the 32 greedy ids when EOS is ignored, the smallest
                   top-1 / top-2 logit gap on those paths; training figures; versions.

Run (repository root, reference venv):
  nice -n 10 $(tools/reference/setup-venv) tools/reference/make_instruct_fixture.py
"""
import argparse
import json
import math
import os
import random
import re
import shutil
import sys
import time

import numpy as np
import tokenizers
import torch
import transformers
from tokenizers import (AddedToken, Regex, Tokenizer, decoders, models, normalizers,
                        pre_tokenizers, processors, trainers)
from transformers import (AutoModelForCausalLM, AutoTokenizer, GenerationConfig, Qwen2Config,
                          Qwen2ForCausalLM, PreTrainedTokenizerFast)

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
OUT = os.path.join(ROOT, "tests", "fixtures", "models", "instruct_chatml")
TEMPLATE = os.path.join(ROOT, "tests", "fixtures", "chat_templates", "templates", "qwen2_5.jinja")

EOT, IM_START, IM_END = "<|endoftext|>", "<|im_start|>", "<|im_end|>"
BPE_VOCAB = 381  # + 3 special tokens = 384
QWEN2_SPLIT = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}|"
               r" ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")

SEED = 0
THREADS = 1  # the reference machines are shared: more threads spin and slow down
STEPS = 1500
BATCH = 16
PEAK_LR = 3e-3
MIN_LR = 1e-4
WARMUP = 50
MAX_NEW_TOKENS = 32
MAX_FIXTURE_BYTES = 500 * 1000

NAMES = ["Anna", "Ben", "Clara", "David", "Emma", "Felix", "Grace", "Henry", "Iris", "Jack"]
WORDS = ["red", "blue", "green", "cat", "dog", "sun", "moon", "tree", "fish", "bird", "star",
         "rain", "snow", "book", "lamp", "ship"]
SYSTEMS = [None, None, "You are a helpful assistant.", "You are a friendly bot.",
           "Answer briefly."]

# What the test gives `ingot generate`: "chat" (+ "system") or "messages".
CASES = [
    dict(name="chat", chat="What is 2 plus 5?", answer="2 plus 5 is 7."),
    dict(name="chat_system", system="You are a helpful assistant.", chat="Say hello to Emma.",
         answer="Hello, Emma! Nice to meet you."),
    dict(name="messages", messages=[
        {"role": "system", "content": "Answer briefly."},
        {"role": "user", "content": "Repeat: cat dog sun"},
        {"role": "assistant", "content": "cat dog sun"},
        {"role": "user", "content": "Count to 4."}], answer="1, 2, 3, 4."),
]


# ---------------------------------------------------------------------------------------
# Conversations.

def task(rng):
    """One (user message, assistant answer) pair."""
    kind = rng.randrange(4)
    if kind == 0:
        a, b = rng.randrange(10), rng.randrange(10)
        return f"What is {a} plus {b}?", f"{a} plus {b} is {a + b}."
    if kind == 1:
        words = " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 4)))
        return f"Repeat: {words}", words
    if kind == 2:
        name = rng.choice(NAMES)
        return f"Say hello to {name}.", f"Hello, {name}! Nice to meet you."
    n = rng.randint(1, 6)
    return f"Count to {n}.", ", ".join(str(i) for i in range(1, n + 1)) + "."


def conversation(rng):
    system = rng.choice(SYSTEMS)
    messages = [{"role": "system", "content": system}] if system else []
    for _ in range(rng.choice([1, 1, 2, 3])):
        user, answer = task(rng)
        messages += [{"role": "user", "content": user}, {"role": "assistant", "content": answer}]
    return messages


def case_messages(case):
    if "messages" in case:
        return case["messages"]
    system = [{"role": "system", "content": case["system"]}] if "system" in case else []
    return system + [{"role": "user", "content": case["chat"]}]


# ---------------------------------------------------------------------------------------
# Tokenizer and model.

def train_tokenizer(texts):
    tok = Tokenizer(models.BPE())
    tok.normalizer = normalizers.NFC()
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(QWEN2_SPLIT), behavior="isolated"),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
    tok.decoder = decoders.ByteLevel()
    tok.post_processor = processors.ByteLevel(trim_offsets=False)
    trainer = trainers.BpeTrainer(vocab_size=BPE_VOCAB, min_frequency=2,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                  show_progress=False)
    specials = re.compile("|".join(re.escape(s) for s in (EOT, IM_START, IM_END)))
    tok.train_from_iterator([specials.sub("\n", t) for t in texts], trainer=trainer)
    assert tok.get_vocab_size() == BPE_VOCAB, tok.get_vocab_size()
    tok.add_special_tokens([AddedToken(s, special=True, normalized=False)
                            for s in (EOT, IM_START, IM_END)])
    return tok


def hf_tokenizer(tok, template):
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, eos_token=IM_END, pad_token=EOT,
                                   model_max_length=512)
    fast.chat_template = template
    return fast


def make_config(vocab, eot_id):
    return Qwen2Config(
        vocab_size=vocab, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=512,
        rms_norm_eps=1e-6, rope_parameters=dict(rope_type="default", rope_theta=1000000.0),
        tie_word_embeddings=True, bos_token_id=eot_id, eos_token_id=eot_id,
        attn_implementation="eager")


def example(fast, messages):
    """Token ids of a rendered conversation and its labels: the assistant answers and their
    <|im_end|>, -100 elsewhere (the model shifts labels itself)."""
    text = fast.apply_chat_template(messages, tokenize=False)
    enc = fast.backend_tokenizer.encode(text, add_special_tokens=False)
    header = IM_START + "assistant\n"
    spans, pos = [], 0
    while (start := text.find(header, pos)) >= 0:
        start += len(header)
        end = text.index(IM_END, start) + len(IM_END)
        spans.append((start, end))
        pos = end
    labels = [i if any(s <= a and b <= e for s, e in spans) else -100
              for i, (a, b) in zip(enc.ids, enc.offsets)]
    return enc.ids, labels


def lr_at(step, steps):
    if step < WARMUP:
        return PEAK_LR * (step + 1) / WARMUP
    progress = (step - WARMUP) / max(1, steps - WARMUP)
    return MIN_LR + 0.5 * (PEAK_LR - MIN_LR) * (1 + math.cos(math.pi * progress))


def batch(fast, rng, pad_id):
    rows = [example(fast, conversation(rng)) for _ in range(BATCH)]
    width = max(len(ids) for ids, _ in rows)
    ids = torch.full((BATCH, width), pad_id, dtype=torch.long)
    labels = torch.full((BATCH, width), -100, dtype=torch.long)
    mask = torch.zeros((BATCH, width), dtype=torch.long)
    for r, (i, l) in enumerate(rows):
        ids[r, :len(i)], labels[r, :len(l)], mask[r, :len(i)] = torch.tensor(i), torch.tensor(l), 1
    return ids, mask, labels


def train(fast, config, steps):
    torch.manual_seed(SEED)
    rng = random.Random(SEED)
    model = Qwen2ForCausalLM(config)
    optimizer = torch.optim.AdamW(model.parameters(), lr=PEAK_LR, betas=(0.9, 0.95),
                                  weight_decay=0.01)
    log, smoothed, start = [], None, time.time()
    model.train()
    for step in range(steps):
        for group in optimizer.param_groups:
            group["lr"] = lr_at(step, steps)
        ids, mask, labels = batch(fast, rng, config.pad_token_id or config.eos_token_id)
        loss = model(input_ids=ids, attention_mask=mask, labels=labels).loss
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        smoothed = loss.item() if smoothed is None else 0.95 * smoothed + 0.05 * loss.item()
        if step % 100 == 0 or step == steps - 1:
            print(f"step {step:4d}  loss {loss.item():.4f}  smoothed {smoothed:.4f}  "
                  f"{time.time() - start:5.0f}s", flush=True)
            log.append(dict(step=step, loss=round(loss.item(), 4), smoothed=round(smoothed, 4)))
    seconds = time.time() - start
    print(f"trained {steps} steps in {seconds:.0f}s, final smoothed loss {smoothed:.4f}")
    return model.eval(), dict(steps=steps, batch=BATCH, seconds=round(seconds),
                              final_loss=round(loss.item(), 4),
                              final_smoothed_loss=round(smoothed, 4), log=log)


def save(model, fast, eot_id, im_end_id):
    shutil.rmtree(OUT, ignore_errors=True)
    model.generation_config = GenerationConfig(
        bos_token_id=eot_id, eos_token_id=[im_end_id, eot_id], pad_token_id=eot_id,
        do_sample=False, max_new_tokens=64)
    model.save_pretrained(OUT, safe_serialization=True)
    fast.save_pretrained(OUT)


# ---------------------------------------------------------------------------------------
# The reference, from the saved folder as a user would load it.

@torch.no_grad()
def min_gap(model, ids, start):
    """Smallest top-1 minus top-2 logit over the positions predicting ids[start:]."""
    logits = model(input_ids=torch.tensor([ids[:-1]])).logits[0, start - 1:]
    top2 = logits.topk(2, dim=-1).values
    return float((top2[:, 0] - top2[:, 1]).min())


@torch.no_grad()
def greedy_ignoring_eos(model, ids, n):
    out = list(ids)
    for _ in range(n):
        out.append(int(model(input_ids=torch.tensor([out])).logits[0, -1].argmax()))
    return out[len(ids):]


@torch.no_grad()
def reference(training):
    model = AutoModelForCausalLM.from_pretrained(OUT, dtype=torch.float32,
                                                 attn_implementation="eager").eval()
    hf_tok = AutoTokenizer.from_pretrained(OUT)
    im_end_id, eot_id = hf_tok.convert_tokens_to_ids([IM_END, EOT])
    assert model.generation_config.eos_token_id == [im_end_id, eot_id]
    cases = []
    for case in CASES:
        messages = case_messages(case)
        text = hf_tok.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
        prompt_ids = hf_tok(text, add_special_tokens=False).input_ids
        templated = hf_tok.apply_chat_template(messages, add_generation_prompt=True,
                                               tokenize=True, return_dict=True)["input_ids"]
        assert templated == prompt_ids, (templated, prompt_ids)
        out = model.generate(torch.tensor([prompt_ids]), max_new_tokens=MAX_NEW_TOKENS)
        generated = out[0, len(prompt_ids):].tolist()
        answer = hf_tok.decode(generated, skip_special_tokens=True)
        print(f"--- {case['name']}: {answer!r} ({len(generated)} tokens) {generated}")
        assert generated[-1] == im_end_id and len(generated) < MAX_NEW_TOKENS, generated
        assert answer == case["answer"], (answer, case["answer"])
        no_eos = greedy_ignoring_eos(model, prompt_ids, MAX_NEW_TOKENS)
        assert no_eos[:len(generated)] == generated, (no_eos, generated)
        # Without generation_config.json transformers stops at config.json's eos only,
        # <|endoftext|>: these ids are then what it generates (the test relies on this).
        assert eot_id not in no_eos, no_eos
        gap = min_gap(model, prompt_ids + no_eos, len(prompt_ids))
        assert gap > 1e-2, f"{case['name']}: greedy path has a near tie (gap {gap})"
        entry = {k: case[k] for k in ("name", "chat", "system") if k in case}
        entry |= dict(messages=messages, prompt_text=text, prompt_ids=prompt_ids,
                      generated_ids=generated, text=answer, ignore_eos_ids=no_eos,
                      min_logit_gap=round(gap, 4))
        cases.append(entry)
    made_by = dict(script="tools/reference/make_instruct_fixture.py", torch=torch.__version__,
                   transformers=transformers.__version__, tokenizers=tokenizers.__version__,
                   numpy=np.__version__, forward="Qwen2ForCausalLM float32 eager attention",
                   generate=f"model.generate(max_new_tokens={MAX_NEW_TOKENS}) with the "
                            "folder's generation_config.json (greedy)")
    ref = dict(im_end_id=im_end_id, endoftext_id=eot_id,
               im_start_id=hf_tok.convert_tokens_to_ids(IM_START), vocab_size=len(hf_tok),
               max_new_tokens=MAX_NEW_TOKENS, cases=cases, training=training, made_by=made_by)
    with open(os.path.join(OUT, "reference.json"), "w") as f:
        f.write(compact_json(ref))


def compact_json(value):
    """Indented JSON with lists of numbers kept on one line."""
    text = json.dumps(value, indent=1, ensure_ascii=False)
    text = re.sub(r'(": )\[\s*([-0-9.,\s]+?)\s*\]',
                  lambda m: m.group(1) + "[" + ", ".join(m.group(2).replace(",", " ").split())
                  + "]", text)
    return text + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=STEPS, help="optimizer steps")
    args = parser.parse_args()
    torch.set_num_threads(THREADS)
    with open(TEMPLATE) as f:
        template = f.read()
    corpus_rng = random.Random(SEED + 1)
    bootstrap = PreTrainedTokenizerFast(tokenizer_object=Tokenizer(models.BPE()))
    bootstrap.chat_template = template
    texts = [bootstrap.apply_chat_template(conversation(corpus_rng), tokenize=False)
             for _ in range(2000)]
    tok = train_tokenizer(texts)
    fast = hf_tokenizer(tok, template)
    eot_id, im_end_id = tok.token_to_id(EOT), tok.token_to_id(IM_END)
    model, training = train(fast, make_config(tok.get_vocab_size(), eot_id), args.steps)
    save(model, fast, eot_id, im_end_id)
    reference(training)
    size = sum(os.path.getsize(os.path.join(OUT, n)) for n in os.listdir(OUT))
    print(f"{OUT}: {sorted(os.listdir(OUT))}, {size / 1e3:.0f} KB")
    assert size <= MAX_FIXTURE_BYTES, f"the fixture must stay within {MAX_FIXTURE_BYTES} bytes"


if __name__ == "__main__":
    sys.exit(main())
