#!/usr/bin/env python3
"""Generates src/ingot/text/tokenizer/unicode_tables.cpp: the Unicode character data that
ingot's tokenizers need to behave exactly like the Hugging Face `tokenizers` package.

The tables are *probed from the reference implementation itself* (the `tokenizers` wheel),
one code point at a time, so they carry the same Unicode version and the same quirks as
the Rust crates it is built from (e.g. BertNormalizer's "is_other" control test uses an
older Unicode than Rust's std, so some recent characters count as unassigned there):

  whitespace        Rust char::is_whitespace             (WhitespaceSplit probe)
  bert_removed      dropped by BertNormalizer clean_text (NUL, U+FFFD, is_other minus \\t\\n\\r)
  punctuation       BertPreTokenizer / Punctuation split (ASCII punctuation or category P*)
  nonspacing_mark   BertNormalizer strip_accents filter  (category Mn)
  combining_mark    StripAccents normalizer filter       (category M*)
  numeric           Digits pre-tokenizer                 (char::is_numeric: N*)
  word              added-token single_word \\w          (Rust regex Unicode word class)
  lowercase         Lowercase normalizer                 (char::to_lowercase, full mapping)
  nfd / nfkd        NFD / NFKD normalizers, full decomposition (Hangul syllables excluded:
                    they are decomposed algorithmically; nfkd holds only the code points
                    whose NFKD differs from their NFD)
  ccc, compositions canonical combining classes and primary composites, from Python's
                    unicodedata, each composite cross-checked with the NFC normalizer.
  regex_*_extra     code points that Oniguruma (the regex engine of tokenizers' Split and
                    Replace) puts in \p{L}, \p{N}, \d, \w although Unicode 14 (the version
                    of Debian 12's PCRE2 10.42, and of this Python's unicodedata) does not:
                    characters assigned in later Unicode versions. ingot adds them to those
                    classes when it compiles a tokenizer.json regex.

Run with the reference venv:
  $(tools/reference/setup-venv) tools/reference/make_tokenizer_unicode_tables.py
"""
import os
import sys
import unicodedata

import tokenizers
from tokenizers import AddedToken, Tokenizer, models
from tokenizers import normalizers as N
from tokenizers import pre_tokenizers as P

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
OUT = os.path.join(ROOT, "src", "ingot", "models", "tokenizer", "unicode_tables.cpp")
HANGUL_FIRST, HANGUL_LAST = 0xAC00, 0xD7A3


def code_points():
    for c in range(0x110000):
        if 0xD800 <= c <= 0xDFFF:
            continue
        yield c


def ranges(pred):
    out = []
    for c in code_points():
        if pred(c):
            if out and out[-1][1] == c - 1:
                out[-1][1] = c
            else:
                out.append([c, c])
    return out


