#!/usr/bin/env python3
"""Trains ingot's demo default model, assets/demo-lm: a small Llama on Jane Austen's novels.

Text source and licence
  Debian package r-cran-janeaustenr 1.0.0-1 (bookworm, section gnu-r, Architecture: all),
  the CRAN package janeaustenr 1.0.0 by Julia Silge: "Full texts for Jane Austen's 6
  completed novels" (Sense and Sensibility, Pride and Prejudice, Mansfield Park, Emma,
  Northanger Abbey, Persuasion), taken from Project Gutenberg. The package is MIT licensed
  (debian/copyright: "Files: * Copyright: 2016-2017 Julia Silge License: MIT"); the novels
  themselves (1811-1818) are in the public domain worldwide. Only the trained weights and
  the tokenizer are committed, not the text. The .deb is fetched with `apt-get download`
  (no install, no R needed) and checked against its SHA-256; its lazy-load data base
  (data/Rdata.rdx + Rdata.rdb: zlib-compressed R serialisation, XDR format) is read by the
  small reader below.

What it writes
  assets/demo-lm/          config.json, model.safetensors (float32), generation_config.json,
                           tokenizer.json, tokenizer_config.json, README.md (source, licence,
                           command, steps, losses, sample outputs from transformers' generate)
  tests/fixtures/demo_lm/  expected.json (tokenizer cases encoded by the `tokenizers`
                           package, the prompt ids, HF greedy continuation), logits.npy
                           (float32 [1, seq, vocab], HF eager forward of the prompt)

Model: LlamaForCausalLM, hidden 256, 4 layers, 8 query heads / 4 key-value heads (GQA),
head_dim 32, intermediate 688, RoPE theta 10000, tied embeddings, 512 positions, a 4096-
token byte-level BPE (GPT-2 style ByteLevel pre-tokenizer, <|endoftext|> = id 0 between
books). Trained on 512-token windows, AdamW, bf16 autocast on CPU with float32 master
weights, one thread (the reference machines are shared), about 20 minutes.

Run (from the repository root, reference venv):
  nice -n 10 \\
      $(tools/reference/setup-venv) tools/reference/train_demo_lm.py
  ... --fixtures-only   re-derives the fixtures and README samples from the saved folder
"""
import argparse
import gzip
import hashlib
import json
import math
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import time
import zlib

import numpy as np
import tokenizers
import torch
import transformers
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
from transformers import (AutoModelForCausalLM, AutoTokenizer, GenerationConfig, LlamaConfig,
                          LlamaForCausalLM, PreTrainedTokenizerFast)

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
ASSET_DIR = os.path.join(ROOT, "assets", "demo-lm")
FIXTURE_DIR = os.path.join(ROOT, "tests", "fixtures", "demo_lm")

DEB_NAME = "r-cran-janeaustenr"
DEB_VERSION = "1.0.0-1"
DEB_SHA256 = "df6bddf211906d1ff404f8ff662c21b34e6660e7f54a311084e749050c019c95"
RDATA = "usr/lib/R/site-library/janeaustenr/data/Rdata"
BOOKS = ["sensesensibility", "prideprejudice", "mansfieldpark", "emma", "northangerabbey",
         "persuasion"]
EOT = "<|endoftext|>"

VOCAB = 4096
SEQ = 512
BATCH = 8
STEPS = 900
PEAK_LR = 2e-3
MIN_LR = 2e-4
WARMUP = 60
WEIGHT_DECAY = 0.1
VALID_FRACTION = 0.01
SEED = 0
MAX_ASSET_BYTES = 25 * 1000 * 1000

PROMPTS = ["It is a truth universally acknowledged", "Elizabeth looked at her sister and",
           "The weather was so fine that", "Mr. Darcy"]
FIXTURE_PROMPT = "It is a truth universally acknowledged that"
GREEDY_FIXTURE_TOKENS = 32
TOKENIZER_CASES = [
    "It is a truth universally acknowledged, that a single man in possession of a good "
    "fortune, must be in want of a wife.",
    "\"My dear Mr. Bennet,\" said his lady to him one day, \"have you heard that Netherfield "
    "Park is let at last?\"",
    "Emma Woodhouse, handsome, clever, and rich -- 1816!",
    "  leading spaces, tabs\tand\nnew lines\n\n",
    "Unicode the books never saw: café, naïve, 東京, emoji 🙂, and <|endoftext|> itself.",
    "def f(x):\n    return x ** 2  # code, digits 0123456789",
    "",
]


