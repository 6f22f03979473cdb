// Entry points of the `ingot` subcommands; each returns the process exit code and
// throws ingot::Error with a message for the user on bad input.
#pragma once

namespace ingot::cli {

int run_demo(int argc, char** argv);
int run_info(int argc, char** argv);
int run_run(int argc, char** argv);
int run_export(int argc, char** argv);
int run_inspect(int argc, char** argv);
int run_generate(int argc, char** argv);

}  // namespace ingot::cli
