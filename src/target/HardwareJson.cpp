#include "target/HardwareJson.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>
#include <variant>
#include <vector>

#include "support/JsonText.h"
#include "tessel/error.h"
#include "tessel/te.h"

namespace tessel::target {

namespace {

using Json = nlohmann::ordered_json;  // keeps the file's order (first unknown field) and ours when printing

Json levelToJson(const MemoryLevel& m) {
  Json j;
  j["name"] = m.name;
  j["capacityBytes"] = m.capacityBytes;
  j["lineBytes"] = m.lineBytes;
  j["sharedBy"] = m.sharedBy;
  j["bandwidthBytesPerS"] = m.bandwidthBytesPerS;
  j["bandwidthPerCoreBytesPerS"] = m.bandwidthPerCoreBytesPerS;
  j["managed"] = m.managed;
  j["source"] = m.source;
  j["bandwidthSource"] = m.bandwidthSource;
  return j;
}

Json unitToJson(const ComputeUnit& u) {
  Json j;
  j["name"] = u.name;
  j["vectorBits"] = u.vectorBits;
  j["registers"] = u.registers;
  j["fmaPerCycle"] = u.fmaPerCycle;
  j["dtypes"] = u.dtypes;
  j["matrix"] = u.matrix;
  return j;
}

// ---- Locating a JSON path in the text, for error positions ----------------
// nlohmann 3.11 keeps no positions for values, so the (already valid) text is
// scanned again along the path.

using PathStep = std::variant<std::string, size_t>;  // member name | array index
using JsonPath = std::vector<PathStep>;

std::string pathString(const JsonPath& path) {
  std::string s;
  for (const PathStep& step : path) {
    if (const auto* key = std::get_if<std::string>(&step))
      s += (s.empty() ? "" : ".") + *key;
    else
      s += "[" + std::to_string(std::get<size_t>(step)) + "]";
  }
  return s.empty() ? "the top level" : s;
}

JsonPath child(JsonPath path, PathStep step) {
  path.push_back(std::move(step));
  return path;
}

class TextScanner {
 public:
  explicit TextScanner(const std::string& text) : text_(text) {}

  // The offset where the value at `path` starts or, with `atKey`, where the
  // name of its member starts; npos when the path is not in the text.
  size_t locate(const JsonPath& path, bool atKey) {
    pos_ = 0;
    skipSpace();
    for (size_t k = 0; k < path.size(); ++k) {
      bool last = k + 1 == path.size();
      if (const auto* key = std::get_if<std::string>(&path[k])) {
        size_t keyStart = findMember(*key);
        if (keyStart == std::string::npos) return keyStart;
        if (last && atKey) return keyStart;
      } else if (!findElement(std::get<size_t>(path[k]))) {
        return std::string::npos;
      }
    }
    return pos_;
  }

 private:
  bool at(char c) const { return pos_ < text_.size() && text_[pos_] == c; }

  void skipSpace() {
    while (pos_ < text_.size() && std::strchr(" \t\r\n", text_[pos_]) && text_[pos_] != '\0') ++pos_;
  }

  void skipString() {
    ++pos_;  // opening quote
    while (pos_ < text_.size() && text_[pos_] != '"') pos_ += text_[pos_] == '\\' ? 2 : 1;
    ++pos_;  // closing quote
  }

  void skipValue() {
    skipSpace();
    if (at('"')) return skipString();
    if (at('{') || at('[')) {
      int depth = 0;
      while (pos_ < text_.size()) {
        char c = text_[pos_];
        if (c == '"') {
          skipString();
          continue;
        }
        ++pos_;
        if (c == '{' || c == '[') ++depth;
        if ((c == '}' || c == ']') && --depth == 0) return;
      }
      return;
    }
    while (pos_ < text_.size() && !std::strchr(",}] \t\r\n", text_[pos_])) ++pos_;
  }

  void skipComma() {
    skipSpace();
    if (at(',')) ++pos_;
    skipSpace();
  }

  // Positions pos_ on the value of member `key` of the object at pos_;
  // returns where its name starts.
  size_t findMember(const std::string& key) {
    if (!at('{')) return std::string::npos;
    ++pos_;
    skipSpace();
    while (pos_ < text_.size() && !at('}')) {
      size_t keyStart = pos_;
      skipString();
      std::string name = Json::parse(text_.substr(keyStart, pos_ - keyStart)).get<std::string>();
      skipSpace();
      ++pos_;  // ':'
      skipSpace();
      if (name == key) return keyStart;
      skipValue();
      skipComma();
    }
    return std::string::npos;
  }