# ---------------------------------------------------------------------------------------
# Text: the Debian package and its R lazy-load data base.

def fetch_deb(workdir, deb_path=None):
    """Returns the path of the checked .deb, downloading it with apt-get when not given."""
    if deb_path is None:
        subprocess.run(["apt-get", "download", f"{DEB_NAME}={DEB_VERSION}"], cwd=workdir,
                       check=True)
        deb_path = os.path.join(workdir, f"{DEB_NAME}_{DEB_VERSION}_all.deb")
    digest = hashlib.sha256(open(deb_path, "rb").read()).hexdigest()
    if digest != DEB_SHA256:
        sys.exit(f"{deb_path}: sha256 {digest}, expected {DEB_SHA256} ({DEB_NAME} {DEB_VERSION})")
    return deb_path


class RUnserializer:
    """Reads R's XDR serialisation (versions 2 and 3) for the types a data package holds:
    vectors (logical, integer, double, character, list, raw), pairlists and symbols."""

    NIL_LIKE = {254, 253, 252, 251, 250, 242, 241}  # NILVALUE, GLOBALENV, ... BASEENV

    def __init__(self, data):
        if data[:2] != b"X\n":
            raise ValueError("not an XDR R serialisation")
        self.data, self.pos, self.refs = data, 2, []
        version = self.int()
        self.int(), self.int()  # writer version, minimal reader version
        if version == 3:
            name_length = self.int()  # then the native encoding's name
            self.pos += name_length

    def int(self):
        (value,) = struct.unpack_from(">i", self.data, self.pos)
        self.pos += 4
        return value

    def length(self):
        n = self.int()
        return n if n != -1 else (self.int() << 32) + self.int()

    def item(self):
        flags = self.int()
        kind, has_attr, has_tag = flags & 0xFF, flags & (1 << 9), flags & (1 << 10)
        if kind in self.NIL_LIKE:
            return None
        if kind == 255:  # REFSXP
            index = flags >> 8 or self.int()
            return self.refs[index - 1]
        if kind == 1:  # SYMSXP
            symbol = ("symbol", self.item())
            self.refs.append(symbol)
            return symbol
        if kind == 9:  # CHARSXP
            n = self.int()
            if n == -1:
                return None  # NA_character_
            text = self.data[self.pos:self.pos + n].decode("utf-8")  # the package is UTF-8
            self.pos += n
            return text
        if kind == 2:  # LISTSXP (pairlist) -> {tag: value, ...}
            if has_attr:
                self.item()
            tag = self.item() if has_tag else None
            head = {tag[1] if tag else None: self.item()}
            return head | (self.item() or {})
        n = self.length()
        if kind in (10, 13):  # LGLSXP, INTSXP
            value = list(struct.unpack_from(f">{n}i", self.data, self.pos))
            self.pos += 4 * n
        elif kind == 14:  # REALSXP
            value = list(struct.unpack_from(f">{n}d", self.data, self.pos))
            self.pos += 8 * n
        elif kind in (16, 19, 20):  # STRSXP, VECSXP, EXPRSXP
            value = [self.item() for _ in range(n)]
        elif kind == 24:  # RAWSXP
            value = self.data[self.pos:self.pos + n]
            self.pos += n
        else:
            raise ValueError(f"R type {kind} is not supported (offset {self.pos})")
        attributes = self.item() if has_attr else {}
        return {"value": value, "attributes": attributes}


