"""ingot.Generator on the demo LM: text or ids in, streaming, the same tokens as the C++
CLI's `ingot generate --json`, and the GIL released while it decodes."""

import json
import threading
import time

import pytest

import ingot
from ingot.exporters import export_for_generation
from conftest import DEMO_LM

PROMPT = "It is a truth universally acknowledged"


@pytest.fixture(scope="module")
def generator(demo_lm):
    return ingot.Generator(export_for_generation(demo_lm, max_cache_len=128))


def test_generate_text_streams_and_matches_the_cli(generator, cli):
    pieces = []
    out = generator.generate(PROMPT, max_new_tokens=12, streamer=lambda tok, text: pieces.append((tok, text)))
    assert [t for t, _ in pieces] == out.generated_ids and len(out.generated_ids) >= 1
    assert "".join(text for _, text in pieces).strip() == out.text.strip()
    ref = json.loads(cli("generate", DEMO_LM, "--prompt", PROMPT, "--max-new-tokens", 12, "--json"))
    assert out.prompt_ids == ref["prompt_ids"]
    assert out.generated_ids == ref["generated_ids"] and out.text == ref["text"]


def test_generate_from_ids_and_the_tokenizer(generator):
    tok = generator.tokenizer
    ids = tok.encode(PROMPT)
    assert tok.decode(ids, skip_special_tokens=True).strip() == PROMPT
    a = generator.generate(ids, max_new_tokens=6, ignore_eos=True)
    b = generator.generate(PROMPT, max_new_tokens=6, ignore_eos=True)
    assert a.generated_ids == b.generated_ids and a.stop_reason == "max_new_tokens"
    assert ingot.Tokenizer.from_pretrained(DEMO_LM).encode(PROMPT) == ids


def test_generate_releases_the_gil(demo_lm):
    # A Python thread wakes every millisecond and notes the time: it can only do so while
    # generate runs if the GIL is released. Without the release, the middle half of the
    # call (all in C++) would have no stamps. The call is long (a cache of the demo LM's
    # 512 positions, filled) so that the middle half spans many wake-ups on a fast machine
    # too (64 tokens took 14 ms on a Zen 5, too few ticks to tell).
    long_generator = ingot.Generator(export_for_generation(demo_lm, max_cache_len=512))
    stamps, done = [], threading.Event()

    def tick():
        while not done.is_set():
            stamps.append(time.perf_counter())
            time.sleep(0.001)

    th = threading.Thread(target=tick)
    th.start()
    try:
        t0 = time.perf_counter()
        long_generator.generate(PROMPT, max_new_tokens=480, ignore_eos=True)
        t1 = time.perf_counter()
    finally:
        done.set()
        th.join()
    q = (t1 - t0) / 4
    middle = [t for t in stamps if t0 + q <= t <= t1 - q]
    # A tick takes a little over 1 ms; ask for a quarter of the ticks the middle half could hold.
    expected = 2 * q / 0.001
    assert len(middle) >= max(5, expected / 4), (
        f"{len(middle)} wake-ups in the middle {2 * q * 1e3:.0f} ms of generate")


def test_streamer_errors_propagate(generator):
    def boom(tok, text):
        raise KeyError("stop here")

    with pytest.raises(KeyError, match="stop here"):
        generator.generate(PROMPT, max_new_tokens=4, streamer=boom)


def test_generator_errors(generator):
    with pytest.raises(ValueError, match="batch 1"):
        generator.generate([[1, 2], [3, 4]])
    with pytest.raises(ValueError, match="no tokens"):
        generator.generate([])