  bool findElement(size_t index) {
    if (!at('[')) return false;
    ++pos_;
    skipSpace();
    for (size_t i = 0; pos_ < text_.size() && !at(']'); ++i) {
      if (i == index) return true;
      skipValue();
      skipComma();
    }
    return false;
  }

  const std::string& text_;
  size_t pos_ = 0;
};

// ---- Reading -----------------------------------------------------------------

class DescriptionReader {
 public:
  DescriptionReader(const std::string& text, const std::string& origin) : text_(text), origin_(origin) {}

  Hardware read(const Json& root) {
    const JsonPath top;
    expectObject(root, top);
    rejectUnknown(root, top,
                  {"name", "kind", "isa", "cores", "frequencyHz", "memory", "units", "peakF32FlopsPerCore",
                   "peakF32Flops", "peakSource"});
    Hardware hw;
    hw.name = string(root, top, "name", Required::Yes);
    hw.kind = string(root, top, "kind", Required::No, hw.kind);
    if (hw.kind != "cpu" && hw.kind != "cuda" && hw.kind != "npu")
      fail(child(top, "kind"), "unknown kind '" + hw.kind + "' (expected cpu, cuda or npu)");
    hw.isa = stringList(root, top, "isa", hw.isa);
    hw.cores = static_cast<int>(integer(root, top, "cores", Required::Yes, 1, 1));
    hw.frequencyHz = number(root, top, "frequencyHz", hw.frequencyHz);
    hw.memory = levels(root, top);
    if (const Json* units = member(root, top, "units", Required::No)) {
      JsonPath unitsPath = child(top, "units");
      expectArray(*units, unitsPath);
      for (size_t i = 0; i < units->size(); ++i) hw.units.push_back(unit((*units)[i], child(unitsPath, i)));
    }
    hw.peakF32FlopsPerCore = number(root, top, "peakF32FlopsPerCore", hw.peakF32FlopsPerCore);
    hw.peakF32Flops = number(root, top, "peakF32Flops", hw.peakF32Flops);
    hw.peakSource = string(root, top, "peakSource", Required::No, hw.peakSource);
    if (!hw.peakSource.empty() && hw.peakSource != "computed" && hw.peakSource != "measured" &&
        hw.peakSource != "configured")
      fail(child(top, "peakSource"),
           "unknown peak source '" + hw.peakSource + "' (expected computed, measured or configured)");
    return hw;
  }

 private:
  enum class Required { No, Yes };

  [[noreturn]] void fail(const JsonPath& path, const std::string& reason, bool atKey = false) const {
    size_t offset = TextScanner(text_).locate(path, atKey);
    SourceLoc loc =
        offset == std::string::npos ? SourceLoc{origin_, 0, 0} : locationInText(origin_, text_, offset);
    userError(loc, pathString(path) + ": " + reason);
  }

  void expectObject(const Json& j, const JsonPath& path) const {
    if (!j.is_object()) fail(path, std::string("must be an object, not ") + j.type_name());
  }

  void expectArray(const Json& j, const JsonPath& path) const {
    if (!j.is_array()) fail(path, std::string("must be an array, not ") + j.type_name());
  }

  void rejectUnknown(const Json& object, const JsonPath& path, const std::vector<std::string>& known) const {
    for (const auto& [key, value] : object.items()) {
      if (std::find(known.begin(), known.end(), key) != known.end()) continue;
      std::string list;
      for (const std::string& k : known) list += (list.empty() ? "" : ", ") + k;
      fail(child(path, key), "unknown field (expected one of: " + list + ")", /*atKey=*/true);
    }
  }

  const Json* member(const Json& object, const JsonPath& path, const std::string& key,
                     Required required) const {
    auto it = object.find(key);
    if (it != object.end()) return &*it;
    if (required == Required::Yes) fail(path, "missing required field '" + key + "'");
    return nullptr;
  }

  std::string string(const Json& object, const JsonPath& path, const std::string& key, Required required,
                     const std::string& otherwise = {}) const {
    const Json* j = member(object, path, key, required);
    if (!j) return otherwise;
    if (!j->is_string()) fail(child(path, key), std::string("must be a string, not ") + j->type_name());
    return j->get<std::string>();
  }

