#include "driver/OptionTable.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>

#include "driver/SchemeChoice.h"
#include "microkernel/Contraction.h"
#include "microkernel/Scheme.h"
#include "support/TextFile.h"

namespace tessel::driver {

namespace {

using Options = CompileOptions;
const Options kDefaults;

// A row whose value is one of `names`, each naming one setting.
template <typename T>
OptionRow choiceRow(std::string key, std::vector<std::pair<std::string, T>> names, T Options::*field,
                    std::string help) {
  OptionRow row;
  row.key = key;
  for (const auto& [name, value] : names) {
    row.choices.push_back(name);
    row.valueSyntax += (row.valueSyntax.empty() ? "" : "|") + name;
    if (value != kDefaults.*field && row.example.empty()) row.example = name;
  }
  row.help = std::move(help);
  row.parse = [key, names, field](Options& o, const std::string& value, const std::string&) {
    for (const auto& [name, setting] : names)
      if (value == name) {
        o.*field = setting;
        return;
      }
    std::string expected;
    for (size_t i = 0; i < names.size(); ++i)
      expected += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i].first;
    userError("bad " + key + " '" + value + "' (expected " + expected + ")");
  };
  row.print = [names, field](const Options& o) -> std::optional<std::string> {
    if (o.*field == kDefaults.*field) return std::nullopt;
    for (const auto& [name, setting] : names)
      if (setting == o.*field) return name;
    return std::nullopt;
  };
  return row;
}

// "@FILE" or, where `bare` allows, "FILE": the path.
std::string pathOf(const std::string& value) {
  return !value.empty() && value[0] == '@' ? value.substr(1) : value;
}

double secondsValue(const std::string& value, const std::string& key) {
  double seconds = -1;
  const char* end = value.data() + value.size();
  auto [stop, error] = std::from_chars(value.data(), end, seconds);
  if (value.empty() || error != std::errc() || stop != end || !(seconds >= 0 && seconds <= 1e6))
    userError("bad " + key + " '" + value + "' (expected seconds from 0 to 1000000, such as 2.5)");
  return seconds;
}

std::string secondsText(std::chrono::milliseconds ms) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", static_cast<double>(ms.count()) / 1000);
  return text;
}

OptionRow timeLimitRow(std::string key, std::chrono::milliseconds Options::*field, std::string help) {
  OptionRow row;
  row.key = key;
  row.valueSyntax = "SECONDS";
  row.help = std::move(help);
  row.example = "2.5";
  row.parse = [key, field](Options& o, const std::string& value, const std::string&) {
    o.*field = std::chrono::milliseconds(std::llround(secondsValue(value, key) * 1000));
  };
  row.print = [field](const Options& o) -> std::optional<std::string> {
    if (o.*field == kDefaults.*field) return std::nullopt;
    return secondsText(o.*field);
  };
  return row;
}

