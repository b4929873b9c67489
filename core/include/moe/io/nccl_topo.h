#pragma once
// NCCL's topology dump (NCCL_TOPO_DUMP_FILE, the same XML NCCL_TOPO_FILE reads): CPUs, the PCIe
// tree, GPUs with their compute capability, NVLinks and C2C links, NICs with their speed; read
// with pugixml into a node description.

#include "moe/io/node_description.h"

#include <string>

namespace moe::io {

/// Reads the dump; XML that is not well formed, not NCCL's (<system> root) or that lacks a
/// GPU's attributes is an error with its line.
NodeParse parseNcclTopo(const std::string& xml, const std::string& file_label);

} // namespace moe::io
