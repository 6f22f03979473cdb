"""NNCF's int4 weight compression (AWQ + scale estimation, and data-free) of ingot's OpenVINO
IR of SmolLM2, judged by held-out perplexity in OpenVINO's CPU runtime: issue 39's NNCF row.

1. `ingot export MODEL --format openvino --dynamic` (f32, one forward program: input_ids,
   attention_mask -> logits for every position).
2. `nncf.compress_weights` on that IR per config: INT4_SYM / INT4_ASYM, group_size G,
   ratio 1.0, with awq=True + scale_estimation=True and an `nncf.Dataset` from the model's
   calibration.txt (tokenised whole with tokenizer.json, no special tokens, cut into
   consecutive samples of --seq-len tokens, the first --num-samples of them: the same set
   ingot's calibrated quantisers and llama.cpp's imatrix see), or data-free. NNCF's
   defaults elsewhere: the embedding and the (tied) lm_head are its "first/last layers",
   kept in the backup precision INT8_ASYM.
3. Perplexity of each IR over eval_tokens.npy: windows of --ppl-chunk tokens, each run
   from scratch, every position but a window's first scored (bench/side_by_side/driver.cpp's
   `perplexity`). CPU plugin, --threads threads, f32 inference precision and no dynamic
   activation quantisation, so only the weights differ from the f32 IR.

Usage (venv from tools/quant/setup-nncf-venv):
  nice -n 19 ~/.cache/ingot/nncf-venv/bin/python tools/quant/nncf_perplexity.py \
      --model ~/.cache/ingot/checkpoints/SmolLM2-135M-Instruct --ingot build/release/ingot
"""
import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np


def export_f32(ingot: str, model: str, out: str) -> str:
    xml = os.path.join(out, "openvino_model.xml")
    subprocess.run([ingot, "export", model, "-o", out, "--format", "openvino", "--dynamic"],
                   check=True)
    if not os.path.isfile(xml):
        sys.exit(f"[nncf_perplexity] ingot export wrote no {xml}")
    return xml


def calibration_samples(model: str, num_samples: int, seq_len: int) -> list:
    from tokenizers import Tokenizer

    text_path = os.path.join(model, "calibration.txt")
    with open(text_path, encoding="utf-8") as f:
        text = f.read()
    ids = Tokenizer.from_file(os.path.join(model, "tokenizer.json")).encode(
        text, add_special_tokens=False).ids
    samples = [ids[at:at + seq_len] for at in range(0, len(ids), seq_len)]
    samples = [s for s in samples if len(s) == seq_len][:num_samples]
    if len(samples) < num_samples:
        print(f"[nncf_perplexity] warning: {text_path} gave {len(samples)} samples of "
              f"{seq_len} tokens, {num_samples} asked for", file=sys.stderr)
    # The IR's inputs: input_ids and attention_mask, i64 [batch, seq].
    return [{"input_ids": np.asarray([s], dtype=np.int64),
             "attention_mask": np.ones((1, len(s)), dtype=np.int64)} for s in samples]


def compress(f32_xml: str, out_xml: str, mode: str, group: int, method: str, samples,
             stats: str) -> float:
    """`method`: awq_se (awq + scale_estimation), gptq_se (gptq + scale_estimation) or
    data_free. `stats`: NNCF's statistics cache (collected by the first data-aware config, loaded
    by the rest). A weight whose input dim is not a multiple of `group` (SmolLM2's 576 for
    128) gets the largest power-of-two group that divides it (NNCF's ADJUST fallback)."""
    import nncf
    from nncf.quantization.advanced_parameters import GroupSizeFallbackMode
    import openvino as ov

    model = ov.Core().read_model(f32_xml)
    kwargs = {}
    advanced = dict(group_size_fallback_mode=GroupSizeFallbackMode.ADJUST)
    if method != "data_free":
        kwargs = dict(dataset=nncf.Dataset(samples), subset_size=len(samples),
                      scale_estimation=True, **{method.split("_")[0]: True})
        advanced["statistics_path"] = stats
    kwargs["advanced_parameters"] = nncf.AdvancedCompressionParameters(**advanced)
    t0 = time.time()
    model = nncf.compress_weights(model, mode=getattr(nncf.CompressWeightsMode, mode),
                                  ratio=1.0, group_size=group, **kwargs)
    seconds = time.time() - t0
    ov.save_model(model, out_xml, compress_to_fp16=False)
    return seconds