  std::vector<std::string> stringList(const Json& object, const JsonPath& path, const std::string& key,
                                      const std::vector<std::string>& otherwise) const {
    const Json* j = member(object, path, key, Required::No);
    if (!j) return otherwise;
    JsonPath listPath = child(path, key);
    expectArray(*j, listPath);
    std::vector<std::string> out;
    for (size_t i = 0; i < j->size(); ++i) {
      if (!(*j)[i].is_string())
        fail(child(listPath, i), std::string("must be a string, not ") + (*j)[i].type_name());
      out.push_back((*j)[i].get<std::string>());
    }
    return out;
  }

  // An integer in [minimum, INT_MAX] (sizes and counts in the model are int or int64).
  int64_t integer(const Json& object, const JsonPath& path, const std::string& key, Required required,
                  int64_t otherwise, int64_t minimum,
                  int64_t maximum = std::numeric_limits<int>::max()) const {
    const Json* j = member(object, path, key, required);
    if (!j) return otherwise;
    JsonPath valuePath = child(path, key);
    if (j->is_number_float()) fail(valuePath, "must be an integer (got " + j->dump() + ")");
    if (!j->is_number_integer()) fail(valuePath, std::string("must be an integer, not ") + j->type_name());
    if (j->is_number_unsigned() && j->get<uint64_t>() > static_cast<uint64_t>(maximum))
      fail(valuePath, "is too large (at most " + std::to_string(maximum) + ")");
    int64_t v = j->get<int64_t>();
    if (v < minimum)
      fail(valuePath, (minimum == 0 ? std::string("must not be negative")
                                    : "must be at least " + std::to_string(minimum)) +
                          " (got " + std::to_string(v) + ")");
    if (v > maximum) fail(valuePath, "is too large (at most " + std::to_string(maximum) + ")");
    return v;
  }

  // A finite, non-negative number.
  double number(const Json& object, const JsonPath& path, const std::string& key, double otherwise) const {
    const Json* j = member(object, path, key, Required::No);
    if (!j) return otherwise;
    JsonPath valuePath = child(path, key);
    if (!j->is_number()) fail(valuePath, std::string("must be a number, not ") + j->type_name());
    double v = j->get<double>();
    if (!std::isfinite(v)) fail(valuePath, "must be finite");
    if (v < 0) fail(valuePath, "must not be negative (got " + j->dump() + ")");
    return v;
  }

  bool boolean(const Json& object, const JsonPath& path, const std::string& key, bool otherwise) const {
    const Json* j = member(object, path, key, Required::No);
    if (!j) return otherwise;
    if (!j->is_boolean()) fail(child(path, key), std::string("must be true or false, not ") + j->type_name());
    return j->get<bool>();
  }

  std::vector<MemoryLevel> levels(const Json& root, const JsonPath& top) const {
    const Json* memory = member(root, top, "memory", Required::Yes);
    JsonPath memoryPath = child(top, "memory");
    expectArray(*memory, memoryPath);
    if (memory->empty()) fail(memoryPath, "must list at least one level (DRAM)");
    std::vector<MemoryLevel> out;
    for (size_t i = 0; i < memory->size(); ++i) {
      const Json& j = (*memory)[i];
      JsonPath path = child(memoryPath, i);
      expectObject(j, path);
      rejectUnknown(j, path,
                    {"name", "capacityBytes", "lineBytes", "sharedBy", "bandwidthBytesPerS",
                     "bandwidthPerCoreBytesPerS", "managed", "source", "bandwidthSource"});
      MemoryLevel m;
      m.name = string(j, path, "name", Required::Yes);
      if (m.name.empty()) fail(child(path, "name"), "must not be empty");
      for (const MemoryLevel& earlier : out)
        if (earlier.name == m.name) fail(child(path, "name"), "level '" + m.name + "' is listed twice");
      m.capacityBytes =
          integer(j, path, "capacityBytes", Required::Yes, 0, 0, std::numeric_limits<int64_t>::max());
      m.lineBytes = integer(j, path, "lineBytes", Required::No, m.lineBytes, 1);
      m.sharedBy = static_cast<int>(integer(j, path, "sharedBy", Required::No, m.sharedBy, 1));
      m.bandwidthBytesPerS = number(j, path, "bandwidthBytesPerS", m.bandwidthBytesPerS);
      m.bandwidthPerCoreBytesPerS = number(j, path, "bandwidthPerCoreBytesPerS", m.bandwidthPerCoreBytesPerS);
      // One core cannot draw more than all the level's sharers together.
      if (m.bandwidthBytesPerS > 0 && m.bandwidthPerCoreBytesPerS > m.bandwidthBytesPerS)
        fail(child(path, "bandwidthPerCoreBytesPerS"),
             "one core's bandwidth (" + Json(m.bandwidthPerCoreBytesPerS).dump() +
                 ") exceeds the level's bandwidthBytesPerS for all its sharers (" +
                 Json(m.bandwidthBytesPerS).dump() + ")");
      m.managed = boolean(j, path, "managed", m.managed);
      m.source = string(j, path, "source", Required::No);
      m.bandwidthSource = string(j, path, "bandwidthSource", Required::No);
      checkOrder(out, m, child(path, "capacityBytes"), i + 1 == memory->size());
      out.push_back(std::move(m));
    }
    return out;
  }

