#include "moe/io/drawio.h"

#include "moe/format.h"
#include "moe/json_writer.h"
#include "moe/topology.h"

#include <pugixml.hpp>

#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>

namespace moe::io {

namespace {

// Sizes in draw.io units (pixels at 100%).
constexpr int kGpuW = 64, kGpuH = 30, kNicW = 64, kNicH = 24, kGap = 8, kPad = 10;
constexpr int kNodeHeader = 24, kRackHeader = 28, kSwitchH = 34, kRackGap = 40, kRowGap = 90;
constexpr int kPerRow = 8;
constexpr int kRacksPerRow = 16; ///< racks side by side before the next row

const char* kGpuStyle = "rounded=1;whiteSpace=wrap;html=1;fillColor=#d5e8d4;strokeColor=#82b366;"
                        "fontSize=10;";
const char* kNicStyle = "rounded=1;whiteSpace=wrap;html=1;fillColor=#dae8fc;strokeColor=#6c8ebf;"
                        "fontSize=9;";
const char* kSwitchStyle = "shape=mxgraph.networks.switch;html=1;whiteSpace=wrap;"
                           "fillColor=#CCCCCC;strokeColor=#6881B3;strokeWidth=1;fontSize=10;"
                           "labelPosition=center;verticalLabelPosition=middle;";
const char* kNodeStyle = "swimlane;rounded=1;html=1;fillColor=#f5f5f5;strokeColor=#666666;"
                         "startSize=24;fontSize=11;container=1;collapsible=0;";
const char* kRackStyle = "swimlane;html=1;fillColor=#ffffff;strokeColor=#333333;strokeWidth=2;"
                         "startSize=28;fontStyle=1;fontSize=12;container=1;collapsible=0;";

std::string linkStyle(LinkKind kind) {
    switch (kind) {
    case LinkKind::scale_up:
        return "endArrow=none;html=1;strokeColor=#2d7600;strokeWidth=2;fontSize=8;";
    case LinkKind::gpu_nic:
        return "endArrow=none;html=1;strokeColor=#999999;dashed=1;fontSize=8;";
    case LinkKind::nic_leaf:
        return "endArrow=none;html=1;strokeColor=#1f5aa6;fontSize=8;";
    case LinkKind::leaf_spine:
        return "endArrow=none;html=1;strokeColor=#0b2a5b;strokeWidth=2;fontSize=8;";
    }
    return "endArrow=none;html=1;";
}

std::string gbps(double v) {
    std::ostringstream out;
    out << formatNumber(std::round(v * 10) / 10) << " GB/s";
    return out.str();
}

class Writer {
public:
    Writer() {
        pugi::xml_node decl = doc_.append_child(pugi::node_declaration);
        decl.append_attribute("version") = "1.0";
        decl.append_attribute("encoding") = "UTF-8";
        file_ = doc_.append_child("mxfile");
        file_.append_attribute("host") = "moe-planner";
        file_.append_attribute("type") = "device";
        diagram_ = file_.append_child("diagram");
        diagram_.append_attribute("id") = "topology";
        diagram_.append_attribute("name") = "Topology";
        model_ = diagram_.append_child("mxGraphModel");
        root_ = model_.append_child("root");
        root_.append_child("mxCell").append_attribute("id") = "0";
        pugi::xml_node layer = root_.append_child("mxCell");
        layer.append_attribute("id") = "1";
        layer.append_attribute("parent") = "0";
    }

    void vertex(const std::string& id, const std::string& parent, const std::string& value,
                const std::string& style, int x, int y, int w, int h) {
        pugi::xml_node cell = root_.append_child("mxCell");
        cell.append_attribute("id") = id.c_str();
        cell.append_attribute("value") = value.c_str();
        cell.append_attribute("style") = style.c_str();
        cell.append_attribute("vertex") = "1";
        cell.append_attribute("parent") = parent.c_str();
        pugi::xml_node g = cell.append_child("mxGeometry");
        g.append_attribute("x") = x;
        g.append_attribute("y") = y;
        g.append_attribute("width") = w;
        g.append_attribute("height") = h;
        g.append_attribute("as") = "geometry";
        extent_w_ = std::max(extent_w_, x + w);
        extent_h_ = std::max(extent_h_, y + h);
    }

