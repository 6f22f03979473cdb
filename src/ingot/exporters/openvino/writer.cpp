#include "ingot/exporters/openvino/writer.h"

#include <fmt/format.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <unordered_map>

namespace ingot::exporters::openvino {

namespace {

std::string escape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\n':
        out += "&#10;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

size_t align_up(size_t n) {
  return (n + kWeightAlignment - 1) / kWeightAlignment * kWeightAlignment;
}

// Where each Const's bytes go in the .bin: every graph's Consts in layer order, bodies
// after the layer that owns them.
struct WeightPlan {
  std::unordered_map<const Layer*, size_t> offset;
  std::vector<const Layer*> order;
  size_t total = 0;

  void add(const Graph& g) {
    for (const Layer& l : g.layers()) {
      if (l.type == "Const") {
        total = align_up(total);
        offset[&l] = total;
        order.push_back(&l);
        total += l.data.nbytes();
      }
      for (const auto& [name, body] : l.bodies) add(*body);
    }
  }
};

void write_port(std::string& out, const std::string& indent, size_t id, const PortInfo& p) {
  out += fmt::format("{}<port id=\"{}\" precision=\"{}\"", indent, id, precision_name(p.type));
  if (!p.names.empty()) {
    std::string names;
    for (const std::string& n : p.names) names += (names.empty() ? "" : ",") + n;
    out += fmt::format(" names=\"{}\"", escape(names));
  }
  if (!p.dims || p.dims->empty()) {
    out += " />\n";
    return;
  }
  out += ">\n";
  for (int64_t d : *p.dims) out += fmt::format("{}\t<dim>{}</dim>\n", indent, d);
  out += indent + "</port>\n";
}

void write_graph(std::string& out, const Graph& g, const WeightPlan& plan, int depth);

void write_layer(std::string& out, const Graph& g, int32_t id, const WeightPlan& plan, int depth) {
  const Layer& l = g.layers()[size_t(id)];
  const std::string in(size_t(depth), '\t');
  out += fmt::format("{}<layer id=\"{}\" name=\"{}\" type=\"{}\" version=\"{}\"", in, id,
                     escape(l.name), l.type, l.version);
  if (l.type == "Result" && !l.inputs.empty()) {
    const auto& names = g.info(l.inputs[0]).names;
    if (!names.empty()) out += fmt::format(" output_names=\"{}\"", escape(names.back()));
  }
  out += ">\n";
  Attributes attrs = l.attrs;
  if (l.type == "Const") {
    attrs.emplace_back("offset", std::to_string(plan.offset.at(&l)));
    attrs.emplace_back("size", std::to_string(l.data.nbytes()));
  }
  if (!attrs.empty()) {
    out += in + "\t<data";
    for (const auto& [k, v] : attrs) out += fmt::format(" {}=\"{}\"", k, escape(v));
    out += " />\n";
  }
  if (!l.rt_info.empty()) {
    out += in + "\t<rt_info>\n";
    for (const auto& [k, v] : l.rt_info) {
      out += fmt::format("{}\t\t<attribute name=\"{}\" version=\"0\"", in, k);
      out += v.empty() ? " />\n" : fmt::format(" value=\"{}\" />\n", escape(v));
    }
    out += in + "\t</rt_info>\n";
  }
  out += l.port_map_xml.empty() ? "" : l.port_map_xml;
  if (!l.inputs.empty()) {
    out += in + "\t<input>\n";
    for (size_t i = 0; i < l.inputs.size(); ++i) {
      PortInfo p = g.info(l.inputs[i]);
      p.names.clear();
      write_port(out, in + "\t\t", i, p);
    }
    out += in + "\t</input>\n";
  }
  if (!l.outputs.empty() && l.type != "Result") {
    out += in + "\t<output>\n";
    for (size_t k = 0; k < l.outputs.size(); ++k)
      write_port(out, in + "\t\t", l.inputs.size() + k, l.outputs[k]);
    out += in + "\t</output>\n";
  }
  for (const auto& [name, body] : l.bodies) {
    out += fmt::format("{}\t<{}>\n", in, name);
    write_graph(out, *body, plan, depth + 2);
    out += fmt::format("{}\t</{}>\n", in, name);
  }
  out += in + "</layer>\n";
}

void write_graph(std::string& out, const Graph& g, const WeightPlan& plan, int depth) {
  const std::string in(size_t(depth), '\t');
  out += in + "<layers>\n";
  for (size_t i = 0; i < g.layers().size(); ++i) write_layer(out, g, int32_t(i), plan, depth + 1);
  out += in + "</layers>\n";
  out += in + "<edges>\n";
  for (size_t i = 0; i < g.layers().size(); ++i) {
    const Layer& l = g.layers()[i];
    for (size_t p = 0; p < l.inputs.size(); ++p) {
      const Value& v = l.inputs[p];
      const size_t from_port = g.layers()[size_t(v.layer)].inputs.size() + size_t(v.port);
      out += fmt::format(
          "{}\t<edge from-layer=\"{}\" from-port=\"{}\" to-layer=\"{}\" to-port=\"{}\" />\n", in,
          v.layer, from_port, i, p);
    }
  }
  out += in + "</edges>\n";
}

std::string xml_with_plan(const Model& model, const WeightPlan& plan) {
  std::string out = "<?xml version=\"1.0\"?>\n";
  out += fmt::format("<net name=\"{}\" version=\"11\">\n", escape(model.name));
  write_graph(out, model.graph, plan, 1);
  out += "\t<rt_info>\n";
  for (const auto& [k, v] : model.rt_info)
    out += fmt::format("\t\t<{} value=\"{}\" />\n", k, escape(v));
  out += "\t</rt_info>\n</net>\n";
  return out;
}

}  // namespace

std::string bin_path_for(const std::string& xml_path) {
  return std::filesystem::path(xml_path).replace_extension(".bin").string();
}

std::string model_xml(const Model& model) {
  WeightPlan plan;
  plan.add(model.graph);
  return xml_with_plan(model, plan);
}

void save_model(const Model& model, const std::string& xml_path) {
  namespace fs = std::filesystem;
  WeightPlan plan;
  plan.add(model.graph);
  const std::string xml = xml_with_plan(model, plan);
  const std::string bin_path = bin_path_for(xml_path);
  const std::string xml_tmp = xml_path + ".tmp", bin_tmp = bin_path + ".tmp";
  auto fail = [&](const std::string& what) {
    std::error_code ec;
    fs::remove(xml_tmp, ec);
    fs::remove(bin_tmp, ec);
    INGOT_THROW(IoError, "[openvino] cannot write {}: {}", xml_path, what);
  };
  {
    std::ofstream bin(bin_tmp, std::ios::binary | std::ios::trunc);
    if (!bin) fail("cannot create " + bin_tmp + " (is the directory writable?)");
    static const char kZeros[kWeightAlignment] = {};
    size_t at = 0;
    for (const Layer* l : plan.order) {
      const size_t off = plan.offset.at(l);
      bin.write(kZeros, std::streamsize(off - at));
      bin.write(static_cast<const char*>(l->data.raw_data()), std::streamsize(l->data.nbytes()));
      at = off + l->data.nbytes();
    }
    bin.flush();
    if (!bin) fail("writing " + bin_tmp + " failed (disk full?)");
  }
  {
    std::ofstream x(xml_tmp, std::ios::binary | std::ios::trunc);
    if (!x) fail("cannot create " + xml_tmp + " (is the directory writable?)");
    x << xml;
    x.flush();
    if (!x) fail("writing " + xml_tmp + " failed (disk full?)");
  }
  std::error_code ec;
  fs::rename(bin_tmp, bin_path, ec);
  if (ec) fail("rename to " + bin_path + ": " + ec.message());
  fs::rename(xml_tmp, xml_path, ec);
  if (ec) {
    fs::remove(bin_path, ec);
    fail("rename to " + xml_path + ": " + ec.message());
  }
}

}  // namespace ingot::exporters::openvino
