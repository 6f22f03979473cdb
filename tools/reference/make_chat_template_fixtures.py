#!/usr/bin/env python3
"""Renders the chat-template fixtures under tests/fixtures/chat_templates/ with jinja2,
exactly as transformers' apply_chat_template(..., tokenize=False) renders them.

transformers compiles a chat template in an ImmutableSandboxedEnvironment(trim_blocks=True,
lstrip_blocks=True) with the loopcontrols extension (and its {% generation %} tag),
replaces the tojson filter by json.dumps(ensure_ascii=False, indent, separators,
sort_keys), and adds the globals raise_exception (raises TemplateError) and strftime_now.
It renders with messages, tools=None, documents=None, add_generation_prompt, the
tokenizer's special tokens and the caller's extra variables. This script builds the same
environment; no transformers install is needed.

Inputs (committed, never written here):
  templates/<name>.jinja   the published template texts (README.md says where each came
                           from); they are model-format data, kept byte for byte
Outputs:
  <name>/                  a model folder per template: chat_template.jinja or the
                           template inside tokenizer_config.json (string, or a list of
                           named templates), and tokenizer_config.json's special tokens
  <name>/expected.json     for each conversation x add_generation_prompt: the rendered
                           text, or the error jinja2 raised
  conversations.json       the conversations (messages + extra template variables)
  constructs.json          small templates exercising one construct each, with variables
                           and jinja2's output or error (the engine's unit tests)
and the seed corpus of the chat_template_fuzz target, fuzz/corpus/chat_template_fuzz/:
every template and construct as one file.

Run with the small jinja2 venv:
  $(tools/reference/setup-jinja-venv) tools/reference/make_chat_template_fixtures.py
"""
import json
import os
import sys
from datetime import datetime

import jinja2
import jinja2.ext
from jinja2.sandbox import ImmutableSandboxedEnvironment

from chat_template_constructs import CONSTRUCTS

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "..", "tests", "fixtures", "chat_templates")
CORPUS = os.path.join(HERE, "..", "..", "fuzz", "corpus", "chat_template_fuzz")

# name -> (special tokens of its tokenizer_config.json, where the template is stored)
#   layout "jinja": chat_template.jinja; "config": tokenizer_config.json "chat_template"
#   string; "named": a list [{"name": "default", ...}, {"name": "tool_use", ...}]
MODELS = {
    "llama3_1": ({"bos_token": "<|begin_of_text|>", "eos_token": "<|eot_id|>"}, "jinja"),
    "qwen2_5": ({"eos_token": "<|im_end|>", "pad_token": "<|endoftext|>"}, "jinja"),
    "qwen3": ({"eos_token": "<|im_end|>", "pad_token": "<|endoftext|>"}, "jinja"),
    "qwen3_early": ({"eos_token": "<|im_end|>", "pad_token": "<|endoftext|>"}, "jinja"),
    "mistral_v0_3": ({"bos_token": "<s>", "eos_token": "</s>", "unk_token": "<unk>"}, "jinja"),
    "mistral_nemo": ({"bos_token": "<s>", "eos_token": "</s>", "unk_token": "<unk>"}, "named"),
    "gemma2": ({"bos_token": {"content": "<bos>", "lstrip": False, "normalized": False,
                              "rstrip": False, "single_word": False},
                "eos_token": "<eos>", "pad_token": "<pad>", "unk_token": "<unk>"}, "config"),
    "gemma3": ({"bos_token": "<bos>", "eos_token": "<eos>", "pad_token": "<pad>",
                "unk_token": "<unk>"}, "jinja"),
    "phi3": ({"bos_token": "<s>", "eos_token": "<|endoftext|>", "pad_token": "<|endoftext|>",
              "unk_token": "<unk>"}, "jinja"),
    "phi3_5": ({"bos_token": "<s>", "eos_token": "<|endoftext|>",
                "pad_token": "<|endoftext|>", "unk_token": "<unk>"}, "jinja"),
    "smollm2": ({"bos_token": "<|im_start|>", "eos_token": "<|im_end|>",
                 "pad_token": "<|im_end|>", "unk_token": "<|endoftext|>"}, "config"),
}

WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Get the current weather in a city",
        "parameters": {
            "type": "object",
            "properties": {
                "city": {"type": "string", "description": "The city, e.g. Zürich"},
                "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
            },
            "required": ["city"],
        },
    },
}

CONVERSATIONS = [
    {"name": "single_user", "messages": [{"role": "user", "content": "Hello, who are you?"}]},
    {"name": "system_user", "messages": [
        {"role": "system", "content": "You are a helpful assistant."},
        {"role": "user", "content": "What is 2 + 2?"}]},
    {"name": "multi_turn", "messages": [
        {"role": "user", "content": "Hi!"},
        {"role": "assistant", "content": "Hello! How can I help you today?"},
        {"role": "user", "content": "Tell me a joke."}]},
    {"name": "multi_turn_system", "messages": [
        {"role": "system", "content": "  Answer briefly.  \n"},
        {"role": "user", "content": "Name a colour."},
        {"role": "assistant", "content": " Blue. "},
        {"role": "user", "content": "Another one?"},
        {"role": "assistant", "content": "Green."}]},
    {"name": "unicode", "messages": [
        {"role": "user",
         "content": "  Bonjour, ça va ? 你好 🚀 \"quoted\" \\ back\\slash\ttab\nnew line \u3000"}]},
    {"name": "thinking", "messages": [
        {"role": "user", "content": "What is 3 * 7?"},
        {"role": "assistant", "content": "<think>\nThree times seven.\n</think>\n\n21."},
        {"role": "user", "content": "And 3 * 8?"}]},
    {"name": "no_thinking", "extra": {"enable_thinking": False},
     "messages": [{"role": "user", "content": "Quick: capital of France?"}]},
    {"name": "tools", "extra": {"tools": [WEATHER_TOOL]}, "messages": [
        {"role": "system", "content": "You can look up the weather."},
        {"role": "user", "content": "Weather in Zürich?"}]},
    {"name": "tool_call", "extra": {"tools": [WEATHER_TOOL]}, "messages": [
        {"role": "user", "content": "Weather in Paris?"},
        {"role": "assistant", "content": "",
         "tool_calls": [{"id": "call12345", "type": "function", "function": {
             "name": "get_weather", "arguments": {"city": "Paris", "unit": "celsius"}}}]},
        {"role": "tool", "tool_call_id": "call12345", "content": "{\"temperature\": 21}"},
        {"role": "assistant", "content": "It is 21 °C in Paris."},
        {"role": "user", "content": "Thanks!"}]},
    {"name": "llama_date", "extra": {"date_string": "01 Dec 2025"},
     "messages": [{"role": "user", "content": "What day is it?"}]},
    {"name": "assistant_first", "messages": [
        {"role": "assistant", "content": "I speak first."},
        {"role": "user", "content": "Odd."}]},
    {"name": "two_users", "messages": [
        {"role": "user", "content": "One."},
        {"role": "user", "content": "Two."}]},
]