def read_lazyload(prefix):
    """Objects of an R lazy-load data base (prefix.rdx index + prefix.rdb blobs) by name."""
    index = RUnserializer(gzip.decompress(open(prefix + ".rdx", "rb").read())).item()
    fields = dict(zip(index["attributes"]["names"]["value"], index["value"]))
    variables = fields["variables"]
    blob_db = open(prefix + ".rdb", "rb").read()
    objects = {}
    for name, entry in zip(variables["attributes"]["names"]["value"], variables["value"]):
        offset, size = entry["value"]
        blob = blob_db[offset:offset + size]
        (raw_size,) = struct.unpack(">I", blob[:4])
        raw = zlib.decompress(blob[4:])
        assert len(raw) == raw_size, name
        objects[name] = RUnserializer(raw).item()
    return objects


def clean_book(lines):
    """Wrapped Gutenberg lines -> paragraphs joined by blank lines; `_italics_` unmarked."""
    paragraphs, current = [], []
    for line in lines + [""]:
        line = (line or "").strip()
        if line:
            current.append(line)
        elif current:
            paragraphs.append(" ".join(current))
            current = []
    text = "\n\n".join(paragraphs)
    text = text.replace("_", "")
    return re.sub(r"[ \t]+", " ", text)


def load_books(deb_path):
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(["dpkg-deb", "-x", deb_path, tmp], check=True)
        objects = read_lazyload(os.path.join(tmp, RDATA))
    return {name: clean_book(objects[name]["value"]) for name in BOOKS}


# ---------------------------------------------------------------------------------------
# Tokenizer and model.

def train_tokenizer(texts):
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.post_processor = processors.ByteLevel(trim_offsets=False)
    trainer = trainers.BpeTrainer(vocab_size=VOCAB, min_frequency=2, special_tokens=[EOT],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                  show_progress=False)
    tok.train_from_iterator(texts, trainer=trainer)
    assert tok.token_to_id(EOT) == 0 and tok.get_vocab_size() == VOCAB
    return tok


def make_config():
    return LlamaConfig(
        vocab_size=VOCAB, hidden_size=256, intermediate_size=688, num_hidden_layers=4,
        num_attention_heads=8, num_key_value_heads=4, head_dim=32, max_position_embeddings=SEQ,
        rms_norm_eps=1e-5, rope_parameters=dict(rope_type="default", rope_theta=10000.0),
        tie_word_embeddings=True, bos_token_id=0, eos_token_id=0, pad_token_id=0,
        hidden_act="silu", attention_bias=False, mlp_bias=False)


def lr_at(step, steps):
    if step < WARMUP:
        return PEAK_LR * (step + 1) / WARMUP
    progress = (step - WARMUP) / max(1, steps - WARMUP)
    return MIN_LR + 0.5 * (PEAK_LR - MIN_LR) * (1 + math.cos(math.pi * progress))


def batches(tokens, generator):
    """Random SEQ-token windows of the token stream: [BATCH, SEQ] int64."""
    starts = torch.randint(0, tokens.numel() - SEQ, (BATCH,), generator=generator)
    return torch.stack([tokens[s:s + SEQ] for s in starts.tolist()])


@torch.no_grad()
def evaluate(model, tokens):
    """Mean next-token loss over consecutive SEQ windows of `tokens` (float32 compute)."""
    model.eval()
    losses = []
    for start in range(0, tokens.numel() - SEQ + 1, SEQ):
        window = tokens[start:start + SEQ].unsqueeze(0)  # [1, SEQ]; the model shifts labels
        losses.append(model(input_ids=window, labels=window).loss.item())
    model.train()
    return float(np.mean(losses))


