// Runs the tessel binary (or any shell command) from a test and captures its
// exit code, stdout and stderr.
#pragma once

#include <string>

namespace tessel::testing {

struct ToolResult {
  int exitCode = -1;
  std::string out;
  std::string err;
};

ToolResult runCommand(const std::string& command);
// `args` is appended to the tessel binary's path (already shell-quoted by the caller).
ToolResult runTessel(const std::string& args);
std::string sourcePath(const std::string& relative);  // absolute path inside the repository
std::string makeTempDir(const std::string& prefix);
void writeText(const std::string& path, const std::string& text);
std::string readText(const std::string& path);

}  // namespace tessel::testing
