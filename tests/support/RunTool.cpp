#include "RunTool.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace tessel::testing {

std::string readText(const std::string& path) {
  std::ifstream f(path);
  std::ostringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::string makeTempDir(const std::string& prefix) {
  std::string tmpl = "/tmp/" + prefix + "XXXXXX";
  if (!mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
  return tmpl;
}

void writeText(const std::string& path, const std::string& text) {
  std::ofstream f(path);
  f << text;
}

ToolResult runCommand(const std::string& command) {
  std::string dir = makeTempDir("tessel-tool-");
  std::string cmd = "(" + command + ") >" + dir + "/out 2>" + dir + "/err";
  int status = std::system(cmd.c_str());
  ToolResult r;
  r.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = readText(dir + "/out");
  r.err = readText(dir + "/err");
  std::system(("rm -rf " + dir).c_str());
  return r;
}

ToolResult runTessel(const std::string& args) { return runCommand(std::string(TESSEL_BINARY) + " " + args); }

std::string sourcePath(const std::string& relative) {
  return std::string(TESSEL_SOURCE_DIR) + "/" + relative;
}

}  // namespace tessel::testing