def train(train_tokens, valid_tokens, steps):
    torch.manual_seed(SEED)
    model = LlamaForCausalLM(make_config())
    decay = [p for n, p in model.named_parameters() if p.dim() >= 2]
    no_decay = [p for n, p in model.named_parameters() if p.dim() < 2]
    optimizer = torch.optim.AdamW([{"params": decay, "weight_decay": WEIGHT_DECAY},
                                   {"params": no_decay, "weight_decay": 0.0}],
                                  lr=PEAK_LR, betas=(0.9, 0.95), eps=1e-8)
    generator = torch.Generator().manual_seed(SEED)
    log, smoothed, start = [], None, time.time()
    model.train()
    for step in range(steps):
        for group in optimizer.param_groups:
            group["lr"] = lr_at(step, steps)
        batch = batches(train_tokens, generator)
        # The model shifts labels itself: labels = inputs, loss over positions 1..SEQ-1.
        with torch.autocast("cpu", dtype=torch.bfloat16):
            loss = model(input_ids=batch, labels=batch).loss
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        smoothed = loss.item() if smoothed is None else 0.95 * smoothed + 0.05 * loss.item()
        if step % 50 == 0 or step == steps - 1:
            elapsed = time.time() - start
            print(f"step {step:4d}  loss {loss.item():.3f}  smoothed {smoothed:.3f}  "
                  f"lr {lr_at(step, steps):.2e}  {elapsed:6.0f}s", flush=True)
            log.append(dict(step=step, loss=round(loss.item(), 4), smoothed=round(smoothed, 4)))
    seconds = time.time() - start
    train_eval = evaluate(model, train_tokens[:valid_tokens.numel()])
    valid_eval = evaluate(model, valid_tokens)
    print(f"trained {steps} steps in {seconds:.0f}s: final smoothed loss {smoothed:.3f}, "
          f"eval loss train {train_eval:.3f} / held-out {valid_eval:.3f}")
    return model, dict(steps=steps, seconds=round(seconds), final_smoothed_loss=round(smoothed, 4),
                       train_eval_loss=round(train_eval, 4), valid_eval_loss=round(valid_eval, 4),
                       log=log)


def save_assets(model, tok):
    if os.path.isdir(ASSET_DIR):
        shutil.rmtree(ASSET_DIR)
    model.generation_config = GenerationConfig(
        bos_token_id=0, eos_token_id=0, pad_token_id=0, do_sample=True, temperature=0.8,
        top_k=40, max_new_tokens=64)
    model.save_pretrained(ASSET_DIR, safe_serialization=True)
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, bos_token=EOT, eos_token=EOT,
                                   pad_token=EOT, model_max_length=SEQ)
    fast.save_pretrained(ASSET_DIR)


# ---------------------------------------------------------------------------------------
# Checks from the saved folder: samples, fixtures, README.

def load_saved():
    model = AutoModelForCausalLM.from_pretrained(ASSET_DIR, dtype=torch.float32,
                                                 attn_implementation="eager").eval()
    return model, AutoTokenizer.from_pretrained(ASSET_DIR)


def greedy_config(new_tokens):
    return GenerationConfig(do_sample=False, max_new_tokens=new_tokens, eos_token_id=0,
                            pad_token_id=0)


@torch.no_grad()
def samples(model, hf_tok):
    out = []
    for prompt in PROMPTS:
        ids = hf_tok(prompt, return_tensors="pt").input_ids
        greedy = model.generate(ids, generation_config=greedy_config(48))
        torch.manual_seed(SEED)
        sampled = model.generate(ids, generation_config=GenerationConfig(
            do_sample=True, top_k=40, temperature=0.8, max_new_tokens=48, eos_token_id=0,
            pad_token_id=0))
        out.append(dict(prompt=prompt, greedy=hf_tok.decode(greedy[0]),
                        top_k=hf_tok.decode(sampled[0])))
        print(f"--- {prompt!r}\n[greedy] {out[-1]['greedy']}\n[top-k 40, T 0.8, seed {SEED}] "
              f"{out[-1]['top_k']}\n", flush=True)
    return out


