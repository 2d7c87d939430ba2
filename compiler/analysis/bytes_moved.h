// Bytes moved, for roofline figures: what each unit of work must read and write at least
// once, as SymExprs over the symbols (pair with flops.h for arithmetic intensity).
#ifndef GRAPHJIT_COMPILER_ANALYSIS_BYTES_MOVED_H_
#define GRAPHJIT_COMPILER_ANALYSIS_BYTES_MOVED_H_

#include <string>
#include <vector>

#include "compiler/lower/kernel_ir.h"
#include "ir/graph.h"

namespace graphjit::compiler {

struct Traffic {
  std::string name;  // the kernel's name, or `%id (op)` for a graph node
  ir::SymExpr bytes_read;
  ir::SymExpr bytes_written;
  ir::SymExpr flops;  // matmul work under the counting rule of flops.h
};

struct TrafficReport {
  std::vector<Traffic> items;
  ir::SymExpr bytes_read, bytes_written, flops;  // totals
};

// Per fused kernel of a lowered program: every distinct buffer the kernel loads counts in
// full once (a kernel streams its inputs), plus the elements it stores. Inlined producers
// cost nothing here: fusion is what removes their traffic. A fused attention's scores
// scratch counts neither way: it is written and read back a block at a time, in cache.
TrafficReport ProgramTraffic(const Program& program);

// Per compute node of an unfused graph (sources excluded): its operands in full plus its
// result, i.e. the traffic an op-by-op executor such as the interpreter needs.
TrafficReport GraphTraffic(const ir::Graph& graph);

}  // namespace graphjit::compiler

#endif  // GRAPHJIT_COMPILER_ANALYSIS_BYTES_MOVED_H_
