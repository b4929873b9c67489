#pragma once
// The built-in hardware catalog (resources/catalog.yaml, embedded in the binaries). A scenario
// names a preset and may override any of its fields.

#include "moe/scenario.h"

#include <string>
#include <vector>

namespace moe {

struct Catalog {
    std::vector<GpuSpec> gpus;
    std::vector<NicSpec> nics;
    /// Default node shape per GPU preset (e.g. GB200: 4 GPUs a tray, 18 trays, rack domain).
    struct NodeShape {
        std::string gpu_preset;
        int gpus_per_node = 8;
        int nodes_per_rack = 4;
        ScaleUpDomain scale_up_domain = ScaleUpDomain::node;
        // Economics estimates (economics.h): the server around the GPUs and its rack.
        double server_usd = 0;
        double rack_usd = 0;
        double node_overhead_w = 0;
        double rack_overhead_w = 0;
    };
    std::vector<NodeShape> node_shapes;
    /// Where the figures come from (datasheets), for the README and reports.
    std::string sources;
    /// The datasheet or product brief each GPU and NIC entry's figures come from (its
    /// `source`), in catalog order, GPUs first.
    struct EntrySource {
        std::string preset;
        std::string source;
    };
    std::vector<EntrySource> entry_sources;

    const GpuSpec* findGpu(const std::string& preset) const;
    const NicSpec* findNic(const std::string& preset) const;
    const NodeShape* findNodeShape(const std::string& gpu_preset) const;
    /// The entry's `source`, or null for an unknown preset.
    const std::string* sourceOf(const std::string& preset) const;
};

/// Parses catalog YAML in the embedded file's format. A malformed entry (a missing figure, an
/// empty `source`, a negative `fp8_tflops`) throws std::logic_error naming it: the only input
/// is our own file, so that is a build defect. An absent `fp8_tflops` reads as 0 (no FP8).
Catalog parseCatalog(const std::string& yaml);

/// The embedded catalog, parsed once (thread-safe).
const Catalog& builtinCatalog();

/// The embedded catalog's YAML text.
const char* builtinCatalogYaml();

} // namespace moe
