// See version.h. INGOT_VERSION_STRING is defined for this file only (CMakeLists.txt), so
// a version bump recompiles one file.
#include "ingot/core/version.h"

#ifndef INGOT_VERSION_STRING
#error "INGOT_VERSION_STRING must be defined by the build (top-level CMakeLists.txt)"
#endif

namespace ingot {

const char* version() { return INGOT_VERSION_STRING; }

}  // namespace ingot
