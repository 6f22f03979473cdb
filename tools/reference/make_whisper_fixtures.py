#!/usr/bin/env python3
"""Whisper fixtures (issue 18): WAV files, transformers' WhisperFeatureExtractor outputs and
a tiny random WhisperForConditionalGeneration with its reference outputs.

Written to tests/fixtures/whisper/:

  speech16k.wav     0.6 s mono 16-bit PCM at 16 kHz (tones, a chirp, noise bursts)
  stereo8k.wav      0.5 s stereo float32 at 8 kHz (left / right differ): downmix + 2x upsampling
  mono22k.wav       0.4 s mono 16-bit at 22.05 kHz: resampling by 320/441
  waveform_*.npy    the waveform stereo8k / mono22k give at 16 kHz (float32 of float64
                    values): samples / 32768 (16-bit), channels averaged, scipy.signal.resample_poly(x, up, down) (its default
                    Kaiser(5.0) window FIR) in float64 - the reference of ingot's resampler
  mel_filters_80.npy, mel_filters_16.npy   the slaney filter banks [201, mels] (as float32)
  features80_head.npy   WhisperFeatureExtractor() (80 mels, 30 s) on speech16k: frames 0..79
  features80_tail.npy   frame 80, which every later frame (all silence) equals
  features80_22k_head.npy / _tail.npy   the same for mono22k's 16 kHz waveform
  features_trunc.npy    80 mels, max_length=4800 samples (0.3 s: truncated), all 30 frames

  whisper/          the tiny model folder: config.json, model.safetensors,
                    generation_config.json (language <|de|>, task transcribe, suppress
                    lists), preprocessor_config.json (16 mels, chunk_length 1 s: 100
                    frames), tokenizer.json, and
    input_features.npy      the feature extractor on speech16k.wav  [1, 16, 100]
    input_features_8k.npy   on stereo8k.wav (downmixed, resampled)  [1, 16, 100]
    encoder_hidden.npy      model.model.encoder(input_features).last_hidden_state
    decoder_input_ids.npy   the decoder prompt generate() uses
    logits.npy              model(input_features, decoder_input_ids).logits
    greedy.npy              generate(input_features, max_new_tokens=20): the new tokens
    greedy_8k.npy           the same from input_features_8k
    prompts.json            _retrieve_init_tokens for generation-config variants
    reference.json          versions, the greedy top-2 margin

Run with the reference venv (torch, transformers, scipy):
  $(tools/reference/setup-venv) tools/reference/make_whisper_fixtures.py
"""
import copy
import json
import math
import os

import numpy as np
import scipy.io.wavfile
import scipy.signal
import torch
import transformers as T
from tokenizers import Tokenizer, models, pre_tokenizers

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
OUT = os.path.join(ROOT, "tests", "fixtures", "whisper")
SPECIAL = ["<|endoftext|>", "<|startoftranscript|>", "<|en|>", "<|de|>", "<|fr|>",
           "<|translate|>", "<|transcribe|>", "<|nocaptions|>", "<|notimestamps|>"]
WORDS = ("the a cat dog sat on mat hello world is it red blue green . , and of to in "
         "one two three four five six seven eight nine ten yes no good bad sun moon "
         "ja nein hallo welt").split()
NEW_TOKENS = 20


def save(folder, name, a):
    a = a.detach().cpu().numpy() if torch.is_tensor(a) else np.asarray(a)
    np.save(os.path.join(folder, name + ".npy"), a)


def test_signal(rate, seconds, seed):
    """Speech-like: two tones, a chirp and noise bursts, peak about 0.6."""
    rng = np.random.default_rng(seed)
    t = np.arange(int(rate * seconds)) / rate
    x = 0.25 * np.sin(2 * np.pi * 220 * t) + 0.12 * np.sin(2 * np.pi * 1330 * t + 0.3)
    x += 0.15 * np.sin(2 * np.pi * (300 + 2500 * t) * t)
    burst = (np.sin(2 * np.pi * 3 * t) > 0.6).astype(np.float64)
    x += 0.08 * burst * rng.standard_normal(t.size)
    return x * np.hanning(t.size) ** 0.2


def write_wavs():
    wav = {}
    x = test_signal(16000, 0.6, 1)
    pcm = np.round(x * 32767).astype(np.int16)
    scipy.io.wavfile.write(os.path.join(OUT, "speech16k.wav"), 16000, pcm)
    wav["speech16k"] = pcm.astype(np.float64) / 32768.0

    left, right = test_signal(8000, 0.5, 2), 0.5 * test_signal(8000, 0.5, 3)
    st = np.stack([left, right], 1).astype(np.float32)
    scipy.io.wavfile.write(os.path.join(OUT, "stereo8k.wav"), 8000, st)
    mono = st.astype(np.float64).mean(1)
    wav["stereo8k"] = scipy.signal.resample_poly(mono, 2, 1)

    x = test_signal(22050, 0.4, 4)
    pcm = np.round(x * 32767).astype(np.int16)
    scipy.io.wavfile.write(os.path.join(OUT, "mono22k.wav"), 22050, pcm)
    wav["mono22k"] = scipy.signal.resample_poly(pcm.astype(np.float64) / 32768.0, 320, 441)
    for k in ("stereo8k", "mono22k"):  # speech16k's is its samples / 32768
        save(OUT, "waveform_" + k, wav[k].astype(np.float32))
    return wav


