// The .pt2 reader's parts and its errors: the stored-ZIP reader / writer, sympy srepr
// expressions, and what a damaged or unsupported archive reports (each test edits a
// torch-written fixture archive with ZipReader / ZipWriter, so the rest stays valid).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <sstream>

#include "ingot/core/error.h"
#include "ingot/formats/pt2/aten_ops.h"
#include "ingot/formats/pt2/reader.h"
#include "ingot/formats/pt2/sympy_expr.h"
#include "ingot/formats/pt2/zip.h"
#include "ingot/ops/functional.h"

namespace ingot {
namespace {

namespace fs = std::filesystem;
const fs::path kDir = fs::path(INGOT_FIXTURES_DIR) / "pt2";

std::string read_file(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

// Rewrites an archive record by record: `edit` returns the new bytes, or nullopt to drop
// the record.
using Edit = std::function<std::optional<std::string>(const std::string& name, std::string bytes)>;
std::string rewrite(const std::string& archive, const Edit& edit) {
  pt2::ZipReader in(reinterpret_cast<const uint8_t*>(archive.data()), archive.size(), "in");
  std::string out;
  pt2::ZipWriter w([&](const void* p, size_t n) { out.append(static_cast<const char*>(p), n); });
  for (const auto& r : in.records()) {
    if (auto b = edit(r.name, std::string(in.bytes(r)))) w.add(r.name, *b);
  }
  w.finish();
  return out;
}

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  for (size_t p = s.find(from); p != std::string::npos; p = s.find(from, p + to.size())) s.replace(p, from.size(), to);
  return s;
}

// Loads `bytes` and returns the error message of type E (fails if it loads).
template <typename E>
std::string load_error(const std::string& bytes) {
  try {
    pt2::load_pt2_from_bytes(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), nullptr, "edited.pt2");
  } catch (const E& e) {
    return e.what();
  }
  ADD_FAILURE() << "loaded without the expected error";
  return "";
}

TEST(Pt2Zip, WriterRecordsReadBackAlignedWithCrc) {
  std::string out;
  pt2::ZipWriter w([&](const void* p, size_t n) { out.append(static_cast<const char*>(p), n); });
  w.add("a/x", "hello");
  w.add("a/long/name/y", std::string(1000, 'z'));
  w.add("a/empty", "");
  w.finish();
  pt2::ZipReader r(reinterpret_cast<const uint8_t*>(out.data()), out.size(), "mem");
  ASSERT_EQ(r.records().size(), 3u);
  EXPECT_EQ(r.bytes("a/x"), "hello");
  EXPECT_EQ(r.bytes("a/long/name/y"), std::string(1000, 'z'));
  EXPECT_EQ(r.bytes("a/empty"), "");
  for (const auto& rec : r.records()) {
    EXPECT_EQ(rec.data_offset % 64, 0u) << rec.name;
    r.verify_crc(rec);
  }
  EXPECT_EQ(pt2::crc32("123456789", 9), 0xCBF43926u);  // the standard check value
}

TEST(Pt2Zip, TorchArchiveRecordsAreAligned) {
  const std::string bytes = read_file(kDir / "llama" / "model.pt2");
  pt2::ZipReader r(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), "llama");
  for (const auto& rec : r.records()) {
    EXPECT_EQ(rec.data_offset % 64, 0u) << rec.name;
    r.verify_crc(rec);
  }
}

TEST(Pt2Zip, TruncatedAndGarbageAreClearErrors) {
  const std::string bytes = read_file(kDir / "cond" / "model.pt2");
  for (size_t cut : {size_t(0), size_t(10), bytes.size() / 2, bytes.size() - 5}) {
    const std::string msg = load_error<IoError>(bytes.substr(0, cut));
    EXPECT_NE(msg.find("not a readable .pt2 (ZIP) archive"), std::string::npos) << msg;
  }
  // A record pointing past the end: a corrupt central directory entry.
  std::string bad = bytes;
  const size_t cd = bad.rfind("PK\x01\x02");
  ASSERT_NE(cd, std::string::npos);
  bad[cd + 42] = '\xff';
  bad[cd + 43] = '\xff';
  bad[cd + 44] = '\xff';
  EXPECT_NE(load_error<IoError>(bad).find("local header"), std::string::npos);
}

