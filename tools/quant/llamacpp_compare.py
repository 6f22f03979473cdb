"""ingot's quantised decode / prefill next to llama.cpp's Q8_0 / Q4_0 (and both float) on the
Qwen3-0.6B shape, interleaved rounds, best of each, one JSON line + a ratio table.

ingot: build/release/bench/ingot_bench BM_Quantized{Decode,Prefill}Qwen3_0_6B/<variant>,
one process per variant (so peak RSS is that variant's). llama.cpp: llama-cpp-python from
the speed helper's venv (tools/llamacpp/setup-venv on branch speed2), driven through that
branch's harness (tools/bench/side_by_side.py: LlamaCpp, ensure_gguf), which this script
imports read-only. Both run the bench's synthetic checkpoint (bf16, zero weights: the
bytes streamed per token are the real model's), batch 1, `--threads` threads, decode after
an 8-token prompt, a 64-token prefill.

Usage (llama.cpp venv python):
  ~/.cache/ingot/llamacpp-venv/bin/python tools/quant/llamacpp_compare.py \
      --bench build/release/bench/ingot_bench --harness /work/wt-speed2/tools/bench
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

VARIANTS = ["f32", "bf16", "int8", "int4_g32"]
GGUF = {"BF16": "bf16", "Q8_0": "int8", "Q4_0": "int4_g32"}  # llama.cpp type -> ingot variant
CHECKPOINT = os.path.join(tempfile.gettempdir(), "ingot_qwen3_0.6b_shaped")


def ingot_run(bench: str, variant: str, threads: int) -> dict:
    env = dict(os.environ, INGOT_NUM_THREADS=str(threads))
    out = subprocess.run(
        [bench, f"--benchmark_filter=BM_Quantized(Decode|Prefill)Qwen3_0_6B/{variant}/",
         "--benchmark_format=json"], capture_output=True, text=True, env=env, check=True)
    res = {}
    for b in json.loads(out.stdout)["benchmarks"]:
        kind = "decode" if "Decode" in b["name"] else "prefill"
        res[kind] = b["tokens_per_s"]
        res["artifact_MB"] = b["artifact_MB"]
        res["peak_rss_MB"] = max(res.get("peak_rss_MB", 0), b["peak_rss_MB"])
    return res


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bench", required=True)
    ap.add_argument("--harness", required=True, help="folder holding side_by_side.py")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--work", default=os.path.join(tempfile.gettempdir(), "ingot_quant_llamacpp"))
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    sys.path.insert(0, a.harness)
    import side_by_side as sbs  # the speed helper's harness (read-only)

    best = {}
    def keep(key, res):
        cur = best.setdefault(key, {})
        for k, v in res.items():
            cur[k] = max(cur.get(k, 0), v) if k in ("decode", "prefill") else v

    # The first ingot run writes the checkpoint the GGUF files are converted from.
    keep(("ingot", "f32"), ingot_run(a.bench, "f32", a.threads))
    ggufs = {t: sbs.ensure_gguf(CHECKPOINT, a.work, t) for t in GGUF}
    for r in range(a.rounds):
        for variant in VARIANTS:
            if not (r == 0 and variant == "f32"):
                keep(("ingot", variant), ingot_run(a.bench, variant, a.threads))
        for t, path in ggufs.items():
            m = sbs.LlamaCpp(path, a.threads, 512)
            keep(("llama.cpp", t), {"decode": max(m.decode(8, 32) for _ in range(2)),
                                    "prefill": max(m.prefill(64) for _ in range(2)),
                                    "artifact_MB": os.path.getsize(path) / 1e6})
            m.close()
    rows = {f"{who}:{name}": v for (who, name), v in best.items()}
    ratios = {}
    for t, variant in GGUF.items():
        i, l = best[("ingot", variant)], best[("llama.cpp", t)]
        ratios[f"{variant}/{t}"] = {k: round(i[k] / l[k], 3) for k in ("decode", "prefill")}
    print(f"{'':18} {'decode tok/s':>13} {'prefill tok/s':>14} {'artifact MB':>12} {'peak RSS MB':>12}")
    for name, v in rows.items():
        print(f"{name:18} {v['decode']:13.2f} {v['prefill']:14.1f} {v['artifact_MB']:12.0f} "
              f"{v.get('peak_rss_MB', float('nan')):12.0f}")
    for k, v in ratios.items():
        print(f"ratio {k:16} decode {v['decode']:.3f}x  prefill {v['prefill']:.3f}x")
    print(json.dumps({"threads": a.threads, "rounds": a.rounds, "results": rows, "ratios": ratios}))


if __name__ == "__main__":
    main()
