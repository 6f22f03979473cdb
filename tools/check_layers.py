#!/usr/bin/env python3
"""Checks that every `#include "ingot/..."` under src/ingot points down the layer order.

The order is the table in docs/architecture.md (one source of truth): each row names a
layer folder and the layers its files may include. A file belongs to the longest layer
folder that contains it (src/ingot/exporters/onnx/x.cpp is in `exporters/onnx/`, not
`exporters/`); so does an included header. An include is allowed when it stays in the
file's own layer or reaches a layer the row lists. Sub-folders are layers of their own:
`exporters/` may not include `exporters/onnx/` unless its row says so.

Also fails when a folder under src/ingot has no row, or a row names no folder, so the
document matches the tree.

  tools/check_layers.py              check the repository (exit 1 naming file:line)
  tools/check_layers.py --self-test  show that an upward include is caught
"""
import argparse
import pathlib
import re
import shutil
import sys
import tempfile

ROW = re.compile(r"^\|\s*`([a-z0-9_/]+/)`\s*\|[^|]*\|\s*([^|]*)\|\s*$")
INCLUDE = re.compile(r'^\s*#\s*include\s+"ingot/([^"]+)"')


def read_layers(doc: pathlib.Path) -> dict:
    """{layer folder: set of layer folders it may include} from the architecture table."""
    layers = {}
    for line in doc.read_text(encoding="utf-8").splitlines():
        m = ROW.match(line)
        if not m:
            continue
        allowed = {a.strip().strip("`") for a in m.group(2).split(",")}
        allowed = {a if a.endswith("/") else a + "/" for a in allowed if a and a != "—"}
        layers[m.group(1)] = allowed
    return layers


def layer_of(path: str, layers: dict):
    """The longest layer folder that is a prefix of `path` (relative to src/ingot)."""
    best = None
    for layer in layers:
        if path.startswith(layer) and (best is None or len(layer) > len(best)):
            best = layer
    return best


def check(root: pathlib.Path) -> list:
    doc = root / "docs" / "architecture.md"
    src = root / "src" / "ingot"
    layers = read_layers(doc)
    errors = []
    if not layers:
        return [f"{doc}: no layer table found"]
    for layer, allowed in sorted(layers.items()):
        if not (src / layer).is_dir():
            errors.append(f"{doc}: layer `{layer}` has no folder src/ingot/{layer}")
        for a in sorted(allowed - set(layers)):
            errors.append(f"{doc}: layer `{layer}` may include `{a}`, which is not a layer")
    for folder in sorted(p for p in src.rglob("*") if p.is_dir()):
        rel = folder.relative_to(src).as_posix() + "/"
        has_sources = any(f.suffix in (".h", ".cpp") for f in folder.iterdir())
        # A sub-folder without a row of its own belongs to its parent's layer.
        if has_sources and layer_of(rel, layers) is None:
            errors.append(f"{doc}: folder src/ingot/{rel} is in no layer; add a row")
    for f in sorted(src.rglob("*")):
        if f.suffix not in (".h", ".cpp"):
            continue
        rel = f.relative_to(src).as_posix()
        own = layer_of(rel, layers)
        if own is None:
            continue
        for n, line in enumerate(f.read_text(encoding="utf-8").splitlines(), 1):
            m = INCLUDE.match(line)
            if not m:
                continue
            target = layer_of(m.group(1), layers)
            if target is None:
                errors.append(f"src/ingot/{rel}:{n}: includes ingot/{m.group(1)}, in no layer")
            elif target != own and target not in layers[own]:
                errors.append(
                    f"src/ingot/{rel}:{n}: `{own}` may not include ingot/{m.group(1)} "
                    f"(layer `{target}`); it may include: "
                    f"{', '.join(sorted(layers[own])) or 'nothing'} "
                    "(docs/architecture.md). Move the code down a layer or the caller up.")
    return errors


def self_test(root: pathlib.Path) -> int:
    """Copies src/ and docs/ to a temp tree, checks it is clean, then adds upward and
    sideways includes and checks each is reported with its file and line."""
    with tempfile.TemporaryDirectory() as tmp:
        t = pathlib.Path(tmp)
        shutil.copytree(root / "src", t / "src")
        shutil.copytree(root / "docs", t / "docs")
        base = check(t)
        if base:
            print("self-test: the tree itself fails:\n" + "\n".join(base))
            return 1
        cases = [
            ("core/tensor.h", "runtime/executor/interpreter.h", "`core/` may not include"),
            ("ir/program.cpp", "runtime/executor/interpreter.h", "`ir/` may not include"),
            ("formats/serialize.cpp", "export/tracer.h", "`formats/` may not include"),
            ("nn/module.h", "models/config.h", "`nn/` may not include"),
            ("text/tokenizer.h", "models/config.h", "`text/` may not include"),
            ("exporters/exporter.cpp", "exporters/onnx/onnx_exporter.h",
             "`exporters/` may not include"),
        ]
        for victim, header, expected in cases:
            path = t / "src" / "ingot" / victim
            original = path.read_text(encoding="utf-8")
            lines = original.splitlines()
            lines.insert(2, f'#include "ingot/{header}"')
            path.write_text("\n".join(lines) + "\n", encoding="utf-8")
            errors = check(t)
            path.write_text(original, encoding="utf-8")
            want = f"src/ingot/{victim}:3: {expected}"
            if not any(e.startswith(want) for e in errors):
                print(f"self-test: adding #include \"ingot/{header}\" to {victim} was not "
                      f"reported as '{want} ...'; got: {errors}")
                return 1
            print(f"self-test: caught {errors[0]}")
        # A folder missing from the table is reported too.
        (t / "src" / "ingot" / "newlayer").mkdir()
        (t / "src" / "ingot" / "newlayer" / "x.h").write_text("#pragma once\n")
        if not any("src/ingot/newlayer/ is in no layer" in e for e in check(t)):
            print("self-test: a folder without a row was not reported")
            return 1
    print("self-test: passed")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", default=str(pathlib.Path(__file__).resolve().parent.parent))
    parser.add_argument("--self-test", action="store_true")
    args = parser.parse_args()
    root = pathlib.Path(args.root)
    if args.self_test:
        return self_test(root)
    errors = check(root)
    for e in errors:
        print(e)
    if errors:
        print(f"check_layers: {len(errors)} include(s) break the layer order")
        return 1
    print("check_layers: every include points down the layer order")
    return 0


if __name__ == "__main__":
    sys.exit(main())
