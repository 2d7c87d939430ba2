// Traces and interprets the decode layer through the installed package; exit 0 on success.
#include <cstdio>

#include "ir/printer.h"
#include "models/model.h"
#include "runtime/interpreter.h"

int main() {
  auto model = graphjit::models::CreateModel("decode:d=32,H=4,G=2,dh=8,f=64");
  if (!model.ok()) return 1;
  auto graph = graphjit::models::TraceModel(**model);
  if (!graph.ok()) return 2;
  auto inputs = (*model)->ExampleInputs({{"S", 5}}, 0);
  if (!inputs.ok()) return 3;
  auto out = graphjit::runtime::Interpret(*graph, *inputs, (*model)->params(), {{"P", 4}});
  if (!out.ok() || out->size() != 3) return 4;
  std::printf("consumer: %d nodes, y[0] = %g\n", graph->num_nodes(), (*out)[0].ValueAt(0));
  return 0;
}
