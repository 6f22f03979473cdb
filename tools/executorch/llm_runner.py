#!/usr/bin/env python3
"""Greedy generation with ExecuTorch's TextLLMRunner (executorch.extension.llm.runner) on a
.pte in the LLM-runner layout and a tokenizer.json.

  python llm_runner.py MODEL.pte TOKENIZER.json --prompt TEXT --max-new-tokens N

Prints one JSON object {"text": generated text (the prompt not echoed), "executorch":
version}. temperature 0 is greedy. Run with the reference venv."""
from __future__ import annotations

import argparse
import json
import sys
from importlib.metadata import version


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("model")
    ap.add_argument("tokenizer")
    ap.add_argument("--prompt", required=True)
    ap.add_argument("--max-new-tokens", type=int, required=True)
    args = ap.parse_args()
    from executorch.extension.llm.runner import GenerationConfig, TextLLMRunner

    runner = TextLLMRunner(args.model, args.tokenizer)
    pieces: list[str] = []
    config = GenerationConfig(echo=False, max_new_tokens=args.max_new_tokens, temperature=0.0)
    runner.generate(args.prompt, config, token_callback=pieces.append)
    print(json.dumps({"text": "".join(pieces), "executorch": version("executorch")}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
