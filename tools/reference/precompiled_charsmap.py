"""Builds SentencePiece-style `precompiled_charsmap` blobs (the data of tokenizers'
Precompiled normalizer) for the tokenizer fixtures, since hub models cannot be downloaded
where the fixtures are made.

The blob is what SentencePiece's normalizer builder writes and what tokenizers'
spm_precompiled reads: a little-endian u32 with the trie's size in bytes, the trie as u32
units of a darts-clone double array, then the NUL-terminated replacement strings. A unit is
label | has_leaf << 8 | offset << 10 (offsets below 2**21, so the extension bit 9 stays 0);
the children of the node at `pos` sit at pos ^ offset ^ label, and its value unit (bit 31
set, the low 31 bits the replacement's byte offset) at pos ^ offset. The array is a whole
number of 256-unit blocks, as darts-clone writes it.
"""
import struct
import unicodedata


def build_double_array(items):
    """items: {key (non-empty bytes without NUL): value (int < 2**31)} -> list of u32 units."""
    trie = {}
    for key, value in items.items():
        node = trie
        for b in key:
            node = node.setdefault(b, {})
        node[None] = value
    units = [0]
    used = {0}
    free_from = 1
    queue = [(0, trie)]
    while queue:
        pos, node = queue.pop(0)
        labels = sorted(0 if k is None else k for k in node)
        q0 = free_from
        while True:  # the first offset at which every child (and the value) lands on a free unit
            while q0 in used:
                q0 += 1
            offset = pos ^ q0 ^ labels[0]
            if offset < (1 << 21) and all((pos ^ offset ^ l) not in used for l in labels):
                break
            q0 += 1
        while free_from in used:
            free_from += 1
        units[pos] |= offset << 10
        if None in node:
            units[pos] |= 1 << 8
        for label in labels:
            q = pos ^ offset ^ label
            used.add(q)
            units.extend([0] * (q + 1 - len(units)))
            if label == 0:
                units[q] = (1 << 31) | node[None]
            else:
                units[q] = label
                queue.append((q, node[label]))
    # darts-clone allocates whole blocks of 256 units, so that a lookup of any byte below
    # a node (pos ^ offset ^ byte) stays inside the array.
    units.extend([0] * (-len(units) % 256))
    return units


def precompiled_charsmap(rules):
    """rules: {source text: replacement text} -> the blob."""
    normalized = bytearray()
    offsets = {}
    items = {}
    for source in sorted(rules):
        target = rules[source].encode()
        if target not in offsets:
            offsets[target] = len(normalized)
            normalized += target + b"\0"
        items[source.encode()] = offsets[target]
    units = build_double_array(items)
    return (struct.pack("<I", 4 * len(units)) + b"".join(struct.pack("<I", u) for u in units) +
            bytes(normalized))


def t5_like_rules():
    """A subset of SentencePiece's nmt_nfkc rules (T5's normalizer): NFKC of the code points
    below U+3400, of the CJK compatibility ideographs and of the halfwidth/fullwidth forms;
    NMT's removal of control characters and its mapping of odd spaces to ' '; and the
    composition of Latin letters with combining marks (keys of several code points, which
    the normalizer tries on whole grapheme clusters)."""
    rules = {}
    for c in [*range(0x80, 0x3400), *range(0xF900, 0xFB50), *range(0xFF00, 0xFFF0)]:
        ch = chr(c)
        nfkc = unicodedata.normalize("NFKC", ch)
        if nfkc != ch:
            rules[ch] = nfkc
    for c in [*range(0x1, 0x9), 0xB, *range(0xE, 0x20), 0x7F, 0x8F, 0x9F]:
        rules[chr(c)] = ""
    for c in [0x9, 0xA, 0xC, 0xD, 0xA0, 0x1680, 0x2002, 0x2003, 0x2009, *range(0x200B, 0x2010),
              0x2028, 0x2029, 0x3000, 0xFEFF, 0xFFFD]:
        rules[chr(c)] = " "
    for base in "AEIOUYNCaeiouync":
        for mark in [0x300, 0x301, 0x302, 0x303, 0x308, 0x30A, 0x327]:
            seq = base + chr(mark)
            nfc = unicodedata.normalize("NFC", seq)
            if nfc != seq:
                rules[seq] = nfc
    return rules