@torch.no_grad()
def write_fixtures(model):
    tok = Tokenizer.from_file(os.path.join(ASSET_DIR, "tokenizer.json"))
    os.makedirs(FIXTURE_DIR, exist_ok=True)
    cases = [dict(text=t, ids=tok.encode(t).ids, decoded=tok.decode(tok.encode(t).ids,
                                                                       skip_special_tokens=False))
             for t in TOKENIZER_CASES]
    prompt_ids = tok.encode(FIXTURE_PROMPT).ids
    ids = torch.tensor([prompt_ids])
    logits = model(input_ids=ids).logits.float()  # [1, seq, vocab]
    np.save(os.path.join(FIXTURE_DIR, "logits.npy"), logits.numpy().astype(np.float32))
    greedy = model.generate(ids, generation_config=greedy_config(GREEDY_FIXTURE_TOKENS))
    assert greedy.shape[1] == len(prompt_ids) + GREEDY_FIXTURE_TOKENS, "stopped at <|endoftext|>"
    # Smallest top-1 minus top-2 logit gap along the greedy path: ties would make the
    # greedy fixture fragile, so it is recorded (and checked to be comfortable).
    path = greedy[:, :-1]
    step_logits = model(input_ids=path).logits[0, len(prompt_ids) - 1:]
    top2 = step_logits.topk(2, dim=-1).values
    min_gap = float((top2[:, 0] - top2[:, 1]).min())
    assert min_gap > 1e-3, f"greedy path has a near tie (gap {min_gap})"
    expected = dict(
        vocab_size=tok.get_vocab_size(), eot_id=tok.token_to_id(EOT), tokenizer_cases=cases,
        prompt=FIXTURE_PROMPT, prompt_ids=prompt_ids,
        greedy_ids=greedy[0, len(prompt_ids):].tolist(), greedy_min_logit_gap=min_gap,
        logits_shape=list(logits.shape),
        made_by=dict(script="tools/reference/train_demo_lm.py", torch=torch.__version__,
                     transformers=transformers.__version__, tokenizers=tokenizers.__version__,
                     forward="LlamaForCausalLM float32 eager attention"))
    with open(os.path.join(FIXTURE_DIR, "expected.json"), "w") as f:
        f.write(compact_json(expected))
    print(f"fixtures: prompt {prompt_ids}, greedy min logit gap {min_gap:.3f}")


def compact_json(value):
    """Indented JSON with lists of numbers kept on one line."""
    text = json.dumps(value, indent=1, ensure_ascii=False)
    text = re.sub(r'(": )\[\s*([-0-9.,\s]+?)\s*\]',
                  lambda m: m.group(1) + "[" + ", ".join(m.group(2).replace(",", " ").split()) + "]",
                  text)
    return text + "\n"


def folder_bytes(folder):
    return sum(os.path.getsize(os.path.join(folder, n)) for n in os.listdir(folder))


