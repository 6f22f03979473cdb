#!/usr/bin/env python3
"""torch.export archives (.pt2) for ingot's .pt2 reader, with torch's inputs and outputs.

For each case, tests/fixtures/pt2/<name>/ holds:
  * model.pt2       torch.export.export(...) saved by torch.export.save (training dialect:
                    linear, scaled_dot_product_attention, in-place buffer updates as ops);
  * model_aten.pt2  the same program after run_decompositions() (ATen dialect, buffer
                    updates as BUFFER_MUTATION outputs);
  * case<k>_<input>.npy, case<k>_out<j>.npy, case<k>_buffer_<name>.npy: inputs at two or
    more shapes, the flattened user outputs of ep.module() on them, and every mutated
    buffer's value after that one call (a fresh module per case);
  * manifest.json   {"inputs": [names], "cases": [{"inputs": {name: file}, "outputs":
                    [files], "buffers": {name: file}}], "out_keys": [...]}.

Cases: tiny decoder checkpoints of tests/fixtures/models (the sequence dim dynamic,
use_cache=False as a constant input, a CausalLMOutputWithPast with a `logits` key) and
the seed-001 example modules (buffer mutation, cond, data-dependent sizes with
torch._check, a static int input and dict output, map / while_loop / item(), a SymInt
input, inputs sized by expressions of another input's symbol). Every output of ep.module() is also
compared with the eager module here (1e-5), so a fixture never records a wrong export.

Run with the reference venv:
  $(tools/reference/setup-venv) tools/reference/make_pt2_fixtures.py [names...] [--out DIR]
With --all-architectures every decoder fixture is exported (to --out, not committed:
that is how docs/pt2.md's op list is measured, see --ops).
"""
import argparse
import collections
import copy
import json
import os
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
MODELS = os.path.join(ROOT, "tests", "fixtures", "models")
OUT = os.path.join(ROOT, "tests", "fixtures", "pt2")

# Committed architecture cases (kept few: each archive holds its weights).
ARCHITECTURES = ["llama", "gpt2", "qwen3"]
ALL_DECODERS = ["llama", "llama_llama3_rope_tied_bf16", "mistral_sliding_window",
                "qwen2_linear_rope", "qwen2_yarn_rope", "qwen3", "qwen3_dynamic_rope_f16",
                "gpt2", "gemma", "gemma2", "gemma3", "qwen2_sliding_window",
                "qwen3_sliding_window", "phi3_longrope", "phi3_longrope_short", "olmo2",
                "granite", "gpt_neox", "stablelm", "stablelm_parallel_residual", "smollm3",
                "mixtral", "qwen3_moe"]


# ---- seed-001 example modules -------------------------------------------------------

class BufferMutation(torch.nn.Module):
    """An in-place buffer update and a buffer re-assignment (both lifted to outputs)."""

    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 3)
        self.register_buffer("steps", torch.zeros(1))
        self.register_buffer("running", torch.zeros(4))

    def forward(self, x):
        self.steps.add_(1)
        self.running = self.running * 0.9 + x.mean(0) * 0.1
        return self.lin(x).relu() * self.steps + self.running.sum()


class CondSinCos(torch.nn.Module):
    """torch.cond on data: both branches traced as subgraphs."""

    def forward(self, x):
        return torch.cond(x.sum() > 0, lambda x: x.sin(), lambda x: x.cos() + 1.0, (x,))


class NonzeroCheck(torch.nn.Module):
    """A data-dependent size (nonzero) made decidable with torch._check."""

    def forward(self, x):
        nz = x.nonzero()
        torch._check(nz.shape[0] > 0)
        if nz.shape[0] > 0:
            return x.sin(), nz
        return x.cos(), nz


class StaticIntDict(torch.nn.Module):
    """A static int input (specialised: y + 7 is baked in) and a dict output."""

    def forward(self, x, y):
        z = y + 7
        return {"sum": x + z, "scaled": (x * z).softmax(-1)}


