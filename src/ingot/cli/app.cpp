#include "ingot/cli/app.h"

#include <fmt/format.h>

#include <algorithm>

#include "ingot/core/error.h"

namespace ingot::cli {

namespace {

size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = up;
    }
  }
  return row[b.size()];
}

// "--max-new-tokens=5" -> "--max-new-tokens".
std::string option_name(const std::string& arg) {
  return arg.substr(0, arg.find('='));
}

}  // namespace

std::vector<std::string> closest_options(const CLI::App& app, const std::string& unknown) {
  const std::string name = option_name(unknown);
  std::vector<std::pair<size_t, std::string>> scored;
  for (const CLI::Option* o : app.get_options()) {
    for (const std::string& long_name : o->get_lnames()) {
      const std::string candidate = "--" + long_name;
      const size_t d = edit_distance(name, candidate);
      const bool prefix = name.size() > 3 && candidate.rfind(name, 0) == 0;
      if (d <= 3 || prefix) scored.emplace_back(prefix ? 0 : d, candidate);
    }
  }
  std::sort(scored.begin(), scored.end());
  std::vector<std::string> out;
  for (const auto& [d, candidate] : scored) out.push_back(candidate);
  return out;
}

std::string closest_word(const std::string& word, const std::vector<std::string>& known) {
  std::string best;
  size_t best_d = std::max<size_t>(2, word.size() / 3) + 1;
  for (const std::string& k : known) {
    const size_t d = edit_distance(word, k);
    if (d < best_d) best_d = d, best = k;
  }
  return best;
}

std::pair<std::string, std::string> parse_input_spec(const std::string& spec,
                                                     const std::string& command) {
  const auto eq = spec.find('=');
  INGOT_CHECK(eq != std::string::npos && eq > 0 && eq + 1 < spec.size(), ValueError,
              "[{}] --input '{}' must be NAME=FILE.npy", command, spec);
  return {spec.substr(0, eq), spec.substr(eq + 1)};
}

bool parse(CLI::App& app, int argc, char** argv) {
  // CLI11 reads a vector of arguments in reverse order.
  std::vector<std::string> args(argv, argv + argc);
  std::reverse(args.begin(), args.end());
  const std::string usage = fmt::format("see '{} --help'", app.get_name());
  app.get_formatter()->column_width(34);
  try {
    app.parse(args);
    return true;
  } catch (const CLI::CallForHelp&) {
    std::printf("%s", app.help().c_str());
    return false;
  } catch (const CLI::ParseError& e) {
    // An argument nobody took explains the failure best (a misspelt option also makes a
    // required one look missing): name it, with the closest option.
    const std::vector<std::string> left = app.remaining();
    if (!left.empty() && !left.front().empty() && left.front()[0] == '-') {
      const std::vector<std::string> close = closest_options(app, left.front());
      INGOT_THROW(ValueError, "[{}] unknown option '{}'{}; {}", app.get_name(), left.front(),
                  close.empty() ? std::string() : fmt::format(" (did you mean {}?)", close.front()),
                  usage);
    }
    if (!left.empty()) {
      INGOT_THROW(ValueError, "[{}] unexpected argument '{}'; {}", app.get_name(), left.front(),
                  usage);
    }
    INGOT_THROW(ValueError, "[{}] {}; {}", app.get_name(), e.what(), usage);
  }
}

}  // namespace ingot::cli
