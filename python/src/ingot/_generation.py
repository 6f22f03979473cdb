"""ingot.Generator: the native decode loop over exported generation components."""

from __future__ import annotations

import os
from typing import Callable, Optional, Sequence, Union

import numpy as np

from . import _ingot


class GenerationOutput(dict):
    """generate()'s result: prompt_ids, generated_ids, text (None without a tokenizer),
    stop_reason, prompt_tokens, new_tokens, time_to_first_token_s, prefill_tokens_per_s,
    decode_tokens_per_s (the keys of `ingot generate --json`); also as attributes."""

    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None


class Generator:
    """Generator(dir): a generation directory written by `ingot export --task generation`
    (or components.save(dir)); Generator(components): components exported in memory by
    export_for_generation. The KV cache is allocated once; generate() prefills in one call
    and decodes with the GIL released."""

    def __init__(self, source, max_cache_len: Optional[int] = None):
        from .exporters import GenerationComponents

        if isinstance(source, GenerationComponents):
            self._gen = _ingot._Generator.from_components(source._c, max_cache_len)
        else:
            self._gen = _ingot._Generator.load(os.fspath(source), max_cache_len)

    @property
    def tokenizer(self):
        return self._gen.tokenizer

    @property
    def max_cache_len(self) -> int:
        return self._gen.max_cache_len

    def generate(self, prompt: Union[str, Sequence[int], np.ndarray], *,
                 max_new_tokens: Optional[int] = None,
                 streamer: Optional[Callable[[int, str], None]] = None,
                 **options) -> GenerationOutput:
        """Generates after `prompt` (text, encoded with the model's tokenizer, or token ids;
        batch 1). Defaults come from generation_config.json; options: do_sample,
        temperature, top_k, top_p, min_p, repetition_penalty, seed, stop_tokens,
        ignore_eos. streamer(token_id, text) is called as each token is chosen (text: what
        the token completes, "" while a character is split over tokens)."""
        if isinstance(prompt, str):
            if self.tokenizer is None:
                raise ValueError("[ingot.Generator] a text prompt needs tokenizer.json in the "
                                 "directory; pass token ids instead")
            ids = self.tokenizer.encode(prompt, True)
        else:
            arr = np.asarray(prompt)
            if arr.ndim == 2 and arr.shape[0] == 1:
                arr = arr[0]
            if arr.ndim != 1:
                raise ValueError(f"[ingot.Generator] token ids must be [tokens] or [1, tokens] "
                                 f"(batch 1), got shape {list(arr.shape)}")
            ids = [int(i) for i in arr]
        return GenerationOutput(self._gen.generate(ids, max_new_tokens=max_new_tokens,
                                                   streamer=streamer, **options))


def generate(source, prompt: Optional[str] = None, *, chat: Optional[str] = None,
             system: Optional[str] = None, messages: Optional[Sequence[dict]] = None,
             images: Optional[Sequence[Union[str, os.PathLike]]] = None,
             audio: Optional[Union[str, os.PathLike]] = None,
             inputs: Optional[dict] = None,
             streamer: Optional[Callable[[str], None]] = None,
             max_new_tokens: Optional[int] = None, max_cache_len: Optional[int] = None,
             temperature: Optional[float] = None, top_k: Optional[int] = None,
             top_p: Optional[float] = None, min_p: Optional[float] = None,
             repetition_penalty: Optional[float] = None, seed: Optional[int] = None,
             greedy: bool = False, ignore_eos: bool = False,
             dtype: str = "auto") -> GenerationOutput:
    """`ingot generate` from Python: the same request preparation as the CLI (one C++ code
    path). `source` is a model folder (exported in memory) or a generation directory; the
    prompt is text, `chat` [+ `system`] or `messages` (rendered with the model's chat
    template), `images` (files, beside a text or chat prompt of a vision-language model),
    `audio` (a WAV file for Whisper) or `inputs` ({name: array or .npy path}). Options
    override the model's generation_config.json defaults. streamer(text) receives the text
    as each token completes it. Returns the keys of `ingot generate --json`."""
    import json
    import tempfile

    with tempfile.TemporaryDirectory(prefix="ingot_inputs_") as tmp:
        pairs = []
        for name, value in (inputs or {}).items():
            if isinstance(value, (str, os.PathLike)):
                pairs.append((name, os.fspath(value)))
            else:
                path = os.path.join(tmp, f"{name}.npy")
                np.save(path, np.asarray(value))
                pairs.append((name, path))
        out = _ingot._generate(
            os.fspath(source), prompt or "", chat or "", system or "",
            json.dumps(list(messages)) if messages is not None else "",
            [os.fspath(i) for i in (images or [])], os.fspath(audio) if audio else "", pairs,
            max_new_tokens, max_cache_len, temperature, top_k, top_p, min_p,
            repetition_penalty, seed, greedy, ignore_eos, dtype, streamer)
    return GenerationOutput(out)