class LoopsAndItem(torch.nn.Module):
    """map over rows, a while_loop, and item() sizing a narrow (an unbacked symbol)."""

    def forward(self, x, y):
        from torch._higher_order_ops.map import map as hop_map
        from torch._higher_order_ops.while_loop import while_loop

        mapped = hop_map(lambda row, w: row * w + 1.0, x, x.mean(0))
        doubled = while_loop(lambda s, lim: s < lim, lambda s, lim: (s * 2.0, lim.clone()),
                             (x[0, 0].abs() + 1.0, torch.full((), 50.0)))[0]
        n = y.item()
        torch._check_is_size(n)
        torch._check(n <= x.shape[0])
        return mapped, doubled, x.narrow(0, 0, n).cos()


class SymIntInput(torch.nn.Module):
    """A SymInt user input (n: int marked Dim.DYNAMIC) sizing an output."""

    def forward(self, x, n: int):
        return x * n + 1.0, x.mean(0).expand(n, x.shape[1]) * 2.0


class ExprSized(torch.nn.Module):
    """Inputs whose sizes are expressions of another input's symbol: y [2*s, 3], z [s + 1]."""

    def forward(self, x, y, z):
        return torch.cat([x, x * 2.0]) + y, torch.cat([x.sum(1), x.new_zeros(1)]) * z


def seed_cases():
    """name -> (module, example args, dynamic_shapes, list of case args)."""
    torch.manual_seed(1)
    batch = torch.export.Dim("batch", min=2, max=64)
    n = torch.export.Dim("n", min=1, max=64)
    return {
        "buffer_mutation": (BufferMutation(), (torch.randn(5, 4),), ({0: batch},),
                            [(torch.randn(5, 4),), (torch.randn(9, 4),)]),
        "cond": (CondSinCos(), (torch.randn(6, 3),), ({0: n},),
                 [(torch.rand(6, 3),), (-torch.rand(2, 3),), (torch.randn(11, 3) + 0.5,)]),
        "nonzero_check": (NonzeroCheck(), (torch.tensor([0.0, 1.5, 0.0, -2.0]),), ({0: n},),
                          [(torch.tensor([0.0, 1.5, 0.0, -2.0]),),
                           (torch.tensor([3.0, 0.0, 0.0, 0.0, 1.0, 2.0, 0.0]),)]),
        "static_int_dict": (StaticIntDict(), (torch.randn(3, 5), 3), ({1: n}, None),
                            [(torch.randn(3, 5), 3), (torch.randn(3, 8), 3)]),
        "loops_item": (LoopsAndItem(), (torch.randn(4, 3), torch.tensor(2)), ({0: n}, None),
                       [(torch.randn(4, 3), torch.tensor(2)), (torch.randn(7, 3), torch.tensor(7)),
                        (torch.randn(5, 3), torch.tensor(0))]),
        # Appended last: the draws above (and so the committed fixtures) stay the same.
        "symint_input": (SymIntInput(), (torch.randn(4, 3), 5), ({0: batch}, torch.export.Dim.DYNAMIC),
                         [(torch.randn(4, 3), 5), (torch.randn(7, 3), 2), (torch.randn(3, 3), 9)]),
        "expr_sized": (ExprSized(), (torch.randn(4, 3), torch.randn(8, 3), torch.randn(5)),
                       ({0: batch}, {0: 2 * batch}, {0: batch + 1}),
                       [(torch.randn(4, 3), torch.randn(8, 3), torch.randn(5)),
                        (torch.randn(9, 3), torch.randn(18, 3), torch.randn(10))]),
    }


# Seed cases whose int inputs are SymInts (dynamic), recorded as 0-d int64 .npy inputs;
# other int inputs are static (baked into the program) and not recorded.
SYMINT_INPUTS = {"symint_input": {"y"}}


# ---- writing a case -----------------------------------------------------------------

def flat_outputs(out):
    leaves, spec = torch.utils._pytree.tree_flatten(out)
    return [leaf for leaf in leaves if isinstance(leaf, torch.Tensor)], spec


