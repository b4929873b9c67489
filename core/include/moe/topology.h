#pragma once
// The explicit hardware graph of a cluster: racks, nodes, GPUs, the scale-up switch of each
// domain, NICs, leaf and spine switches, and typed links. The topology diagram draws it and the
// performance model assigns traffic to its links.

#include "moe/scenario.h"

#include <algorithm>
#include <string>
#include <vector>

namespace moe {

enum class VertexKind { gpu, scale_up_switch, nic, leaf_switch, spine_switch };
enum class LinkKind {
    scale_up,  ///< GPU <-> NVSwitch of its domain
    gpu_nic,   ///< GPU <-> its NIC (PCIe)
    nic_leaf,  ///< NIC <-> leaf switch
    leaf_spine ///< leaf <-> spine switch (aggregated uplinks)
};
enum class LinkClass { scale_up, scale_out };

const char* toString(VertexKind k);
const char* toString(LinkKind k);
const char* toString(LinkClass c);

struct Vertex {
    VertexKind kind = VertexKind::gpu;
    int index = 0;   ///< index among vertices of the same kind
    int rack = -1;   ///< -1 where it does not belong to one rack (spines)
    int node = -1;   ///< -1 for switches outside nodes
    int domain = -1; ///< scale-up domain (GPUs and their NVSwitch)
    int rail = -1;   ///< NIC rail / rail leaf
    std::string label;
};

struct Link {
    int a = 0; ///< vertex ids
    int b = 0;
    LinkKind kind = LinkKind::scale_up;
    double bandwidth_gbps = 0; ///< GB/s per direction
    double latency_us = 0;
    LinkClass linkClass() const {
        return kind == LinkKind::scale_up ? LinkClass::scale_up : LinkClass::scale_out;
    }
};

struct HardwareGraph {
    std::vector<Vertex> vertices;
    std::vector<Link> links;

    // Fast lookups by GPU index (GPUs are numbered node-major: gpu = node * gpus_per_node + local).
    std::vector<int> gpu_vertex;        ///< gpu -> vertex id
    std::vector<int> gpu_nic_vertex;    ///< gpu -> vertex id of the NIC it sends through
    std::vector<int> gpu_scale_up_link; ///< gpu -> link id to its NVSwitch (-1 if domain of 1)
    std::vector<int> gpu_nic_link;      ///< gpu -> link id GPU<->NIC
    std::vector<int> nic_leaf_link;     ///< NIC index -> link id NIC<->leaf (-1 without fabric)
    std::vector<int> leaf_spine_links_begin; ///< leaf index -> first link id of its uplinks
    std::vector<int> leaf_spine_links_count; ///< leaf index -> number of uplinks
    std::vector<int> nic_leaf;               ///< NIC index -> leaf index

    std::vector<int> node_rack;       ///< node -> rack (racks hold consecutive nodes)
    std::vector<int> rack_first_node; ///< rack -> its first node; one more entry than racks

    int gpus_per_node = 1;
    int nodes_per_rack = 1; ///< a rack's capacity; racks may hold fewer (cluster.rack_nodes)
    int gpus_per_domain = 1;
    int scale_up_switches = 0;
    int nics = 0;
    int leaves = 0;
    int spines = 0;

    int gpuCount() const { return static_cast<int>(gpu_vertex.size()); }
    int nodeOf(int gpu) const { return gpu / gpus_per_node; }
    int rackOf(int gpu) const { return node_rack[nodeOf(gpu)]; }
    int rackCount() const { return std::max(0, static_cast<int>(rack_first_node.size()) - 1); }
    int nodesInRack(int rack) const { return rack_first_node[rack + 1] - rack_first_node[rack]; }
    int domainOf(int gpu) const { return gpu / gpus_per_domain; }
    /// Link ids, in order, that traffic from `src_gpu` to `dst_gpu` crosses.
    std::vector<int> route(int src_gpu, int dst_gpu) const;
};

HardwareGraph buildHardwareGraph(const ClusterSpec& cluster);

/// The graph's sizes in closed form, without building it: what the placement, the economics and
/// the warnings read, so evaluate() costs the same on any cluster size. buildHardwareGraph lays
/// its vertices out by the same figures.
struct HardwareShape {
    int gpus = 0; ///< 0 for a cluster too large for a graph (a validation error)
    int nodes = 0;
    int gpus_per_node = 1;
    int gpus_per_domain = 1;
    int nodes_per_rack = 1; ///< a rack's capacity, widened to the fullest listed rack
    int racks = 0;
    bool racks_alike = false; ///< every rack holds nodes_per_rack nodes
    int scale_up_switches = 0;
    int nics = 0;
    int leaves = 0;
    int spines = 0;
    int nodeOf(int gpu) const { return gpu / std::max(1, gpus_per_node); }
};
/// O(1), or O(racks) when cluster.rack_nodes lists racks by hand.
HardwareShape hardwareShape(const ClusterSpec& cluster);

} // namespace moe
