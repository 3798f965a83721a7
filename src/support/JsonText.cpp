#include "support/JsonText.h"

#include "tessel/error.h"

namespace tessel {

nlohmann::ordered_json parseJsonText(const std::string& text, const std::string& origin) {
  using Json = nlohmann::ordered_json;
  try {
    return Json::parse(text);
  } catch (const Json::parse_error& e) {
    // nlohmann's `byte` is 1-based: the last byte it read, where it stopped.
    size_t offset = e.byte > 0 ? e.byte - 1 : 0;
    // Its message reads "[json.exception.parse_error.101] parse error at line
    // L, column C: REASON"; the location is ours, the reason is kept.
    std::string reason = e.what();
    if (size_t column = reason.find("column "); column != std::string::npos)
      if (size_t colon = reason.find(": ", column); colon != std::string::npos)
        reason = reason.substr(colon + 2);
    userError(locationInText(origin, text, offset), "invalid JSON: " + reason);
  } catch (const Json::out_of_range& e) {
    // A number too large for a double ("number overflow parsing '1e999'"):
    // nlohmann gives no position, so point at the first occurrence of it.
    std::string reason = e.what();
    SourceLoc loc{origin, 0, 0};
    size_t open = reason.find('\''), close = reason.rfind('\'');
    if (open != std::string::npos && close > open)
      if (size_t at = text.find(reason.substr(open + 1, close - open - 1)); at != std::string::npos)
        loc = locationInText(origin, text, at);
    if (size_t bracket = reason.find("] "); bracket != std::string::npos) reason = reason.substr(bracket + 2);
    userError(loc, "invalid JSON: " + reason);
  }
}

}  // namespace tessel
