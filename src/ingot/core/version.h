// The ingot version: the one number the C++ library, the archives it writes and the
// Python package report. It comes from project(... VERSION x.y.z) in the top-level
// CMakeLists.txt (passed to version.cpp only, as INGOT_VERSION_STRING); the Python
// package's metadata reads the same line (python/pyproject.toml).
#pragma once

namespace ingot {

// "0.1.0"
const char* version();

}  // namespace ingot
