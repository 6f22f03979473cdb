#include "ingot/export/custom_op.h"

namespace ingot {

void register_custom_op(std::string_view schema, CustomKernel kernel, ShapeFn fake) {
  OpDef def = define_op(schema);
  INGOT_CHECK(def.schema.name.find("::") != std::string::npos, ValueError,
              "[register_custom_op] '{}' needs a namespace, e.g. \"mylib::{}\"", def.qualified_name,
              def.schema.name);
  INGOT_CHECK(OpRegistry::instance().find(def.qualified_name) == nullptr, ValueError,
              "[register_custom_op] '{}' is already registered", def.qualified_name);
  INGOT_CHECK(kernel != nullptr, ValueError, "[register_custom_op] '{}' needs a kernel", def.qualified_name);
  def.compute_fn = std::move(kernel);
  def.shape_fn = std::move(fake);
  OpRegistry::instance().add(std::move(def));
}

std::vector<Tensor> call_custom_op(std::string_view name, std::vector<Value> args,
                                   std::source_location where) {
  CallSiteScope call_site(where);
  return call_op(OpRegistry::instance().get(name), std::move(args));
}

}  // namespace ingot
