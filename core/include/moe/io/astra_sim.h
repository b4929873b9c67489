#pragma once
// ASTRA-sim 2.0 (github.com/astra-sim/astra-sim): the analytical network backend's YAML
// (topology, npus_count, bandwidth in GB/s, latency in ns per dimension) and the system and
// remote-memory JSON it needs, written from a scenario's cluster.
//
// The cluster becomes a multi-dimensional network: the NVLink domain (a Switch of the domain's
// GPUs), then the scale-out fabric (a Switch across the domains, one per rail: GPU i of every
// domain meets there, as on a rail-optimized fabric). What it cannot express is in `notes`.

#include "moe/diagnostics.h"
#include "moe/scenario.h"

#include <optional>
#include <string>
#include <vector>

namespace moe::io {

struct AstraSimFiles {
    std::string network_yaml;
    std::string system_json;
    std::string remote_memory_json;
    std::vector<std::string> notes;
};

struct AstraSimExport {
    std::optional<AstraSimFiles> files;
    Diagnostics diagnostics; ///< e.g. a single GPU (ASTRA-sim needs two NPUs per dimension)
};

AstraSimExport exportAstraSim(const Scenario& scenario);

} // namespace moe::io
