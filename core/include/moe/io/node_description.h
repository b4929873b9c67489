#pragma once
// What a topology dump says about one node (nvidia-smi topo -m, NCCL's topology XML), and how
// it becomes the cluster fields of a scenario: GPUs per node, the NVLink domain and each GPU's
// NVLink bandwidth, the NICs that carry GPU traffic (one per rail) and their speed.

#include "moe/diagnostics.h"
#include "moe/scenario.h"

#include <optional>
#include <string>
#include <vector>

namespace moe::io {

struct NodeDescription {
    std::string source; ///< "nvidia-smi topo -m" or "NCCL topology"
    int gpus = 0;
    /// NVLinks of each GPU (NV# in the matrix, the summed nvlink counts in NCCL's XML).
    int nvlinks_per_gpu = 0;
    bool all_pairs_nvlink = false; ///< every GPU reaches every other over NVLink
    bool nvswitch = false;         ///< the links end in NVSwitches (one per-GPU bandwidth)
    /// The NVSwitches are outside the node (Grace-Blackwell trays of an NVL72 rack): the NVLink
    /// domain is the rack. Unset when the dump cannot tell (nvidia-smi topo -m).
    std::optional<bool> nvswitch_outside_node;
    int sm = 0;                 ///< compute capability x 10 (NCCL only; 0 = not in the dump)
    std::string gpu_pci_device; ///< "0x2330" (NCCL only)
    std::string gpu_model;      ///< "H100 SXM5 80GB" when the PCI device is known
    std::string gpu_preset;     ///< the catalog preset of that GPU, "" when none
    /// NICs that carry GPU traffic: each is the nearest NIC of at least one GPU (rail order).
    std::vector<std::string> rail_nics;
    std::vector<std::string> other_nics; ///< not near any GPU: storage, management
    double nic_speed_gbit = 0;           ///< line rate of the rail NICs (NCCL only; 0 = unknown)
    std::vector<int> gpu_nic;            ///< GPU -> index in rail_nics, -1 = no NIC near it
    std::vector<std::string> notes;
};

/// How far a NIC is from a GPU, nearest first (nvidia-smi's PIX/PXB/PHB/NODE/SYS; c2c = over a
/// Grace CPU's NVLink-C2C, NCCL's P2C path).
enum class PathLevel { pix, pxb, phb, c2c, node, sys };

/// Fills rail_nics, other_nics and gpu_nic from the GPU x NIC distances: each GPU takes the
/// least-shared of its nearest NICs when those are close (PIX, PXB, PHB or C2C); NICs no GPU
/// takes are other_nics.
void assignRails(NodeDescription& node, const std::vector<std::vector<PathLevel>>& distance,
                 const std::vector<std::string>& nic_names);

/// A parsed dump: the node, or errors with lines (then nothing else is done).
struct NodeParse {
    std::optional<NodeDescription> node;
    Diagnostics diagnostics;
};

/// The node in words (what was found and what it means for the scenario).
std::string describeNode(const NodeDescription& node);

struct NodeImportOptions {
    std::string file_label = "<topology>";
    std::string base_dir = ".";
    Scenario base;          ///< everything but the node's shape comes from here
    int nodes = 0;          ///< 0 = keep the base's GPU count
    std::string nic_preset; ///< the NIC when the dump does not give its speed ("" = keep)
    std::vector<std::string> overrides; ///< --set key=value, applied last
};

struct NodeImport {
    std::optional<Scenario> scenario; ///< set only when valid
    Diagnostics diagnostics;
    std::vector<std::string> changes; ///< each cluster field set, with why
};

/// The base scenario with its node replaced by `node`.
NodeImport applyNodeDescription(const NodeDescription& node, const NodeImportOptions& options);

/// NVLink bandwidth per link per direction for a compute capability (x10), in GB/s: NVLink 2
/// (V100, sm 70), 3 (A100, sm 80) and 4 (H100, sm 90) carry 25 GB/s each way per link, NVLink 5
/// (Blackwell, sm 100) 50 GB/s. 0 for an unknown generation.
double nvlinkGbpsPerLink(int sm);

} // namespace moe::io
