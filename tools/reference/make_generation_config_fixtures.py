#!/usr/bin/env python3
"""Records what Hugging Face transformers reads as a model folder's generation settings,
for ingot's generation_config.json reader (tests/models/generation_config_test.cpp).

transformers' from_pretrained loads `generation_config.json`; when the folder has none it
builds the settings from `config.json` (GenerationConfig.from_model_config: the top-level
keys that are not null, then what is still unset from the first of the decoder /
generator / text_config sub-configs). This script does the same two calls for:

  tests/fixtures/generation_config/<case>/   small hand-written folders (CASES below),
                                             written by this script
  tests/fixtures/models/<name>/              the tiny checkpoints (config.json only)
  assets/demo-lm/                            the demo model (has a generation_config.json)

and writes tests/fixtures/generation_config/expected.json: per folder (relative to the
repository root) the fields ingot reads, null where transformers leaves them unset.

Run with the reference venv:
  $(tools/reference/setup-venv) tools/reference/make_generation_config_fixtures.py
"""
import json
import os
import shutil
import sys

import transformers
from transformers import GenerationConfig

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
OUT = os.path.join(ROOT, "tests", "fixtures", "generation_config")
FIELDS = ["eos_token_id", "bos_token_id", "pad_token_id", "do_sample", "temperature", "top_k",
          "top_p", "min_p", "repetition_penalty", "max_new_tokens", "max_length"]

# Folder name -> {file name: JSON content}, shaped like real checkpoints.
CASES = {
    # Qwen2.5-Instruct style: eos a list, sampling defaults; config.json's eos is not used.
    "qwen_instruct": {
        "generation_config.json": {
            "bos_token_id": 151643, "do_sample": True, "eos_token_id": [151645, 151643],
            "pad_token_id": 151643, "repetition_penalty": 1.05, "temperature": 0.7,
            "top_k": 20, "top_p": 0.8, "transformers_version": "4.37.0"},
        "config.json": {"architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2",
                        "bos_token_id": 151643, "eos_token_id": 151643},
    },
    # Llama 3.1 Instruct style: three eos ids.
    "llama3_instruct": {
        "generation_config.json": {
            "bos_token_id": 128000, "do_sample": True, "eos_token_id": [128001, 128008, 128009],
            "temperature": 0.6, "top_p": 0.9, "transformers_version": "4.42.3"},
    },
    # A single eos id, length limits, min_p; nulls are unset.
    "limits_min_p": {
        "generation_config.json": {
            "eos_token_id": 2, "max_new_tokens": 256, "max_length": 4096, "min_p": 0.05,
            "pad_token_id": None, "temperature": None, "top_k": 0},
    },
    # No generation_config.json: the old Llama config.json keys (pad_token_id -1).
    "config_only": {
        "config.json": {"architectures": ["LlamaForCausalLM"], "model_type": "llama",
                        "bos_token_id": 1, "eos_token_id": 2, "pad_token_id": -1,
                        "max_length": 2048},
    },
    # Gemma 3 style multimodal config: the ids live in text_config.
    "text_config": {
        "config.json": {"architectures": ["Gemma3ForConditionalGeneration"],
                        "model_type": "gemma3", "eos_token_id": None,
                        "text_config": {"model_type": "gemma3_text", "bos_token_id": 2,
                                        "eos_token_id": [1, 106], "pad_token_id": 0}},
    },
    # The first sub-config found (decoder before text_config) fills what is unset; the
    # top level wins over it.
    "decoder_first": {
        "config.json": {"model_type": "custom", "bos_token_id": 7,
                        "decoder": {"bos_token_id": 8, "eos_token_id": 5, "top_k": 4},
                        "text_config": {"eos_token_id": 6, "top_p": 0.5}},
    },
}


def load(folder):
    """transformers' PreTrainedModel.from_pretrained generation-config step."""
    try:
        return GenerationConfig.from_pretrained(folder)
    except OSError:
        return GenerationConfig.from_pretrained(folder, config_file_name="config.json",
                                                _from_model_config=True)


def main():
    shutil.rmtree(OUT, ignore_errors=True)
    folders = []
    for case, files in CASES.items():
        folder = os.path.join(OUT, case)
        os.makedirs(folder)
        for name, content in files.items():
            with open(os.path.join(folder, name), "w") as f:
                json.dump(content, f, indent=2)
        folders.append(folder)
    models = os.path.join(ROOT, "tests", "fixtures", "models")
    folders += [os.path.join(models, m) for m in sorted(os.listdir(models))]
    folders.append(os.path.join(ROOT, "assets", "demo-lm"))
    expected = {}
    for folder in folders:
        config = load(folder)
        expected[os.path.relpath(folder, ROOT)] = {k: getattr(config, k, None) for k in FIELDS}
    with open(os.path.join(OUT, "expected.json"), "w") as f:
        json.dump({"transformers": transformers.__version__,
                   "script": "tools/reference/make_generation_config_fixtures.py",
                   "folders": expected}, f, indent=2)
    print(f"wrote {len(expected)} folders to {os.path.relpath(OUT, ROOT)}/expected.json")


if __name__ == "__main__":
    sys.exit(main())
