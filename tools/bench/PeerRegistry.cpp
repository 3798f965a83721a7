#include "bench/PeerRegistry.h"

#include "bench/HalidePeer.h"
#include "bench/OneDnnPeer.h"
#include "bench/OpenBlasPeer.h"
#include "bench/XnnpackPeer.h"

namespace tessel::bench {

std::vector<std::unique_ptr<PeerFamily>> makePeerFamilies() {
  std::vector<std::unique_ptr<PeerFamily>> families;
  families.push_back(makeOneDnnPeer());
  families.push_back(makeOpenBlasPeer());
  families.push_back(makeXnnpackPeer());
  families.push_back(makeHalidePeer());
  return families;
}

PeerCatalog catalogOf(const std::vector<std::unique_ptr<PeerFamily>>& families) {
  PeerCatalog catalog;
  for (const auto& f : families)
    for (const auto& op : f->operators()) catalog[f->name()].push_back(op.name);
  return catalog;
}

PeerFamily* findFamily(const std::vector<std::unique_ptr<PeerFamily>>& families, const std::string& name) {
  for (const auto& f : families)
    if (f->name() == name) return f.get();
  return nullptr;
}

}  // namespace tessel::bench