  // Capacities never decrease from the fastest level to the slowest; 0
  // (unbounded) only on the last one, DRAM.
  void checkOrder(const std::vector<MemoryLevel>& before, const MemoryLevel& m, const JsonPath& path,
                  bool last) const {
    if (m.capacityBytes == 0) {
      if (!last) fail(path, "0 (unbounded) is only allowed for the last, slowest level (DRAM)");
      return;
    }
    if (before.empty() || m.capacityBytes >= before.back().capacityBytes) return;
    const MemoryLevel& previous = before.back();
    fail(path, "level '" + m.name + "' (" + std::to_string(m.capacityBytes) + " bytes) is smaller than '" +
                   previous.name + "' before it (" + std::to_string(previous.capacityBytes) +
                   " bytes); list levels from the fastest and smallest to the slowest");
  }

  ComputeUnit unit(const Json& j, const JsonPath& path) const {
    expectObject(j, path);
    rejectUnknown(j, path, {"name", "vectorBits", "registers", "fmaPerCycle", "dtypes", "matrix"});
    ComputeUnit u;
    u.name = string(j, path, "name", Required::Yes);
    if (u.name.empty()) fail(child(path, "name"), "must not be empty");
    u.vectorBits = static_cast<int>(integer(j, path, "vectorBits", Required::Yes, 0, 0));
    u.registers = static_cast<int>(integer(j, path, "registers", Required::No, u.registers, 0));
    u.fmaPerCycle = static_cast<int>(integer(j, path, "fmaPerCycle", Required::No, u.fmaPerCycle, 0));
    u.dtypes = stringList(j, path, "dtypes", u.dtypes);
    for (size_t i = 0; i < u.dtypes.size(); ++i)
      if (!te::dtypeFromName(u.dtypes[i]))
        fail(child(child(path, "dtypes"), i), "unknown element type '" + u.dtypes[i] +
                                                  "' (expected f32, f64, f16, bf16, i32, i8, u8 or bool)");
    u.matrix = boolean(j, path, "matrix", u.matrix);
    return u;
  }

  const std::string& text_;
  const std::string& origin_;
};

}  // namespace

std::string toJson(const Hardware& hw) {
  Json j;
  j["name"] = hw.name;
  j["kind"] = hw.kind;
  j["isa"] = hw.isa;
  j["cores"] = hw.cores;
  j["frequencyHz"] = hw.frequencyHz;
  j["memory"] = Json::array();
  for (const MemoryLevel& m : hw.memory) j["memory"].push_back(levelToJson(m));
  j["units"] = Json::array();
  for (const ComputeUnit& u : hw.units) j["units"].push_back(unitToJson(u));
  j["peakF32FlopsPerCore"] = hw.peakF32FlopsPerCore;
  j["peakF32Flops"] = hw.peakF32Flops;
  j["peakSource"] = hw.peakSource;
  // A model string from /proc/cpuinfo is not guaranteed UTF-8: never throw on it.
  return j.dump(2, ' ', false, Json::error_handler_t::replace);
}

Hardware hardwareFromJson(const std::string& text, const std::string& origin) {
  Json root = parseJsonText(text, origin);
  return DescriptionReader(text, origin).read(root);
}

}  // namespace tessel::target
