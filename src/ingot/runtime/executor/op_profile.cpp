#include "ingot/runtime/executor/op_profile.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <vector>

namespace ingot::runtime {

namespace {

struct Row {
  double seconds = 0;
  long calls = 0;
};

struct Profile {
  std::mutex mutex;
  std::map<std::string, Row> rows;
  ~Profile() {
    std::vector<std::pair<std::string, Row>> sorted(rows.begin(), rows.end());
    std::sort(sorted.begin(), sorted.end(),
              [](const auto& a, const auto& b) { return a.second.seconds > b.second.seconds; });
    double total = 0;
    for (const auto& [label, r] : sorted) total += r.seconds;
    std::fprintf(stderr, "\n[ingot op profile] %.1f ms in planned kernels\n", total * 1e3);
    std::fprintf(stderr, "%10s %8s %10s %6s  %s\n", "total ms", "calls", "us/call", "share", "op");
    for (const auto& [label, r] : sorted) {
      std::fprintf(stderr, "%10.1f %8ld %10.1f %5.1f%%  %s\n", r.seconds * 1e3, r.calls,
                   r.seconds * 1e6 / double(r.calls), 100 * r.seconds / total, label.c_str());
    }
  }
};

Profile& profile() {
  static Profile p;
  return p;
}

}  // namespace

bool op_profile_enabled() {
  static const bool on = [] {
    const char* env = std::getenv("INGOT_OP_PROFILE");
    return env && std::string(env) != "0";
  }();
  return on;
}

void op_profile_add(const std::string& label, double seconds) {
  Profile& p = profile();
  std::lock_guard<std::mutex> lock(p.mutex);
  Row& r = p.rows[label];
  r.seconds += seconds;
  ++r.calls;
}

}  // namespace ingot::runtime
