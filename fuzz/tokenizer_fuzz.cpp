// libFuzzer target: tokenizer.json loading must reject malformed input with an
// ingot::Error (IoError / NotSupportedError) and never crash or hang; a tokenizer that
// loads must encode and decode without crashing (invalid UTF-8 is a ValueError).
#include <cstddef>
#include <cstdint>
#include <string>

#include "ingot/core/error.h"
#include "ingot/text/tokenizer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    auto tok = ingot::text::Tokenizer::from_json_text(text, "fuzz-input");
    // The last sample has grapheme clusters of several code points (A + ring + acute,
    // e + acute, CR LF, a flag) for the Precompiled normalizer's whole-cluster lookups.
    for (const char* sample :
         {"Hello world! 123 \xc3\xa9t\xc3\xa9 \xf0\x9f\x9a\x80  code\t\n", "",
          "A\xcc\x8a\xcc\x81 e\xcc\x81\r\n\xef\xac\x81 \xf0\x9f\x87\xa9\xf0\x9f\x87\xaa <unk>"}) {
      auto ids = tok.encode(sample);
      tok.decode(ids);
      tok.decode(ids, /*skip_special_tokens=*/true);
    }
    std::vector<int64_t> odd_ids{0, 1, -1, 1 << 30, 5};
    tok.decode(odd_ids);
  } catch (const ingot::Error&) {
  }
  return 0;
}