TEST(Pt2Sympy, ParsesTorchsSrepr) {
  const sym::Expr s = sym::symbol("s70");
  EXPECT_EQ(pt2::parse_sympy("Symbol('s70', positive=True, integer=True)", "t"), s);
  EXPECT_EQ(pt2::parse_sympy("Mul(Integer(4), Pow(Symbol('s70', positive=True, integer=True), Integer(2)))", "t"),
            4 * s * s);
  EXPECT_EQ(pt2::parse_sympy("Add(Symbol('s70', integer=True), Integer(-1))", "t"), s - 1);
  EXPECT_EQ(pt2::parse_sympy("FloorDiv(Symbol('s70'), Integer(2))", "t"), sym::floordiv(s, sym::integer(2)));
  EXPECT_EQ(pt2::parse_sympy("StrictGreaterThan(Symbol('u0', integer=True), Integer(0))", "t"),
            sym::gt(sym::symbol("u0"), sym::integer(0)));
  EXPECT_EQ(pt2::parse_sympy("s70", "t"), s);
  EXPECT_EQ(pt2::parse_sympy("42", "t"), sym::integer(42));
  for (const char* bad : {"Frobnicate(Integer(1))", "Add(Integer(1)", "Pow(Symbol('s'), Symbol('t'))",
                          "FloorDiv(Integer(1), Integer(0))", "Add(Eq(Integer(1), Integer(2)), Integer(1))", ""}) {
    EXPECT_THROW(pt2::parse_sympy(bad, "x dim 0"), IoError) << bad;
  }
}

TEST(Pt2Errors, MissingWeightFileIsNamed) {
  const std::string bytes = read_file(kDir / "buffer_mutation" / "model.pt2");
  const std::string edited = rewrite(bytes, [](const std::string& n, std::string b) -> std::optional<std::string> {
    if (n.ends_with("data/weights/weight_0")) return std::nullopt;
    return b;
  });
  const std::string msg = load_error<IoError>(edited);
  EXPECT_NE(msg.find("weight_0"), std::string::npos) << msg;
  EXPECT_NE(msg.find("missing weight file"), std::string::npos) << msg;
}

TEST(Pt2Errors, UnknownSchemaVersionNamesItAndTheSupportedOnes) {
  const std::string bytes = read_file(kDir / "cond" / "model.pt2");
  const std::string edited = rewrite(bytes, [](const std::string& n, std::string b) -> std::optional<std::string> {
    return n.ends_with("models/model.json") ? replace_all(b, "\"major\": 8", "\"major\": 99") : b;
  });
  const std::string msg = load_error<IoError>(edited);
  EXPECT_NE(msg.find("schema version 99.20"), std::string::npos) << msg;
  EXPECT_NE(msg.find("8.x"), std::string::npos) << msg;
}

TEST(Pt2Errors, MissingOpsAreListedWithCounts) {
  const std::string bytes = read_file(kDir / "llama" / "model.pt2");
  const std::string edited = rewrite(bytes, [](const std::string& n, std::string b) -> std::optional<std::string> {
    if (!n.ends_with("models/model.json")) return b;
    b = replace_all(b, "torch.ops.aten.rsqrt.default", "torch.ops.aten.frobnicate.default");
    return replace_all(b, "torch.ops.aten.silu.default", "torch.ops.mylib.swish.default");
  });
  const std::string msg = load_error<NotSupportedError>(edited);
  EXPECT_NE(msg.find("aten.frobnicate.default (x5)"), std::string::npos) << msg;
  EXPECT_NE(msg.find("mylib.swish.default (x2)"), std::string::npos) << msg;
  EXPECT_NE(msg.find("2 op(s) in 7 node(s)"), std::string::npos) << msg;
}

TEST(Pt2Errors, NotATorchExportArchive) {
  const std::string bytes = read_file(kDir / "cond" / "model.pt2");
  const std::string edited = rewrite(bytes, [](const std::string& n, std::string b) -> std::optional<std::string> {
    return n.ends_with("/archive_format") ? std::string("torchscript") : b;
  });
  EXPECT_NE(load_error<IoError>(edited).find("archive_format is 'torchscript'"), std::string::npos);
  const std::string no_version = rewrite(bytes, [](const std::string& n, std::string b) -> std::optional<std::string> {
    return n.ends_with("/archive_version") ? std::string("7") : b;
  });
  EXPECT_NE(load_error<IoError>(no_version).find("archive_version '7' is not supported (supported: 0)"),
            std::string::npos);
}

