// Files read whole: a user's, where a missing, unreadable or directory path
// is a UserError naming it, and the system's (/proc, /sys), which may be
// absent.
#pragma once

#include <optional>
#include <string>

namespace tessel {

std::string readTextFile(const std::string& path);
// nullopt when the file cannot be opened.
std::optional<std::string> readTextIfPresent(const std::string& path);

}  // namespace tessel