def main():
    clean = N.BertNormalizer(clean_text=True, handle_chinese_chars=False, strip_accents=False,
                             lowercase=False)
    strip_mn = N.BertNormalizer(clean_text=False, handle_chinese_chars=False, strip_accents=True,
                                lowercase=False)
    strip_m = N.StripAccents()
    nfd, nfkd, nfc = N.NFD(), N.NFKD(), N.NFC()
    lower = N.Lowercase()
    ws_split = P.WhitespaceSplit()
    punct = P.Punctuation()
    digits = P.Digits(individual_digits=True)

    # \w as the added-token matcher sees it: "@" + c + "XX" matches the single_word token
    # XX only when c is not a word character.
    probe = Tokenizer(models.WordLevel({"[UNK]": 0}, unk_token="[UNK]"))
    probe.add_tokens([AddedToken("XX", single_word=True)])
    xx = probe.token_to_id("XX")

    def is_ws(c):
        return len(ws_split.pre_tokenize_str("a" + chr(c) + "a")) == 2

    def onig(pattern):
        split = P.Split(tokenizers.Regex(pattern), behavior="isolated")
        return lambda c: len(split.pre_tokenize_str("\x01" + chr(c) + "\x01")) == 3

    def category(c):
        return unicodedata.category(chr(c))

    onig_l, onig_n, onig_d, onig_w = onig(r"\p{L}"), onig(r"\p{N}"), onig(r"\d"), onig(r"\w")

    tables = {
        "whitespace": ranges(is_ws),
        "bert_removed": ranges(lambda c: clean.normalize_str(chr(c)) == ""),
        "punctuation": ranges(lambda c: len(punct.pre_tokenize_str("a" + chr(c) + "a")) == 3),
        "nonspacing_mark": ranges(lambda c: nfd.normalize_str(chr(c)) == chr(c)
                                  and strip_mn.normalize_str(chr(c)) == ""),
        "combining_mark": ranges(lambda c: strip_m.normalize_str(chr(c)) == ""),
        "numeric": ranges(lambda c: len(digits.pre_tokenize_str("a" + chr(c) + "a")) == 3),
        "word": ranges(lambda c: xx not in probe.encode(chr(c) + "XX").ids),
        "regex_letter_extra": ranges(lambda c: onig_l(c) and not category(c).startswith("L")),
        "regex_number_extra": ranges(lambda c: onig_n(c) and not category(c).startswith("N")),
        "regex_digit_extra": ranges(lambda c: onig_d(c) and category(c) != "Nd"),
        "regex_word": ranges(onig_w),
    }

    lowercase, nfd_map, nfkd_map = [], [], []
    for c in code_points():
        s = chr(c)
        lo = lower.normalize_str(s)
        if lo != s:
            lowercase.append((c, lo))
        if HANGUL_FIRST <= c <= HANGUL_LAST:
            continue
        d = nfd.normalize_str(s)
        if d != s:
            nfd_map.append((c, d))
        k = nfkd.normalize_str(s)
        if k != d:
            nfkd_map.append((c, k))

    ccc = []
    for c in code_points():
        v = unicodedata.combining(chr(c))
        if v:
            if ccc and ccc[-1][1] == c - 1 and ccc[-1][2] == v:
                ccc[-1][1] = c
            else:
                ccc.append([c, c, v])

    compositions = []
    for c in code_points():
        if HANGUL_FIRST <= c <= HANGUL_LAST:
            continue
        dec = unicodedata.decomposition(chr(c))
        if not dec or dec.startswith("<"):
            continue
        parts = [int(p, 16) for p in dec.split()]
        if len(parts) != 2:
            continue
        if unicodedata.normalize("NFC", chr(parts[0]) + chr(parts[1])) != chr(c):
            continue  # composition exclusion
        if nfc.normalize_str(nfd.normalize_str(chr(c))) != chr(c):
            continue
        compositions.append((parts[0], parts[1], c))
    compositions.sort()

    write(tables, lowercase, nfd_map, nfkd_map, ccc, compositions)


def write(tables, lowercase, nfd_map, nfkd_map, ccc, compositions):
    lines = [
        "// GENERATED by tools/reference/make_tokenizer_unicode_tables.py from tokenizers "
        f"{tokenizers.__version__}",
        f"// and Python unicodedata {unicodedata.unidata_version}. Do not edit by hand.",
        "// clang-format off",
        '#include "ingot/text/tokenizer/unicode_tables.h"',
        "",
        "namespace ingot::models::tokenizer::tables {",
        "",
    ]
    for name, rs in tables.items():
        lines.append(f"static const CodeRange k_{name}[] = {{")
        lines.extend(wrap([f"{{0x{a:X},0x{b:X}}}" for a, b in rs]))
        lines.append("};")
        lines.append(f"const std::span<const CodeRange> {name}(k_{name});")
        lines.append("")

    def mapping(name, entries):
        # Flat records: code point, length, mapped code points.
        flat = []
        for c, s in entries:
            flat.extend([c, len(s)] + [ord(x) for x in s])
        lines.append(f"static const char32_t k_{name}[] = {{")
        lines.extend(wrap([f"0x{p:X}" if p > 9 else str(p) for p in flat]))
        lines.append("};")
        lines.append(f"const std::span<const char32_t> {name}(k_{name});")
        lines.append("")

    mapping("lowercase", lowercase)
    mapping("nfd", nfd_map)
    mapping("nfkd", nfkd_map)
    lines.append("static const CombiningClassRange k_ccc[] = {")
    lines.extend(wrap([f"{{0x{a:X},0x{b:X},{v}}}" for a, b, v in ccc]))
    lines.append("};")
    lines.append("const std::span<const CombiningClassRange> combining_class(k_ccc);")
    lines.append("")
    lines.append("static const Composition k_compositions[] = {")
    lines.extend(wrap([f"{{0x{a:X},0x{b:X},0x{c:X}}}" for a, b, c in compositions]))
    lines.append("};")
    lines.append("const std::span<const Composition> compositions(k_compositions);")
    lines.append("")
    lines.append("}  // namespace ingot::models::tokenizer::tables")
    with open(OUT, "w") as f:
        f.write("\n".join(lines) + "\n")
    print(f"wrote {OUT} ({os.path.getsize(OUT)} bytes)", file=sys.stderr)


def wrap(items, width=98):
    out, line = [], " "
    for it in items:
        if len(line) + len(it) + 1 > width:
            out.append(line)
            line = " "
        line += it + ","
    if line.strip():
        out.append(line)
    return out


if __name__ == "__main__":
    main()
