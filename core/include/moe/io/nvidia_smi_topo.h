#pragma once
// `nvidia-smi topo -m` output: the GPU/NIC connection matrix (X, NV#, PIX, PXB, PHB, NODE, SYS)
// and its NIC legend, read into a node description.

#include "moe/io/node_description.h"

#include <string>

namespace moe::io {

/// Reads the matrix; a truncated matrix, an unknown connection or a missing header is an error
/// with the line (and column) where it was found.
NodeParse parseNvidiaSmiTopo(const std::string& text, const std::string& file_label);

} // namespace moe::io
