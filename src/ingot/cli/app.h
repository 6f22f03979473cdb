// The argument parsing every `ingot` subcommand shares (CLI11): `--help` prints the
// command's options, and bad arguments become a ValueError whose message names the
// option at fault, says what is wrong, suggests the closest option for a misspelt one
// ("did you mean --max-new-tokens?") and ends with the command's usage line.
//
//   CLI::App app{"trace a model and write an artifact", "ingot export"};
//   app.add_option("-o,--output", output, "where to write")->required();
//   if (!parse(app, argc, argv)) return 0;   // --help was printed
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <utility>
#include <vector>

namespace ingot::cli {

// Parses argv (the arguments after the command name). Returns false when --help was
// asked for (the help is printed on stdout); throws ValueError on bad arguments.
bool parse(CLI::App& app, int argc, char** argv);

// The option names of `app` closest to `unknown` by edit distance (at most 3 edits, or a
// prefix match), best first: what "did you mean" offers.
std::vector<std::string> closest_options(const CLI::App& app, const std::string& unknown);

// "NAME=FILE.npy" -> {NAME, FILE.npy}; ValueError naming `command` and the spec otherwise.
std::pair<std::string, std::string> parse_input_spec(const std::string& spec,
                                                     const std::string& command);

// The closest of `known` to `word` (edit distance <= max(2, |word| / 3)), or "".
std::string closest_word(const std::string& word, const std::vector<std::string>& known);

}  // namespace ingot::cli
