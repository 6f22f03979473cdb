"""ingot.generate: the CLI's request preparation from Python (one C++ code path,
app/generate.h): text, chat messages rendered with the model's template, and a
vision-language prompt's preprocessed inputs give the tokens `ingot generate --json`
gives for the same request."""

import json

import numpy as np
import pytest

import ingot
from conftest import DEMO_LM, REPO

INSTRUCT = REPO / "tests" / "fixtures" / "models" / "instruct_chatml"
LLAVA = REPO / "tests" / "fixtures" / "vlm" / "llava"


def test_text_prompt_streams_and_matches_the_cli(cli):
    pieces = []
    out = ingot.generate(DEMO_LM, "It is a truth", max_new_tokens=8, streamer=pieces.append)
    ref = json.loads(cli("generate", DEMO_LM, "--prompt", "It is a truth", "--max-new-tokens", 8,
                         "--json"))
    assert out.generated_ids == ref["generated_ids"] and out.text == ref["text"]
    assert "".join(pieces) == out.text
    assert out.compute_dtype == "float32"


def test_chat_renders_the_template_like_the_cli(cli):
    out = ingot.generate(INSTRUCT, chat="What is the capital of France?", system="Be brief.",
                         max_new_tokens=16)
    ref = json.loads(cli("generate", INSTRUCT, "--chat", "What is the capital of France?",
                         "--system", "Be brief.", "--max-new-tokens", 16, "--json"))
    assert out.prompt_ids == ref["prompt_ids"] and out.generated_ids == ref["generated_ids"]
    messages = [{"role": "system", "content": "Be brief."},
                {"role": "user", "content": "What is the capital of France?"}]
    assert ingot.generate(INSTRUCT, messages=messages, max_new_tokens=16).generated_ids == \
        ref["generated_ids"]


def test_vision_language_inputs_as_arrays(cli):
    ids = np.load(LLAVA / "input_ids.npy")
    pixels = np.load(LLAVA / "pixel_values.npy")
    out = ingot.generate(LLAVA, inputs={"input_ids": ids, "pixel_values": pixels},
                         max_new_tokens=20)
    reference = json.loads((LLAVA / "reference.json").read_text())["greedy"]
    assert out.generated_ids == reference


def test_bad_requests_name_what_is_wrong():
    with pytest.raises(ValueError, match="give --prompt"):
        ingot.generate(DEMO_LM)
    with pytest.raises(ValueError, match="no input named 'pixel_values'"):
        ingot.generate(DEMO_LM, inputs={"input_ids": np.array([[1, 2]]),
                                        "pixel_values": np.zeros((1, 3, 4, 4), np.float32)})
