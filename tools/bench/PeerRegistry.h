// Every peer family Tessel knows (oneDNN, OpenBLAS, XNNPACK, Halide), each available
// or not, and the catalog of their operator names that suites are checked
// against.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "bench/Peer.h"

namespace tessel::bench {

// family -> its operators ("onednn" -> {"matmul", ...}).
using PeerCatalog = std::map<std::string, std::vector<std::string>>;

std::vector<std::unique_ptr<PeerFamily>> makePeerFamilies();
PeerCatalog catalogOf(const std::vector<std::unique_ptr<PeerFamily>>& families);
// The family called `name`, or nullptr.
PeerFamily* findFamily(const std::vector<std::unique_ptr<PeerFamily>>& families, const std::string& name);

}  // namespace tessel::bench