TEST(Pt2Errors, WeightOfTheWrongSize) {
  const std::string bytes = read_file(kDir / "buffer_mutation" / "model.pt2");
  const std::string edited = rewrite(bytes, [](const std::string& n, std::string b) -> std::optional<std::string> {
    return n.ends_with("data/weights/weight_0") ? b.substr(0, 8) : b;
  });
  const std::string msg = load_error<IoError>(edited);
  EXPECT_NE(msg.find("holds 8 bytes"), std::string::npos) << msg;
}

}  // namespace
}  // namespace ingot

namespace ingot {
namespace {

// ATen ops ingot's registry lacks, run through their adapters (aten_ops.cpp) on small
// inputs with known results (the architectures that need them — Gemma's type_as,
// Phi-3's reciprocal / max, Gemma 2's where.ScalarOther — were checked against torch).
std::vector<float> values(const Tensor& t) {
  const Tensor c = contiguous(to(t, DType::F32));
  return std::vector<float>(c.data<float>(), c.data<float>() + c.numel());
}
Tensor aten(const char* target, std::vector<pt2::NamedValue> args) {
  const auto op = pt2::parse_target(target);
  EXPECT_TRUE(op && pt2::is_supported(*op)) << target;
  return pt2::call_aten(*op, args).at(0).value.tensor();
}
pt2::NamedValue arg(const char* name, Value v) { return {name, pt2::PValue{std::move(v), {}, {}}}; }

TEST(Pt2Aten, AdaptersComputeAtensResults) {
  const Tensor x = Tensor::from_vector<float>({1, -2, 4, 0.5f}, {2, 2});
  EXPECT_EQ(values(aten("torch.ops.aten.reciprocal.default", {arg("self", x)})),
            (std::vector<float>{1, -0.5f, 0.25f, 2}));
  EXPECT_EQ(values(aten("torch.ops.aten.max.default", {arg("self", x)})), (std::vector<float>{4}));
  EXPECT_EQ(values(aten("torch.ops.aten.min.default", {arg("self", x)})), (std::vector<float>{-2}));
  const Tensor i = Tensor::from_vector<int64_t>({3, 1}, {2});
  EXPECT_EQ(aten("torch.ops.aten.type_as.default", {arg("self", i), arg("other", x)}).dtype(), DType::F32);
  const Tensor cond = Tensor::from_vector<bool>({true, false, false, true}, {2, 2});
  EXPECT_EQ(values(aten("torch.ops.aten.where.ScalarOther", {arg("condition", cond), arg("self", x), arg("other", 7.0)})),
            (std::vector<float>{1, 7, 7, 0.5f}));
  // x[[1, 0, 1]] and x[:, [1]]: advanced indexing with a linear index.
  const Tensor rows = Tensor::from_vector<int64_t>({1, 0, -1}, {3});
  EXPECT_EQ(values(aten("torch.ops.aten.index.Tensor", {arg("self", x), arg("indices", TensorList{rows})})),
            (std::vector<float>{4, 0.5f, 1, -2, 4, 0.5f}));
  const Tensor col = Tensor::from_vector<int64_t>({1}, {1});
  EXPECT_EQ(values(aten("torch.ops.aten.index.Tensor", {arg("self", x), arg("indices", TensorList{Tensor(), col})})),
            (std::vector<float>{-2, 0.5f}));
  // diff along the last dim with a prepended column.
  const Tensor pre = Tensor::from_vector<float>({0, 0}, {2, 1});
  EXPECT_EQ(values(aten("torch.ops.aten.diff.default", {arg("self", x), arg("n", int64_t(1)), arg("dim", int64_t(-1)),
                                                       arg("prepend", pre)})),
            (std::vector<float>{1, -3, 4, -3.5f}));
  // An argument ingot's schema does not have, with a value that would matter, is refused.
  EXPECT_THROW(aten("torch.ops.aten.relu.default", {arg("self", x), arg("inplace_hint", true)}), NotSupportedError);
}

}  // namespace
}  // namespace ingot