std::vector<OptionRow> buildRows() {
  std::vector<OptionRow> rows;
  rows.push_back(choiceRow<Fusion>(
      "fusion",
      {{"none", Fusion::None},
       {"min", Fusion::Min},
       {"smart", Fusion::Smart},
       {"max", Fusion::Max},
       {"basteln", Fusion::Basteln}},
      &Options::fusion,
      "fusion strategy: none (each statement its own loop nests, in source order), min, smart, max, or "
      "basteln "
      "(default: nests grouped along quasi-identity dependences, then producers recomputed inside the tiles "
      "of their consumers)"));
  {
    OptionRow row;
    row.key = "basteln-redundancy";
    row.aliases = {"redundancy"};
    row.valueSyntax = "PERCENT";
    row.help =
        "under --fusion basteln: the largest share of a producer's executions that may be recomputations, "
        "e.g. 40% (default); 100% fuses whatever it costs";
    row.example = "50%";
    row.parse = [](Options& o, const std::string& value, const std::string&) {
      o.bastelnRedundancy = parsePercent(value, "basteln-redundancy");
    };
    row.print = [](const Options& o) -> std::optional<std::string> {
      if (o.bastelnRedundancy == kDefaults.bastelnRedundancy) return std::nullopt;
      return percentText(o.bastelnRedundancy);
    };
    rows.push_back(std::move(row));
  }
  rows.push_back(choiceRow<Options::Scheduler>(
      "scheduler", {{"isl", Options::Scheduler::Isl}, {"tessel", Options::Scheduler::Tessel}},
      &Options::scheduler,
      "isl (default): isl's scheduler; tessel: Tessel's own Pluto-style scheduler, which accepts "
      "--schedule-constraints (it falls back to isl's, with a warning, where it cannot finish)"));
  {
    OptionRow row;
    row.key = "schedule-constraints";
    row.aliases = {"constraints"};
    row.valueSyntax = "auto|FILE";
    row.help =
        "a constraint tree file steering --scheduler tessel: per schedule row, alternative affine "
        "constraints "
        "on the schedule coefficients (see docs/user-guide.md, 'Constraint trees'); 'auto': the tree of "
        "paper 004's vectorization "
        "scenarios for this program and machine";
    row.example = "auto";
    row.parse = [](Options& o, const std::string& value, const std::string&) {
      if (value == "auto") {
        o.scheduleConstraints = Options::ConstraintsFile{"auto", "", true};
        return;
      }
      std::string path = pathOf(value);
      o.scheduleConstraints = Options::ConstraintsFile{path, readTextFile(path)};
    };
    row.print = [](const Options& o) -> std::optional<std::string> {
      if (!o.scheduleConstraints) return std::nullopt;
      return o.scheduleConstraints->automatic ? "auto" : o.scheduleConstraints->origin;
    };
    rows.push_back(std::move(row));
  }
  {
    OptionRow row;
    row.key = "schedule";
    row.valueSyntax = "FILE";
    row.help =
        "use this schedule tree (isl YAML, e.g. edited --dump-after output) instead of the scheduler's; it "
        "is "
        "checked against the dependences";
    row.example = "@";
    row.parse = [](Options& o, const std::string& value, const std::string&) {
      std::string path = pathOf(value);
      o.schedule = Options::ScheduleFile{path, readTextFile(path)};
    };
    row.print = [](const Options& o) -> std::optional<std::string> {
      if (!o.schedule) return std::nullopt;
      return o.schedule->origin;
    };
    rows.push_back(std::move(row));
  }
  rows.push_back(choiceRow<bool>(
      "tiling", {{"auto", true}, {"off", false}}, &Options::autoTiling,
      "auto: Auto Tiling chooses tile sizes for the caches; off: no tiling except what --tiles asks"));
  rows.push_back(
      choiceRow<bool>("vectorize", {{"on", true}, {"off", false}}, &Options::vectorize,
                      "on: SIMD code (AVX-512 or AVX2) for the loops that allow it; off: scalar loops only"));
  rows.push_back(choiceRow<bool>(
      "transposes", {{"registers", true}, {"off", false}}, &Options::registerTransposes,
      "registers: a vector loop whose read is strided along it but contiguous along the loop above runs in "
      "blocks of the vector width, the read transposed through registers; off: such loops stay scalar"));
  rows.push_back(choiceRow<Options::Promotion>(
      "promote",
      {{"auto", Options::Promotion::Auto},
       {"all", Options::Promotion::All},
       {"off", Options::Promotion::Off}},
      &Options::promotion,
      "auto: copy reused operand tiles into contiguous per-thread buffers (packing) where the cost model "
      "expects a gain; all: wherever legal; off: read operands in place"));
  rows.push_back(choiceRow<Options::StreamingStores>(
      "stream-stores",
      {{"auto", Options::StreamingStores::Auto},
       {"always", Options::StreamingStores::Always},
       {"off", Options::StreamingStores::Off}},
      &Options::streamingStores,
      "auto: non-temporal stores for outputs at least as large as the caches that the kernel does not read "
      "back; always: for every such output; off: never"));
  {
    OptionRow row;
    row.key = "inline";
    row.valueSyntax = "on|cheap|off";
    row.choices = {"on", "cheap", "off"};
    row.help =
        "cheap (default): inline temporaries that a few cheap operations compute from the inputs and that "
        "are "
        "larger than the private caches, even where read several times; on: also inline elementwise "
        "temporaries whose elements are each read once (paper 001 Alg. 5); off: keep them all";
    row.example = "on";
    row.parse = [](Options& o, const std::string& value, const std::string&) {
      if (value != "on" && value != "cheap" && value != "off")
        userError("bad inline '" + value + "' (expected on, cheap or off)");
      o.inlineElementwise = value == "on";
      o.recomputeCheap = value != "off";
    };
    row.print = [](const Options& o) -> std::optional<std::string> {
      if (o.inlineElementwise) return "on";
      if (!o.recomputeCheap) return "off";
      return std::nullopt;
    };
    rows.push_back(std::move(row));
  }
  {
    OptionRow row;
    row.key = "tiles";
    row.valueSyntax = "POLICY|@FILE";
    row.help =
        "tiling policy, e.g. 'S_1: 64@L2/32@L1, 64@L2/32@L1, 16@L1' (or @FILE); see docs/user-guide.md";
    row.spansWords = true;
    row.example = "S_1: 64@L2/32@L1, 16@L1; S_2: 8@L1";
    row.parse = [](Options& o, const std::string& value, const std::string& origin) {
      bool fromFile = !value.empty() && value[0] == '@';
      std::string file = fromFile ? value.substr(1) : origin;
      o.tiles = tile::parseTilePolicy(fromFile ? readTextFile(file) : value, file);
    };
    row.print = [](const Options& o) -> std::optional<std::string> {
      if (o.tiles.empty()) return std::nullopt;
      std::string policy = o.tiles.toString();
      std::replace(policy.begin(), policy.end(), '\n', ';');
      return policy.substr(0, policy.size() - 1);
    };
    rows.push_back(std::move(row));
  }
  {
    OptionRow row;
    row.key = "scheme";
    row.valueSyntax = "auto|none|search|SCHEME|@FILE";
    row.help =
        "implement the program's contraction (O(...) +=! A(...) * B(...)) with this TTILE scheme, e.g. 'R_k, "
        "R_h, R_w, T_{64,c}, U_{4,h}, U_{2,k}, V_k', prefixed with 'TENSOR:' when the program has several "
        "(or "
        "@FILE); 'search' (or 'TENSOR: search') measures the best-modelled schemes of this machine's "
        "micro-kernels against the compiler's own code and keeps the fastest (cached); 'auto' (default): the "
        "best-modelled scheme, unmeasured, for a 3x3 or 1x1 convolution, else the compiler's own code; "
        "'none': the compiler's own code; see docs/user-guide.md";
    row.spansWords = true;
    row.example = "O: R_m, R_n, R_k, V_n";
    row.parse = [](Options& o, const std::string& value, const std::string& origin) {
      bool fromFile = !value.empty() && value[0] == '@';
      std::string from = fromFile ? value.substr(1) : origin;
      std::string text = fromFile ? readTextFile(from) : value;
      // A file's trailing newline is not part of the scheme.
      while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.pop_back();
      // The syntax now, where the user wrote it; the tensors when compiling.
      if (!asksForSearch(text) && !asksForModelChoice(text) && !asksForNoScheme(text))
        microkernel::parseScheme(text, from, microkernel::splitSelection(text).second);
      o.scheme = {from, text};
    };
    row.print = [](const Options& o) -> std::optional<std::string> {
      if (o.scheme.text == kDefaults.scheme.text) return std::nullopt;
      return o.scheme.text;
    };
    rows.push_back(std::move(row));
  }
  {
    OptionRow row;
    row.key = "scheme-budget";
    row.valueSyntax = "N";
    row.help = "under --scheme search: schemes measured (default 200)";
    row.example = "12";
    row.parse = [](Options& o, const std::string& value, const std::string&) {
      int budget = 0;
      const char* end = value.data() + value.size();
      auto [stop, error] = std::from_chars(value.data(), end, budget);
      if (value.empty() || error != std::errc() || stop != end || budget < 1 || budget > 100000)
        userError("bad scheme-budget '" + value + "' (expected a count from 1 to 100000)");
      o.schemeBudget = budget;
    };
    row.print = [](const Options& o) -> std::optional<std::string> {
      if (o.schemeBudget == kDefaults.schemeBudget) return std::nullopt;
      return std::to_string(o.schemeBudget);
    };
    rows.push_back(std::move(row));
  }
  rows.push_back(choiceRow<Options::SchemeClasses>(
      "scheme-classes",
      {{"model", Options::SchemeClasses::Model}, {"measure", Options::SchemeClasses::Measure}},
      &Options::schemeClasses,
      "under --scheme search: the micro-kernel classes it composes from. model (default): this machine's "
      "table (tessel microbench) as it is, else classes from the register budget alone; measure: families of "
      "micro-kernels the contraction uses and the table lacks are measured first and stored, about 30 s to 2 "
      "min once per machine"));
  {
    OptionRow row;
    row.key = "constant-inputs";
    row.valueSyntax = "all|NAME,NAME";
    row.help =
        "inputs that keep their values from call to call (weights): 'all' or names, as in 'Wt,B'. An input a "
        "scheme reads in its own layout (L_X) is then laid out once, untimed, when the kernel is timed (run "
        "--time, bench, --scheme search); otherwise each timed call includes the layout transform";
    row.example = "Wt+B";
    row.parse = [](Options& o, const std::string& value, const std::string&) {
      o.constantInputs = parseConstantInputs(value);
    };
    row.print = [](const Options& o) -> std::optional<std::string> {
      if (o.constantInputs.empty()) return std::nullopt;
      return o.constantInputs.toString();
    };
    rows.push_back(std::move(row));
  }
  rows.push_back(
      timeLimitRow("schedule-time-limit", &Options::scheduleTimeLimit,
                   "seconds the scheduler may spend per attempt before it falls back to less fusion, "
                   "with a warning (0: no limit; default 10)"));
  rows.push_back(
      timeLimitRow("fusion-check-time-limit", &Options::fusionCheckTimeLimit,
                   "seconds basteln's dataflow check may spend per fusion before it refuses that "
                   "fusion (0: no limit; default 30; an operation quota usually stops a check first)"));
  return rows;
}

}  // namespace

const std::vector<OptionRow>& compileOptionRows() {
  static const std::vector<OptionRow> rows = buildRows();  // built once, never changed
  return rows;
}

const OptionRow* compileOptionRow(const std::string& key) {
  for (const auto& row : compileOptionRows())
    if (row.key == key || std::find(row.aliases.begin(), row.aliases.end(), key) != row.aliases.end())
      return &row;
  return nullptr;
}

std::string compileOptionKeys() {
  std::string keys;
  for (const auto& row : compileOptionRows()) keys += (keys.empty() ? "" : ", ") + row.key;
  return keys;
}

std::string CompileOptions::toString() const {
  std::string text;
  for (const auto& row : compileOptionRows())
    if (std::optional<std::string> value = row.print(*this))
      text += (text.empty() ? "" : " ") + row.key + "=" + *value;
  return text;
}

}  // namespace tessel::driver