def write_readme(stats, sample_list, corpus):
    params = load_saved()[0].num_parameters()  # tied lm_head counted once
    lines = [
        "# demo-lm: a small Llama trained on Jane Austen",
        "",
        "ingot's demo default model: a Hugging Face `LlamaForCausalLM` folder small enough to",
        "commit, trained from scratch on CPU by `tools/reference/train_demo_lm.py`. It writes",
        "period English prose in Austen's manner; it knows nothing else (no facts, no code).",
        "",
        "## Source and licence",
        "",
        f"- Text: Debian package `{DEB_NAME}` {DEB_VERSION} (bookworm, main; sha256",
        f"  `{DEB_SHA256}`), the CRAN",
        "  package janeaustenr 1.0.0 by Julia Silge, MIT licence: the full texts of Jane",
        "  Austen's six novels (Sense and Sensibility, Pride and Prejudice, Mansfield Park,",
        "  Emma, Northanger Abbey, Persuasion; 1811-1818) from Project Gutenberg. The novels",
        "  are in the public domain; the package's MIT licence allows use and redistribution.",
        "  The text itself is not in this repository, only the weights and tokenizer trained",
        "  on it.",
        "- Weights and tokenizer: produced by the ingot project with the committed script",
        "  from that text alone (no other data, no pretrained weights).",
        "",
        "## Model",
        "",
        f"- LlamaForCausalLM, {params / 1e6:.2f} M parameters (float32, tied embeddings):",
        "  hidden 256, 4 layers, 8 query heads / 4 key-value heads (GQA), head_dim 32,",
        "  intermediate 688, SiLU gated MLP, RMSNorm eps 1e-5, RoPE theta 10000, 512 positions.",
        f"- Tokenizer: byte-level BPE (`tokenizers`), vocabulary {VOCAB} including",
        f"  `{EOT}` (id 0, also BOS/EOS/PAD), GPT-2 style ByteLevel pre-tokenizer",
        "  (add_prefix_space false). No BOS is added to prompts.",
        f"- Folder size: {folder_bytes(ASSET_DIR) / 1e6:.1f} MB.",
        "",
        "## Training",
        "",
        f"- Corpus: {corpus['chars']:,} characters, {corpus['tokens']:,} tokens; the last"
        f" {VALID_FRACTION:.0%} of",
        "  the token stream (the end of Persuasion) is held out. Books joined by",
        "  `<|endoftext|>`, wrapped lines",
        "  joined into paragraphs, `_italic_` underscores removed.",
        f"- {stats['steps']} steps of {BATCH} x {SEQ} tokens ({stats['steps'] * BATCH * SEQ:,} tokens,"
        f" about {stats['steps'] * BATCH * SEQ / corpus['tokens']:.1f} epochs), AdamW",
        f"  (betas 0.9/0.95, weight decay {WEIGHT_DECAY}), lr {PEAK_LR} with {WARMUP} warm-up steps",
        f"  and cosine decay to {MIN_LR}, grad clip 1.0, bf16 autocast with float32 weights,",
        f"  seed {SEED}, one CPU thread: {stats['seconds']} s.",
        f"- Final training loss (smoothed): {stats['final_smoothed_loss']:.3f}; eval loss",
        f"  (float32) {stats['train_eval_loss']:.3f} on training text, {stats['valid_eval_loss']:.3f}"
        " held out",
        f"  (nats per token; held-out perplexity {math.exp(stats['valid_eval_loss']):.1f})."
        " `training.json`",
        "  holds the loss log.",
        "",
        "Command (repository root, reference venv):",
        "",
        "```",
        "nice -n 10 \\",
        "    $(tools/reference/setup-venv) tools/reference/train_demo_lm.py",
        "```",
        "",
        "`--fixtures-only` keeps the weights and redoes the samples below and the fixtures",
        "of `tests/models/demo_lm_test.cpp` (tests/fixtures/demo_lm/). Made with torch",
        f"{torch.__version__}, transformers {transformers.__version__}, tokenizers"
        f" {tokenizers.__version__}.",
        "",
        "## Samples (transformers `generate`, 48 new tokens)",
        "",
    ]
    for s in sample_list:
        lines += [f"Prompt: `{s['prompt']}`", "", "greedy:", "", "```", s["greedy"], "```", "",
                  f"top-k 40, temperature 0.8, torch.manual_seed({SEED}):", "", "```", s["top_k"],
                  "```", ""]
    with open(os.path.join(ASSET_DIR, "README.md"), "w") as f:
        f.write("\n".join(lines))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--deb", help=f"a downloaded {DEB_NAME}_{DEB_VERSION}_all.deb")
    parser.add_argument("--steps", type=int, default=STEPS, help="optimizer steps")
    parser.add_argument("--fixtures-only", action="store_true",
                        help="keep the trained folder; redo fixtures, samples and README")
    args = parser.parse_args()
    torch.set_num_threads(1)

    with tempfile.TemporaryDirectory() as workdir:
        books = load_books(fetch_deb(workdir, args.deb))
    text = f"\n\n{EOT}".join(books[name] for name in BOOKS)
    stats_path = os.path.join(ASSET_DIR, "training.json")
    if not args.fixtures_only:
        tok = train_tokenizer([books[name] for name in BOOKS])
        tokens = torch.tensor(tok.encode(text).ids, dtype=torch.long)
        n_valid = int(tokens.numel() * VALID_FRACTION)
        print(f"corpus: {len(text):,} characters, {tokens.numel():,} tokens")
        model, stats = train(tokens[:-n_valid], tokens[-n_valid:], args.steps)
        stats["corpus"] = dict(chars=len(text), tokens=tokens.numel())
        save_assets(model, tok)
        with open(stats_path, "w") as f:
            json.dump(stats, f, indent=1)
            f.write("\n")
    stats = json.load(open(stats_path))
    model, hf_tok = load_saved()
    sample_list = samples(model, hf_tok)
    write_fixtures(model)
    write_readme(stats, sample_list, stats["corpus"])
    size = folder_bytes(ASSET_DIR)
    print(f"{ASSET_DIR}: {size / 1e6:.2f} MB")
    assert size <= MAX_ASSET_BYTES, "the demo model must stay within 25 MB"


if __name__ == "__main__":
    main()