def features_head_tail(fe, wave, name, head=80):
    f = fe(wave.astype(np.float32), sampling_rate=16000, return_tensors="np")["input_features"]
    assert f.shape == (1, fe.feature_size, fe.nb_max_frames)
    # Every frame past the audio (silence) is the same column: store one.
    assert np.array_equal(f[..., head:], np.broadcast_to(f[..., head:head + 1], f[..., head:].shape))
    save(OUT, name + "_head", f[..., :head])
    save(OUT, name + "_tail", f[..., head])
    return f


def make_tokenizer(folder):
    vocab = {t: i for i, t in enumerate(WORDS)}
    tok = Tokenizer(models.WordLevel(vocab | {"<|unk|>": len(vocab)}, unk_token="<|unk|>"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tok.add_special_tokens(SPECIAL)
    fast = T.PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<|endoftext|>",
                                     unk_token="<|unk|>", pad_token="<|endoftext|>")
    fast.save_pretrained(folder)
    return {t: fast.convert_tokens_to_ids(t) for t in SPECIAL}, len(fast)


def make_model(wav):
    folder = os.path.join(OUT, "whisper")
    os.makedirs(folder, exist_ok=True)
    ids, vocab_size = make_tokenizer(folder)
    fe = T.WhisperFeatureExtractor(feature_size=16, sampling_rate=16000, hop_length=160,
                                   chunk_length=1, n_fft=400)
    fe.save_pretrained(folder)
    save(OUT, "mel_filters_16", fe.mel_filters.astype(np.float32))
    torch.manual_seed(int(os.environ.get("SEED", "2")))
    config = T.WhisperConfig(
        vocab_size=vocab_size, num_mel_bins=16, d_model=32, encoder_layers=2,
        encoder_attention_heads=4, decoder_layers=2, decoder_attention_heads=4,
        encoder_ffn_dim=64, decoder_ffn_dim=64, max_source_positions=50,
        max_target_positions=64, activation_function="gelu", scale_embedding=False,
        pad_token_id=ids["<|endoftext|>"], bos_token_id=ids["<|endoftext|>"],
        eos_token_id=ids["<|endoftext|>"], decoder_start_token_id=ids["<|startoftranscript|>"],
        tie_word_embeddings=True, init_std=float(os.environ.get("INIT_STD", "0.5")))
    config._attn_implementation = "eager"
    model = T.WhisperForConditionalGeneration(config).eval()
    with torch.no_grad():  # non-trivial norms and biases
        for n, p in model.named_parameters():
            if p.dim() == 1:
                p.add_(torch.randn_like(p) * 0.1)
    model.save_pretrained(folder)
    g = model.generation_config
    g._from_model_config = False  # else from_pretrained drops the Whisper-specific keys
    g.lang_to_id = {"<|en|>": ids["<|en|>"], "<|de|>": ids["<|de|>"], "<|fr|>": ids["<|fr|>"]}
    g.task_to_id = {"translate": ids["<|translate|>"], "transcribe": ids["<|transcribe|>"]}
    g.no_timestamps_token_id = ids["<|notimestamps|>"]
    g.is_multilingual = True
    g.language = "<|de|>"
    g.task = "transcribe"
    g.decoder_start_token_id = ids["<|startoftranscript|>"]
    g.eos_token_id = ids["<|endoftext|>"]
    g.pad_token_id = ids["<|endoftext|>"]
    g.suppress_tokens = [ids["<|nocaptions|>"], 3, 11]
    g.begin_suppress_tokens = [ids["<|endoftext|>"], 0]
    g.max_length = 64
    g.return_timestamps = False
    g.save_pretrained(folder)
    model.generation_config = T.GenerationConfig.from_pretrained(folder)

    feats = {}
    for name, key in (("input_features", "speech16k"), ("input_features_8k", "stereo8k")):
        f = fe(wav[key].astype(np.float32), sampling_rate=16000, return_tensors="pt")
        feats[name] = f["input_features"]
        save(folder, name, f["input_features"])
    x = feats["input_features"]
    with torch.no_grad():
        enc = model.model.encoder(x).last_hidden_state
        save(folder, "encoder_hidden", enc)
        seq = model.generate(x, max_new_tokens=NEW_TOKENS, do_sample=False)
        def init_tokens(gc):  # generate() sets return_timestamps before this call
            if getattr(gc, "return_timestamps", None) is None:
                gc.return_timestamps = False
            return model._retrieve_init_tokens(x, 1, gc, model.config, 100, {})

        init = init_tokens(copy.deepcopy(model.generation_config))
        prompt = torch.as_tensor(init[0]).reshape(1, -1)
        n = prompt.shape[1]
        # Short-form generate returns the new tokens only (5.x), without the prompt.
        new = seq[:, n:] if seq[0, :n].tolist() == prompt[0].tolist() else seq
        assert new.shape[1] >= 16, seq
        save(folder, "decoder_input_ids", prompt)
        save(folder, "greedy", new)
        full = torch.cat([prompt, new[:, :-1]], 1)
        logits = model(input_features=x, decoder_input_ids=full).logits
        save(folder, "logits", logits)
        # Conditioning: float32 vs float64 logits. Larger weights (init_std 1) make the
        # attention so peaked that float32 rounding alone moves logits by 1e-3; this
        # fixture keeps it near 1e-5 so a 1e-4 comparison is meaningful.
        logits64 = copy.deepcopy(model).double()(input_features=x.double(), decoder_input_ids=full).logits
        f32_vs_f64 = float((logits.double() - logits64).abs().max())
        assert f32_vs_f64 < 5e-5, f32_vs_f64
        gen8 = model.generate(feats["input_features_8k"], max_new_tokens=NEW_TOKENS, do_sample=False)
        gen8 = gen8[:, n:] if gen8[0, :n].tolist() == prompt[0].tolist() else gen8
        save(folder, "greedy_8k", gen8)
        # The greedy choices' top-2 margins (the suppressed tokens masked as generate does).
        scores = logits[0, n - 1:].clone()
        scores[:, g.suppress_tokens] = -float("inf")
        scores[0, g.begin_suppress_tokens] = -float("inf")
        assert scores.argmax(-1).tolist() == new[0].tolist()
        top = torch.topk(scores, 2, dim=-1).values
        margins = (top[:, 0] - top[:, 1]).tolist()

        # Decoder prompts for generation-config variants (language detection included).
        cases = []
        variants = [
            {"language": "<|de|>", "task": "transcribe"},
            {"language": "en", "task": "translate"},
            {"language": "french", "task": None},
            {"language": None, "task": "transcribe"},  # detected from the audio
            {"language": None, "task": None},
            {"language": "<|en|>", "task": "transcribe", "return_timestamps": True},
        ]
        for v in variants:
            gc = copy.deepcopy(model.generation_config)
            gc.language, gc.task = v["language"], v["task"]
            gc.return_timestamps = v.get("return_timestamps", False)
            toks = init_tokens(gc)
            cases.append({"language": v["language"], "task": v["task"],
                          "return_timestamps": gc.return_timestamps,
                          "prompt": [int(t) for t in toks[0]]})
        # forced_decoder_ids without language / task (older checkpoints)
        gc = copy.deepcopy(model.generation_config)
        gc.language = gc.task = None
        gc.forced_decoder_ids = [[1, ids["<|en|>"]], [2, ids["<|transcribe|>"]]]
        toks = init_tokens(gc)
        cases.append({"language": None, "task": None, "return_timestamps": False,
                      "forced_decoder_ids": gc.forced_decoder_ids,
                      "prompt": [int(t) for t in toks[0]]})
        lang_logits = model(input_features=x,
                            decoder_input_ids=torch.tensor([[g.decoder_start_token_id]])).logits
    with open(os.path.join(folder, "prompts.json"), "w") as f:
        json.dump(cases, f, indent=1)
    ref = {"torch": torch.__version__, "transformers": T.__version__,
           "scipy": scipy.__version__, "script": "tools/reference/make_whisper_fixtures.py",
           "dtype": "float32", "attn_implementation": "eager",
           "decoder_prompt": prompt[0].tolist(), "greedy": new[0].tolist(),
           "greedy_8k": gen8[0].tolist(), "max_new_tokens": NEW_TOKENS,
           "min_top2_margin": min(margins), "logits_float32_vs_float64": f32_vs_f64,
           "detect_language_logits": lang_logits[0, -1, list(g.lang_to_id.values())].tolist()}
    with open(os.path.join(folder, "reference.json"), "w") as f:
        json.dump(ref, f, indent=2)
    print("whisper:", ref)
    print("prompts:", cases)


def main():
    os.makedirs(OUT, exist_ok=True)
    wav = write_wavs()
    fe = T.WhisperFeatureExtractor()  # 80 mels, 30 s: the real models' front end
    save(OUT, "mel_filters_80", fe.mel_filters.astype(np.float32))
    features_head_tail(fe, wav["speech16k"], "features80")
    features_head_tail(fe, wav["mono22k"], "features80_22k")
    f = fe(wav["speech16k"].astype(np.float32), sampling_rate=16000, max_length=4800,
           return_tensors="np")["input_features"]
    assert f.shape == (1, 80, 30), f.shape
    save(OUT, "features_trunc", f)
    make_model(wav)


if __name__ == "__main__":
    main()
