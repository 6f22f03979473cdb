// Entry points of the `ingot` subcommands; each returns the process exit code.
#pragma once

namespace ingot::cli {

int run_demo(int argc, char** argv);

}  // namespace ingot::cli