    void edge(const std::string& source, const std::string& target, const std::string& label,
              const std::string& style) {
        pugi::xml_node cell = root_.append_child("mxCell");
        cell.append_attribute("id") = ("link-" + std::to_string(edges_++)).c_str();
        cell.append_attribute("value") = label.c_str();
        cell.append_attribute("style") = style.c_str();
        cell.append_attribute("edge") = "1";
        cell.append_attribute("parent") = "1";
        cell.append_attribute("source") = source.c_str();
        cell.append_attribute("target") = target.c_str();
        pugi::xml_node g = cell.append_child("mxGeometry");
        g.append_attribute("relative") = "1";
        g.append_attribute("as") = "geometry";
    }

    std::string finish(const std::string& title) {
        diagram_.attribute("name") = title.c_str();
        model_.prepend_attribute("pageHeight") = extent_h_ + 40;
        model_.prepend_attribute("pageWidth") = extent_w_ + 40;
        model_.prepend_attribute("page") = "1";
        model_.prepend_attribute("gridSize") = "10";
        model_.prepend_attribute("grid") = "1";
        std::ostringstream out;
        doc_.save(out, "  ", pugi::format_default, pugi::encoding_utf8);
        return out.str();
    }

private:
    pugi::xml_document doc_;
    pugi::xml_node file_, diagram_, model_, root_;
    int edges_ = 0;
    int extent_w_ = 0, extent_h_ = 0;
};

int rows(int count) {
    return (count + kPerRow - 1) / kPerRow;
}

/// Shape sizes of one export: a node holds its GPUs in rows of 8, its NVSwitch and its NICs
/// (detailed), or one box of each (compact).
struct NodeBox {
    bool detailed = false;
    int gpn = 0;
    int nics_per_node = 0;
    bool node_switch = false, rack_switch = false;
    int inner_w = 0, node_w = 0, node_h = 0, rack_w = 0;
    int gpu_block = 0, switch_block = 0;
};

NodeBox nodeBox(const ClusterSpec& c, const HardwareGraph& g) {
    NodeBox b;
    b.detailed = g.gpuCount() <= kDrawioDetailedGpuLimit;
    b.gpn = g.gpus_per_node;
    b.nics_per_node = g.gpuCount() > 0 && c.nodes > 0 ? g.nics / c.nodes : 0;
    b.node_switch = c.scale_up_domain == ScaleUpDomain::node && g.scale_up_switches > 0;
    b.rack_switch = c.scale_up_domain == ScaleUpDomain::rack && g.scale_up_switches > 0;
    const int per_row = b.detailed ? std::min(b.gpn, kPerRow) : 1;
    b.inner_w = b.detailed ? per_row * (kGpuW + kGap) - kGap : 2 * kGpuW + kGap;
    b.node_w = std::max(b.inner_w, 2 * kGpuW) + 2 * kPad;
    const int gpu_rows = b.detailed ? rows(b.gpn) : 1;
    const int nic_rows = b.detailed ? rows(std::max(1, b.nics_per_node)) : 1;
    b.gpu_block = gpu_rows * (kGpuH + kGap);
    b.switch_block = b.node_switch ? kSwitchH + kGap : 0;
    b.node_h = kNodeHeader + kPad + b.gpu_block + b.switch_block +
               (b.nics_per_node > 0 ? nic_rows * (kNicH + kGap) : 0) + kPad;
    b.rack_w = b.node_w + 2 * kPad;
    return b;
}

/// One node's container and its GPUs and NICs (or one GPU box and one NIC box).
void writeNode(Writer& w, const NodeBox& b, const ClusterSpec& c, int node,
               const std::string& rack_id, int slot) {
    const int gpn = b.gpn;
    const std::string node_id = "node-" + std::to_string(node);
    w.vertex(node_id, rack_id,
             "Node " + std::to_string(node) + ": " + std::to_string(gpn) + " x " + c.gpu.name,
             kNodeStyle, kPad, kRackHeader + kPad + slot * (b.node_h + kPad), b.node_w, b.node_h);
    const int gpus_y = kNodeHeader + kPad;
    const int switch_y = gpus_y + b.gpu_block;
    const int nics_y = switch_y + b.switch_block;
    if (b.detailed) {
        for (int i = 0; i < gpn; ++i) {
            const int gpu = node * gpn + i;
            w.vertex("gpu-" + std::to_string(gpu), node_id, "GPU " + std::to_string(gpu), kGpuStyle,
                     kPad + (i % kPerRow) * (kGpuW + kGap), gpus_y + (i / kPerRow) * (kGpuH + kGap),
                     kGpuW, kGpuH);
        }
        for (int i = 0; i < b.nics_per_node; ++i) {
            const int nic = node * b.nics_per_node + i;
            w.vertex("nic-" + std::to_string(nic), node_id, "NIC " + std::to_string(i), kNicStyle,
                     kPad + (i % kPerRow) * (kNicW + kGap), nics_y + (i / kPerRow) * (kNicH + kGap),
                     kNicW, kNicH);
        }
    } else {
        w.vertex("gpus-" + std::to_string(node), node_id, std::to_string(gpn) + " x GPU", kGpuStyle,
                 kPad, gpus_y, kGpuW, kGpuH);
        if (b.nics_per_node > 0)
            w.vertex("nics-" + std::to_string(node), node_id,
                     std::to_string(b.nics_per_node) + " x NIC", kNicStyle, kPad, nics_y, kNicW,
                     kNicH);
    }
}

/// Racks in rows below the switch rows, each with its nodes; returns the racks' total width.
int writeRacks(Writer& w, const NodeBox& b, const ClusterSpec& c, const HardwareGraph& g) {
    const int racks = g.rackCount();
    const int top = (g.spines > 0 ? kRowGap : 0) + (g.leaves > 0 ? kRowGap : 0);
    const int rack_switch_h = b.rack_switch ? kSwitchH + kPad : 0;
    int widest = 0;
    int tallest = 0;
    for (int r = 0; r < racks; ++r)
        tallest = std::max(tallest, kRackHeader + kPad + g.nodesInRack(r) * (b.node_h + kPad) +
                                        rack_switch_h);
    for (int r = 0; r < racks; ++r) {
        const int nodes = g.nodesInRack(r);
        const int x = (r % kRacksPerRow) * (b.rack_w + kRackGap);
        const int y = top + (r / kRacksPerRow) * (tallest + kRackGap);
        const int rack_h = kRackHeader + kPad + nodes * (b.node_h + kPad) + rack_switch_h;
        const std::string rack_id = "rack-" + std::to_string(r);
        w.vertex(rack_id, "1",
                 "Rack " + std::to_string(r) + " (" + std::to_string(nodes) +
                     (nodes == 1 ? " node)" : " nodes)"),
                 kRackStyle, x, y, b.rack_w, rack_h);
        widest = std::max(widest, x + b.rack_w);
        for (int k = 0; k < nodes; ++k)
            writeNode(w, b, c, g.rack_first_node[static_cast<std::size_t>(r)] + k, rack_id, k);
    }
    return widest;
}

/// NVSwitches: inside their node, or at the bottom of their rack.
void writeScaleUpSwitches(Writer& w, const NodeBox& b, const ClusterSpec& c,
                          const HardwareGraph& g) {
    for (const Vertex& v : g.vertices) {
        if (v.kind != VertexKind::scale_up_switch)
            continue;
        const std::string id = "nvswitch-" + std::to_string(v.index);
        const std::string label = c.gpu.scale_up_fabric + " switch";
        if (v.node >= 0) {
            w.vertex(id, "node-" + std::to_string(v.node), label, kSwitchStyle, kPad,
                     kNodeHeader + kPad + b.gpu_block, b.inner_w, kSwitchH);
        } else {
            const int nodes = g.nodesInRack(v.rack);
            w.vertex(id, "rack-" + std::to_string(v.rack), label + " (rack domain)", kSwitchStyle,
                     kPad, kRackHeader + kPad + nodes * (b.node_h + kPad), b.node_w, kSwitchH);
        }
    }
}

/// Leaves and spines in rows above the racks, spread over their width.
void writeFabricSwitches(Writer& w, const HardwareGraph& g, int widest) {
    auto spread = [&](int count, int i, int width) {
        const int span = std::max(widest, count * (width + kGap));
        return count <= 1 ? (span - width) / 2 : i * (span - width) / (count - 1);
    };
    for (const Vertex& v : g.vertices) {
        if (v.kind == VertexKind::leaf_switch)
            w.vertex("leaf-" + std::to_string(v.index), "1", v.label, kSwitchStyle,
                     spread(g.leaves, v.index, 90), g.spines > 0 ? kRowGap : 0, 90, 30);
        else if (v.kind == VertexKind::spine_switch)
            w.vertex("spine-" + std::to_string(v.index), "1", v.label, kSwitchStyle,
                     spread(g.spines, v.index, 90), 0, 90, 30);
    }
}

/// The id of the shape a graph vertex is drawn as.
std::string shapeId(const HardwareGraph& g, int vertex, bool detailed) {
    const Vertex& v = g.vertices[static_cast<std::size_t>(vertex)];
    switch (v.kind) {
    case VertexKind::gpu:
        return detailed ? "gpu-" + std::to_string(v.index) : "gpus-" + std::to_string(v.node);
    case VertexKind::nic:
        return detailed ? "nic-" + std::to_string(v.index) : "nics-" + std::to_string(v.node);
    case VertexKind::scale_up_switch:
        return "nvswitch-" + std::to_string(v.index);
    case VertexKind::leaf_switch:
        return "leaf-" + std::to_string(v.index);
    case VertexKind::spine_switch:
        return "spine-" + std::to_string(v.index);
    }
    return {};
}

/// Links, merged where several join the same two shapes (parallel uplinks, or a compact node's
/// eight GPU links).
void writeLinks(Writer& w, const HardwareGraph& g, bool detailed) {
    struct Merged {
        LinkKind kind;
        double bandwidth_gbps;
        int count = 0;
    };
    std::map<std::pair<std::string, std::string>, Merged> merged;
    std::vector<std::pair<std::string, std::string>> order;
    for (const Link& l : g.links) {
        if (!detailed && l.kind == LinkKind::gpu_nic)
            continue; // inside the compact node
        const std::pair<std::string, std::string> key{shapeId(g, l.a, detailed),
                                                      shapeId(g, l.b, detailed)};
        auto [it, inserted] = merged.try_emplace(key, Merged{l.kind, l.bandwidth_gbps, 0});
        ++it->second.count;
        if (inserted)
            order.push_back(key);
    }
    for (const auto& key : order) {
        const Merged& m = merged.at(key);
        const std::string label = (m.count > 1 ? std::to_string(m.count) + " x " : std::string()) +
                                  gbps(m.bandwidth_gbps);
        w.edge(key.first, key.second, label, linkStyle(m.kind));
    }
}

} // namespace

std::string exportDrawio(const Scenario& s) {
    const ClusterSpec& c = s.cluster;
    const HardwareGraph g = buildHardwareGraph(c);
    const NodeBox box = nodeBox(c, g);
    Writer w;
    const int widest = writeRacks(w, box, c, g);
    writeScaleUpSwitches(w, box, c, g);
    writeFabricSwitches(w, g, widest);
    writeLinks(w, g, box.detailed);
    return w.finish(s.name + " — " + std::to_string(g.gpuCount()) + " x " + c.gpu.name);
}

} // namespace moe::io
