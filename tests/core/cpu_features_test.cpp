// INGOT_ISA's tables (isa_table_features): each caps the detected features to one CPU
// generation's kernel table, never turns on what the CPU lacks, and a wrong name is an
// error naming the accepted ones.
#include "ingot/core/cpu_features.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "ingot/core/error.h"

namespace ingot {
namespace {

CpuFeatures everything() {
  CpuFeatures f;
  f.avx2 = f.fma = f.f16c = true;
  f.avx512f = f.avx512bw = f.avx512vl = f.avx512dq = true;
  f.avx512bf16 = f.avx512vnni = f.avxvnni = true;
  return f;
}

TEST(CpuFeatures, TablesCapTheDetectedFeatures) {
  const CpuFeatures all = everything();
  const CpuFeatures native = isa_table_features(all, "native");
  EXPECT_TRUE(native.avx512_kernels() && native.avx512vnni && native.avxvnni && native.avx512bf16);
  EXPECT_TRUE(isa_table_features(all, "").avx512bf16);

  const CpuFeatures scalar = isa_table_features(all, "scalar");
  EXPECT_FALSE(scalar.avx2_kernels() || scalar.avx512_kernels() || scalar.avxvnni);

  const CpuFeatures avx2 = isa_table_features(all, "avx2");
  EXPECT_TRUE(avx2.avx2_kernels());
  EXPECT_FALSE(avx2.avx512_kernels() || avx2.avx512vnni || avx2.avxvnni || avx2.avx512bf16);

  const CpuFeatures avxvnni = isa_table_features(all, "avxvnni");
  EXPECT_TRUE(avxvnni.avx2_kernels() && avxvnni.avxvnni);
  EXPECT_FALSE(avxvnni.avx512_kernels() || avxvnni.avx512vnni);

  const CpuFeatures avx512 = isa_table_features(all, "avx512");
  EXPECT_TRUE(avx512.avx512_kernels());
  EXPECT_FALSE(avx512.avx512vnni || avx512.avxvnni || avx512.avx512bf16);

  const CpuFeatures vnni = isa_table_features(all, "avx512vnni");
  EXPECT_TRUE(vnni.avx512_kernels() && vnni.avx512vnni);
  EXPECT_FALSE(vnni.avxvnni || vnni.avx512bf16);
}

TEST(CpuFeatures, TablesNeverAddFeatures) {
  CpuFeatures zen3;  // AVX2 + FMA + F16C only
  zen3.avx2 = zen3.fma = zen3.f16c = true;
  for (const char* isa : {"avxvnni", "avx512", "avx512vnni", "native"}) {
    const CpuFeatures f = isa_table_features(zen3, isa);
    EXPECT_TRUE(f.avx2_kernels()) << isa;
    EXPECT_FALSE(f.avx512f || f.avx512vnni || f.avxvnni) << isa;
  }
}

TEST(CpuFeatures, UnknownTableIsAnError) {
  try {
    isa_table_features(everything(), "avx3");
    FAIL() << "no error";
  } catch (const ValueError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("[cpu_features] INGOT_ISA"), std::string::npos) << what;
    EXPECT_NE(what.find("avx3"), std::string::npos) << what;
    EXPECT_NE(what.find("avxvnni"), std::string::npos) << what;
  }
}

// What kernels see is the detected set capped by INGOT_ISA (unset: equal).
TEST(CpuFeatures, ActiveIsDetectedCapped) {
  const CpuFeatures& d = detected_cpu_features();
  const CpuFeatures& a = cpu_features();
  EXPECT_LE(a.avx2_kernels(), d.avx2_kernels());
  EXPECT_LE(a.avx512_kernels(), d.avx512_kernels());
  EXPECT_LE(a.avxvnni, d.avxvnni);
  EXPECT_LE(a.avx512vnni, d.avx512vnni);
  const char* env = std::getenv("INGOT_ISA");
  if (!env || !*env) {
    EXPECT_EQ(a.avx512_kernels(), d.avx512_kernels());
    EXPECT_EQ(a.avxvnni, d.avxvnni);
  }
}

}  // namespace
}  // namespace ingot