class Generation(jinja2.ext.Extension):
    """transformers' {% generation %} ... {% endgeneration %}: renders its body as is."""

    tags = {"generation"}

    def parse(self, parser):
        lineno = next(parser.stream).lineno
        body = parser.parse_statements(("name:endgeneration",), drop_needle=True)
        return jinja2.nodes.Scope(body, lineno=lineno)


def raise_exception(message):
    raise jinja2.exceptions.TemplateError(message)


def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
    return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators,
                      sort_keys=sort_keys)


def strftime_now(format):
    return datetime.now().strftime(format)


def environment():
    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                        extensions=[Generation, jinja2.ext.loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = strftime_now
    return env


def render(env, source, variables):
    """{"output": text} or {"error": {"kind", "message"}} as jinja2 ends."""
    try:
        return {"output": env.from_string(source).render(**variables)}
    except jinja2.exceptions.TemplateSyntaxError as e:
        return {"error": {"kind": "syntax", "message": e.message, "line": e.lineno}}
    except jinja2.exceptions.TemplateError as e:
        raised = type(e) is jinja2.exceptions.TemplateError
        return {"error": {"kind": "raise_exception" if raised else "runtime",
                          "message": str(e)}}
    except Exception as e:  # TypeError, ValueError, ... from Python operations
        return {"error": {"kind": "runtime", "message": f"{type(e).__name__}: {e}"}}


def token_text(value):
    return value["content"] if isinstance(value, dict) else value


def write_json(path, value):
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        json.dump(value, f, ensure_ascii=False, indent=1)
        f.write("\n")


def make_model(env, name, tokens, layout):
    with open(os.path.join(OUT, "templates", name + ".jinja"), encoding="utf-8", newline="") as f:
        source = f.read()
    folder = os.path.join(OUT, name)
    os.makedirs(folder, exist_ok=True)
    for stale in ("chat_template.jinja", "tokenizer_config.json"):
        if os.path.exists(os.path.join(folder, stale)):
            os.remove(os.path.join(folder, stale))
    config = dict(tokens)
    if layout == "jinja":
        with open(os.path.join(folder, "chat_template.jinja"), "w", encoding="utf-8", newline="") as f:
            f.write(source)
    elif layout == "config":
        config["chat_template"] = source
    else:  # named: what transformers 4 wrote for several templates
        config["chat_template"] = [{"name": "default", "template": source},
                                   {"name": "tool_use", "template": "{{ raise_exception('not this one') }}"}]
    write_json(os.path.join(folder, "tokenizer_config.json"), config)

    special = {k: token_text(v) for k, v in tokens.items() if v is not None}
    cases = []
    for conversation in CONVERSATIONS:
        for add_generation_prompt in (True, False):
            variables = {"messages": conversation["messages"], "tools": None, "documents": None,
                         "add_generation_prompt": add_generation_prompt, **special,
                         **conversation.get("extra", {})}
            cases.append({"conversation": conversation["name"],
                          "add_generation_prompt": add_generation_prompt,
                          **render(env, source, variables)})
    write_json(os.path.join(folder, "expected.json"), cases)
    errors = sum("error" in c for c in cases)
    print(f"{name}: {len(cases)} renders, {errors} raise")


def main():
    print(f"jinja2 {jinja2.__version__}", file=sys.stderr)
    env = environment()
    write_json(os.path.join(OUT, "conversations.json"), CONVERSATIONS)
    for name, (tokens, layout) in MODELS.items():
        make_model(env, name, tokens, layout)
    constructs = []
    for template, variables in CONSTRUCTS:
        constructs.append({"template": template, "variables": variables,
                           **render(env, template, variables)})
    write_json(os.path.join(OUT, "constructs.json"), constructs)
    print(f"constructs: {len(constructs)}")
    write_corpus([(n, open(os.path.join(OUT, "templates", n + ".jinja"), encoding="utf-8").read())
                  for n in MODELS] +
                 [(f"construct_{i:03d}", t) for i, (t, _) in enumerate(CONSTRUCTS)])


def write_corpus(entries):
    os.makedirs(CORPUS, exist_ok=True)
    for old in os.listdir(CORPUS):
        os.remove(os.path.join(CORPUS, old))
    for name, text in entries:
        with open(os.path.join(CORPUS, name + ".jinja"), "w", encoding="utf-8", newline="") as f:
            f.write(text)
    print(f"fuzz corpus: {len(entries)} files")


if __name__ == "__main__":
    main()
