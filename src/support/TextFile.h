// A user's file read whole: a missing, unreadable or directory path is a
// UserError naming it.
#pragma once

#include <string>

namespace tessel {

std::string readTextFile(const std::string& path);

}  // namespace tessel
