#!/usr/bin/env python3
"""Writes ONNX files made by the onnx package itself, for ingot's reader tests and as
seeds of fuzz/onnx_reader_fuzz.

Unlike ingot's writer, onnx.helper stores tensor values in the typed fields (float_data,
int32_data for float16, int64_data), sets doc strings and metadata, and uses its own
field layout, so these files test that the reader understands another producer.
Run with the venv of tools/onnx/setup-venv:

  ~/.cache/ingot/onnx-venv/bin/python tools/onnx/make_reader_fixtures.py

Outputs (small, committed): tests/fixtures/onnx/helper_typed.onnx, and the fuzz seeds
fuzz/corpus/onnx_reader_fuzz/{helper_typed,loop_external_ref}.onnx. tests/exporters/onnx_fixture_test.cpp states the values.
"""
import os
import shutil

import onnx
from onnx import TensorProto, helper

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def helper_typed() -> onnx.ModelProto:
    # Initializers in typed fields (raw=False).
    w = helper.make_tensor("w", TensorProto.FLOAT, [2, 3], [1.0, -2.0, 3.5, 0.0, 0.25, -8.0])
    # onnx.helper converts the floats to float16 bit patterns kept in int32_data.
    h = helper.make_tensor("h", TensorProto.FLOAT16, [2], [1.5, -0.5])
    shape = helper.make_tensor("shape", TensorProto.INT64, [2], [3, 2])
    then_g = helper.make_graph(
        [helper.make_node("Identity", ["x"], ["then_out"])], "then_branch", [],
        [helper.make_tensor_value_info("then_out", TensorProto.FLOAT, ["batch", 3])])
    else_g = helper.make_graph(
        [helper.make_node("Neg", ["x"], ["else_out"])], "else_branch", [],
        [helper.make_tensor_value_info("else_out", TensorProto.FLOAT, ["batch", 3])])
    nodes = [
        helper.make_node("If", ["flag"], ["picked"], then_branch=then_g, else_branch=else_g,
                         doc_string="choose a branch"),
        helper.make_node("Transpose", ["w"], ["w_t"], perm=[1, 0]),
        helper.make_node("MatMul", ["picked", "w_t"], ["mm"], name="matmul"),
        helper.make_node("Reshape", ["mm", "shape"], ["reshaped"], allowzero=0),
        helper.make_node("LeakyRelu", ["reshaped"], ["y"], alpha=0.125),
        helper.make_node("Cast", ["h"], ["h32"], to=TensorProto.FLOAT),
    ]
    graph = helper.make_graph(
        nodes, "helper_typed",
        [helper.make_tensor_value_info("flag", TensorProto.BOOL, []),
         helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [None, 2]),
         helper.make_tensor_value_info("h32", TensorProto.FLOAT, [2])],
        initializer=[w, h, shape], doc_string="made by onnx.helper",
        value_info=[helper.make_tensor_value_info("mm", TensorProto.FLOAT, ["batch", 2])])
    model = helper.make_model(graph, producer_name="onnx.helper",
                              opset_imports=[helper.make_opsetid("", 18)], ir_version=8)
    helper.set_model_props(model, {"purpose": "reader fixture"})
    onnx.checker.check_model(model, full_check=True)
    return model


def loop_with_external_weight() -> onnx.ModelProto:
    """A fuzz seed: a Loop body, a Scan-style output and an initializer whose data is
    external (only the reference is kept: the data file is not written)."""
    body = helper.make_graph(
        [helper.make_node("Identity", ["cond_in"], ["cond_out"]),
         helper.make_node("Add", ["acc_in", "w"], ["acc_out"]),
         helper.make_node("Identity", ["acc_out"], ["scan_out"])],
        "body",
        [helper.make_tensor_value_info("i", TensorProto.INT64, []),
         helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
         helper.make_tensor_value_info("acc_in", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("acc_out", TensorProto.FLOAT, [2]),
         helper.make_tensor_value_info("scan_out", TensorProto.FLOAT, [2])])
    w = helper.make_tensor("w", TensorProto.FLOAT, [2], [0.0, 0.0])
    w.ClearField("float_data")
    w.data_location = TensorProto.EXTERNAL
    for key, value in (("location", "weights.bin"), ("offset", "0"), ("length", "8")):
        entry = w.external_data.add()
        entry.key, entry.value = key, value
    graph = helper.make_graph(
        [helper.make_node("Loop", ["trips", "", "acc0"], ["acc", "steps"], body=body)],
        "loop", [helper.make_tensor_value_info("trips", TensorProto.INT64, []),
                 helper.make_tensor_value_info("acc0", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("acc", TensorProto.FLOAT, [2]),
         helper.make_tensor_value_info("steps", TensorProto.FLOAT, ["trips", 2])],
        initializer=[w])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)], ir_version=8)


def main() -> None:
    fixtures = os.path.join(ROOT, "tests", "fixtures", "onnx")
    corpus = os.path.join(ROOT, "fuzz", "corpus", "onnx_reader_fuzz")
    os.makedirs(fixtures, exist_ok=True)
    os.makedirs(corpus, exist_ok=True)
    path = os.path.join(fixtures, "helper_typed.onnx")
    onnx.save(helper_typed(), path)
    shutil.copy(path, os.path.join(corpus, "helper_typed.onnx"))
    onnx.save(loop_with_external_weight(), os.path.join(corpus, "loop_external_ref.onnx"))
    print(f"wrote {path} ({os.path.getsize(path)} bytes) with onnx {onnx.__version__}")


if __name__ == "__main__":
    main()