def check_close(name, got, want, tol=1e-5):
    """ep.module() against eager: 1e-5 in float32; 16-bit floats round differently when
    ops are decomposed, so those get a few of their ulps (5e-2 here)."""
    if len(got) != len(want):
        sys.exit(f"{name}: ep.module() gave {len(got)} outputs, eager {len(want)}")
    for g, w in zip(got, want):
        if g.dtype.is_floating_point:
            tol = tol if g.dtype in (torch.float32, torch.float64) else 5e-2
            err = (g - w).abs().max().item() if g.numel() else 0.0
            if err > tol:
                sys.exit(f"{name}: ep.module() differs from eager by {err}")
        elif not torch.equal(g, w):
            sys.exit(f"{name}: ep.module() differs from eager")


def write_case(name, make_module, example, dynamic_shapes, case_args, input_names, out_dir,
               kwargs_mode=False, ops=None, int_inputs=()):
    d = os.path.join(out_dir, name)
    os.makedirs(d, exist_ok=True)
    module = make_module()
    with torch.no_grad():
        if kwargs_mode:
            ep = torch.export.export(module, (), example, dynamic_shapes=dynamic_shapes)
        else:
            ep = torch.export.export(module, example, dynamic_shapes=dynamic_shapes)
        ep_aten = ep.run_decompositions()
    torch.export.save(ep, os.path.join(d, "model.pt2"))
    torch.export.save(ep_aten, os.path.join(d, "model_aten.pt2"))
    if ops is not None:
        for dialect, prog in (("training", ep), ("aten", ep_aten)):
            for node in prog.graph.nodes:
                if node.op == "call_function":
                    ops[dialect][str(node.target)][name] += 1
    manifest = {"inputs": input_names, "cases": []}
    for k, args in enumerate(case_args):
        case = {"inputs": {}, "outputs": [], "buffers": {}}
        values = args if not kwargs_mode else [args[n] for n in input_names]
        for n, v in zip(input_names, values):
            if isinstance(v, torch.Tensor) or n in int_inputs:
                f = f"case{k}_{n}.npy"
                np.save(os.path.join(d, f), v.numpy() if isinstance(v, torch.Tensor)
                        else np.array(v, dtype=np.int64))
                case["inputs"][n] = f
        with torch.no_grad():
            eager_module = make_module()
            want, _ = flat_outputs(eager_module(**args) if kwargs_mode else eager_module(*args))
            for prog in (ep, ep_aten):
                # A copy: ep.module()'s buffers share the program's state, which an
                # in-place update would change for the next case.
                m = copy.deepcopy(prog).module()
                got, spec = flat_outputs(m(**args) if kwargs_mode else m(*args))
                check_close(name, got, want)
        for j, t in enumerate(got):
            f = f"case{k}_out{j}.npy"
            # numpy has no bfloat16: such outputs are stored as float32.
            np.save(os.path.join(d, f), (t.float() if t.dtype == torch.bfloat16 else t).numpy())
            case["outputs"].append(f)
        mutated = [s.target for s in ep_aten.graph_signature.output_specs
                   if s.kind == torch.export.graph_signature.OutputKind.BUFFER_MUTATION]
        for b in mutated:
            f = f"case{k}_buffer_{b}.npy"
            np.save(os.path.join(d, f), dict(m.named_buffers())[b].numpy())
            case["buffers"][b] = f
        manifest["cases"].append(case)
    with open(os.path.join(d, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
        f.write("\n")
    sizes = sum(os.path.getsize(os.path.join(d, x)) for x in os.listdir(d))
    print(f"{name}: {sizes // 1024} KiB")


def architecture_case(name, out_dir, ops):
    import transformers
    path = os.path.join(MODELS, name)

    def make():
        return transformers.AutoModelForCausalLM.from_pretrained(path).eval()

    vocab = make().config.vocab_size
    g = torch.Generator().manual_seed(7)
    seq = torch.export.Dim("seq", min=2, max=64)
    example = {"input_ids": torch.randint(0, vocab, (1, 7), generator=g), "use_cache": False}
    cases = [{"input_ids": torch.randint(0, vocab, (1, n), generator=g), "use_cache": False}
             for n in (5, 9, 16)]
    write_case(name, make, example, {"input_ids": {1: seq}, "use_cache": None}, cases,
               ["input_ids", "use_cache"], out_dir, kwargs_mode=True, ops=ops)


# Mixture-of-experts cases: the fixture checkpoints' architectures (their configs, the
# router, top-k and grouped experts as transformers writes them) at smaller widths, with
# seeded random weights, so the archives stay tens of KiB.
MOE_CASES = {
    "mixtral_moe": ("mixtral", {"hidden_size": 16, "intermediate_size": 16, "num_local_experts": 4,
                                "num_attention_heads": 2, "num_key_value_heads": 1, "head_dim": 8,
                                "num_hidden_layers": 1}),
    "qwen3_moe_small": ("qwen3_moe", {"hidden_size": 16, "intermediate_size": 24, "moe_intermediate_size": 16,
                                      "num_local_experts": 4, "num_attention_heads": 2,
                                      "num_key_value_heads": 1, "head_dim": 8, "num_hidden_layers": 2,
                                      "mlp_only_layers": [1]}),
}


def moe_case(name, out_dir, ops):
    import transformers
    folder, overrides = MOE_CASES[name]
    config = transformers.AutoConfig.from_pretrained(os.path.join(MODELS, folder))
    for k, v in overrides.items():
        setattr(config, k, v)

    def make():
        torch.manual_seed(11)
        return transformers.AutoModelForCausalLM.from_config(config).eval()

    g = torch.Generator().manual_seed(7)
    seq = torch.export.Dim("seq", min=2, max=64)
    example = {"input_ids": torch.randint(0, config.vocab_size, (1, 7), generator=g), "use_cache": False}
    cases = [{"input_ids": torch.randint(0, config.vocab_size, (1, n), generator=g), "use_cache": False}
             for n in (5, 12)]
    write_case(name, make, example, {"input_ids": {1: seq}, "use_cache": None}, cases,
               ["input_ids", "use_cache"], out_dir, kwargs_mode=True, ops=ops)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("names", nargs="*")
    p.add_argument("--out", default=OUT)
    p.add_argument("--all-architectures", action="store_true")
    p.add_argument("--ops", help="write the op counts per dialect as JSON to this file")
    a = p.parse_args()
    torch.manual_seed(0)
    ops = {"training": collections.defaultdict(collections.Counter),
           "aten": collections.defaultdict(collections.Counter)}
    seeds = seed_cases()
    archs = ALL_DECODERS if a.all_architectures else ARCHITECTURES
    names = a.names or (list(seeds) + archs + list(MOE_CASES))
    for name in names:
        if name in MOE_CASES:
            moe_case(name, a.out, ops)
        elif name in seeds:
            module, example, dyn, case_args = seeds[name]
            input_names = ["x", "y", "z"][:len(example)]
            write_case(name, lambda m=module: copy.deepcopy(m), example, dyn, case_args, input_names, a.out,
                       ops=ops, int_inputs=SYMINT_INPUTS.get(name, set()))
        elif a.all_architectures:
            # Measuring coverage: an architecture torch.export itself cannot trace is
            # reported and skipped.
            try:
                architecture_case(name, a.out, ops)
            except Exception as e:  # noqa: BLE001
                print(f"SKIP {name}: torch.export failed: {type(e).__name__}: {str(e).splitlines()[0]}")
        else:
            architecture_case(name, a.out, ops)
    if a.ops:
        with open(a.ops, "w") as f:
            json.dump({k: {op: dict(c) for op, c in sorted(v.items())} for k, v in ops.items()},
                      f, indent=1)


if __name__ == "__main__":
    main()