def perplexity(xml: str, ids: np.ndarray, chunk: int, threads: int) -> tuple:
    import openvino as ov

    core = ov.Core()
    compiled = core.compile_model(core.read_model(xml), "CPU", {
        "INFERENCE_NUM_THREADS": threads,
        "INFERENCE_PRECISION_HINT": "f32",
        "DYNAMIC_QUANTIZATION_GROUP_SIZE": 0,
    })
    request = compiled.create_infer_request()
    nll, scored = 0.0, 0
    for begin in range(0, len(ids) - chunk + 1, chunk):
        window = ids[begin:begin + chunk].astype(np.int64)[None, :]
        request.infer({"input_ids": window, "attention_mask": np.ones_like(window)})
        logits = request.get_tensor("logits").data[0, :-1].astype(np.float64)  # [chunk-1, vocab]
        top = logits.max(axis=1)
        lse = np.log(np.exp(logits - top[:, None]).sum(axis=1)) + top
        nll += float((lse - logits[np.arange(chunk - 1), window[0, 1:]]).sum())
        scored += chunk - 1
    if scored == 0:
        sys.exit(f"[nncf_perplexity] fewer than one window of {chunk} eval tokens")
    return math.exp(nll / scored), scored


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", required=True, help="Hugging Face folder with calibration.txt, "
                    "eval_tokens.npy, tokenizer.json (tools/reference/fetch_smollm2.py)")
    ap.add_argument("--ingot", default="build/release/ingot")
    ap.add_argument("--work", default=os.path.join(tempfile.gettempdir(), "ingot_nncf"))
    ap.add_argument("--modes", default="INT4_SYM,INT4_ASYM")
    ap.add_argument("--group-sizes", default="32")
    ap.add_argument("--methods", default="awq_se,data_free",
                    help="awq_se (awq + scale_estimation), gptq_se (gptq + scale_estimation), "
                    "data_free (round to nearest, no dataset)")
    ap.add_argument("--num-samples", type=int, default=128)
    ap.add_argument("--seq-len", type=int, default=256)
    ap.add_argument("--ppl-chunk", type=int, default=512)
    ap.add_argument("--threads", type=int, default=2)
    a = ap.parse_args()
    if a.methods and set(a.methods.split(",")) - {"awq_se", "gptq_se", "data_free"}:
        ap.error(f"--methods: unknown method in {a.methods!r}")
    import nncf
    import openvino as ov

    model = os.path.expanduser(a.model)
    os.makedirs(a.work, exist_ok=True)
    f32_xml = export_f32(a.ingot, model, os.path.join(a.work, "f32"))
    ids = np.load(os.path.join(model, "eval_tokens.npy"))
    samples = calibration_samples(model, a.num_samples, a.seq_len)
    print(f"nncf {nncf.__version__}, openvino {ov.__version__}; calibration "
          f"{len(samples)} x {a.seq_len} tokens; eval {len(ids)} tokens, windows of "
          f"{a.ppl_chunk}", flush=True)

    configs = [(f"{mode.lower()}_g{group}_{method}", mode, int(group), method)
               for group in a.group_sizes.split(",") for mode in a.modes.split(",")
               for method in a.methods.split(",")]

    stats = os.path.join(a.work, "statistics")
    shutil.rmtree(stats, ignore_errors=True)  # collected afresh for this export and dataset
    rows = []
    def measure(name, xml, seconds=None):
        ppl, scored = perplexity(xml, ids, a.ppl_chunk, a.threads)
        mb = os.path.getsize(xml[:-4] + ".bin") / 1e6
        rows.append({"config": name, "perplexity": ppl, "tokens": scored, "bin_MB": mb,
                     "compress_s": seconds})
        print(json.dumps(rows[-1]), flush=True)

    measure("f32", f32_xml)
    for name, mode, group, method in configs:
        out = os.path.join(a.work, name)
        os.makedirs(out, exist_ok=True)
        xml = os.path.join(out, "openvino_model.xml")
        seconds = compress(f32_xml, xml, mode, group, method, samples, stats)
        measure(name, xml, seconds)

    base = rows[0]["perplexity"]
    print(f"\n{'config':28} {'perplexity':>10} {'ratio':>7} {'.bin MB':>8} {'compress s':>10}")
    for r in rows:
        s = "" if r["compress_s"] is None else f"{r['compress_s']:.0f}"
        print(f"{r['config']:28} {r['perplexity']:10.3f} {r['perplexity'] / base:7.4f} "
              f"{r['bin_MB']:8.1f} {s:>10}")


if __name__ == "__main__":
    main()
