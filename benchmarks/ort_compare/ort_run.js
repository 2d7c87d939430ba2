#!/usr/bin/env node
// Runs an ONNX model with ONNX Runtime (onnxruntime-node, fetched by
// scripts/fetch_models.sh) on .npy inputs: the peer graphjit is compared with.
//
//   node ort_run.js MODEL.onnx --input x=@x.npy [--input ...] [--output-dir DIR]
//        [--threads N] [--repeat N] [--opt-level disabled|basic|extended|all]
//        [--carry OUT=IN ...] [--profile FILE.json]
//
// Writes output i as DIR/outputI.npy (as graphjit-run does) and prints one JSON object:
// the outputs' names and shapes and, with --repeat N, the median (and min) milliseconds
// per call over N timed calls after one untimed warm-up call. --carry OUT=IN feeds output
// OUT of each call as input IN of the next (a stream's state, as Silero VAD's hn -> h). Inputs: .npy v1-3, C order,
// little-endian f4 / f8 / i8. --profile FILE (with --repeat) writes ONNX Runtime's own
// per-node times: each node's median microseconds over every call (the warm-up's too), in
// execution order, and their sum (where the peer spends a call, node by node, to read
// beside graphjit-dump --profile). Models with f64 inputs run at optimization level 'basic':
// at 'all' ONNX Runtime fuses x * sigmoid(x) into a QuickGelu that has no double kernel
// and refuses the model. Exit 1 with a message on any error.
'use strict';

const fs = require('fs');
const path = require('path');
const npy = require('./npy.js');

const USAGE = 'usage: ort_run.js MODEL.onnx --input NAME=@FILE.npy ... [--output-dir DIR] ' +
    '[--threads N] [--repeat N] [--opt-level disabled|basic|extended|all] [--carry OUT=IN] ' +
    '[--profile FILE.json]';

function fail(message) {
  process.stderr.write(`ort_run: ${message}\n`);
  process.exit(1);
}

function parseArgs(argv) {
  const args = {model: null, inputs: [], outputDir: null, threads: 1, repeat: 0, optLevel: null,
                carry: [], profile: null};
  const value = (i) => {
    if (i + 1 >= argv.length) fail(`${argv[i]} needs a value\n${USAGE}`);
    return argv[i + 1];
  };
  const count = (flag, text, min) => {
    const n = Number(text);
    if (!Number.isInteger(n) || n < min) {
      fail(`${flag}: expected an integer >= ${min}, got '${text}'`);
    }
    return n;
  };
  for (let i = 0; i < argv.length; ++i) {
    const a = argv[i];
    if (a === '--input') {
      const m = /^([^=]+)=@(.+)$/.exec(value(i++));
      if (!m) fail(`--input: expected NAME=@FILE.npy, got '${argv[i]}'`);
      args.inputs.push({name: m[1], file: m[2]});
    } else if (a === '--carry') {
      const m = /^([^=]+)=([^=]+)$/.exec(value(i++));
      if (!m) fail(`--carry: expected OUT=IN, got '${argv[i]}'`);
      args.carry.push({from: m[1], to: m[2]});
    } else if (a === '--profile') {
      args.profile = value(i++);
    } else if (a === '--output-dir') {
      args.outputDir = value(i++);
    } else if (a === '--threads') {
      args.threads = count(a, value(i++), 1);
    } else if (a === '--repeat') {
      args.repeat = count(a, value(i++), 1);
    } else if (a === '--opt-level') {
      args.optLevel = value(i++);
      if (!['disabled', 'basic', 'extended', 'all'].includes(args.optLevel)) {
        fail(`--opt-level: expected disabled, basic, extended or all, got '${args.optLevel}'`);
      }
    } else if (a === '-h' || a === '--help') {
      process.stdout.write(USAGE + '\n');
      process.exit(0);
    } else if (a.startsWith('--')) {
      fail(`unknown flag ${a}\n${USAGE}`);
    } else if (args.model === null) {
      args.model = a;
    } else {
      fail(`a second model '${a}'\n${USAGE}`);
    }
  }
  if (args.model === null) fail(`no model given\n${USAGE}`);
  if (args.profile !== null && args.repeat === 0) {
    fail('--profile needs --repeat N: the per-node medians are over the timed calls');
  }
  return args;
}

// onnxruntime-node from the fetched prefix (GRAPHJIT_FETCH_DIR, as scripts/fetch_models.sh),
// else wherever node's own resolution finds it.
function loadOrt() {
  const fetched = process.env.GRAPHJIT_FETCH_DIR ||
      path.join(__dirname, '..', '..', 'third_party', 'fetched');
  const candidates = [path.join(fetched, 'onnxruntime-node', 'node_modules', 'onnxruntime-node'),
                      'onnxruntime-node'];
  for (const c of candidates) {
    try {
      return require(c);
    } catch (e) {
      if (e.code !== 'MODULE_NOT_FOUND') fail(`loading ${c}: ${e.message}`);
    }
  }
  fail(`onnxruntime-node not found in ${fetched}/onnxruntime-node: run scripts/fetch_models.sh`);
}

// ONNX Runtime's profile (a Chrome trace: one event per node and call) as each node's median
// kernel time over the calls, in the order the nodes first ran.
function summarizeProfile(trace) {
  const nodes = new Map();
  for (const e of trace) {
    if (e.cat !== 'Node' || !e.name.endsWith('_kernel_time')) continue;
    const name = e.name.slice(0, -'_kernel_time'.length);
    if (!nodes.has(name)) nodes.set(name, {op: (e.args && e.args.op_name) || '', us: []});
    nodes.get(name).us.push(e.dur);
  }
  const out = [];
  for (const [name, n] of nodes) {
    out.push({name: name, op: n.op, median_us: median(n.us), calls: n.us.length});
  }
  return {nodes: out, total_us: out.reduce((a, n) => a + n.median_us, 0)};
}

function median(values) {
  const s = [...values].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  if (!fs.existsSync(args.model)) fail(`model ${args.model} not found (scripts/fetch_models.sh?)`);
  const ort = loadOrt();
  const feeds = {};
  let hasF64 = false;
  for (const {name, file} of args.inputs) {
    let t;
    try {
      t = npy.read(file);
    } catch (e) {
      fail(e.message);
    }
    hasF64 = hasF64 || t.type === 'float64';
    feeds[name] = new ort.Tensor(t.type, t.data, t.shape);
  }
  const options = {
    intraOpNumThreads: args.threads,
    interOpNumThreads: 1,
    executionMode: 'sequential',
    graphOptimizationLevel: args.optLevel || (hasF64 ? 'basic' : 'all'),
  };
  // The raw trace goes to a scratch directory and is summarized into --profile's file.
  let traceDir = null;
  if (args.profile !== null) {
    traceDir = fs.mkdtempSync(path.join(require('os').tmpdir(), 'ort_run_profile_'));
    options.enableProfiling = true;
    options.profileFilePrefix = path.join(traceDir, 'trace');
  }
  let model;
  try {
    model = await ort.InferenceSession.create(args.model, options);
  } catch (e) {
    fail(`loading ${args.model}: ${e.message}`);
  }
  for (const name of Object.keys(feeds)) {
    if (!model.inputNames.includes(name)) {
      fail(`--input ${name}: ${args.model} has no such input (its inputs: ${model.inputNames})`);
    }
  }
  for (const name of model.inputNames) {
    if (!(name in feeds)) fail(`model input '${name}' not given (--input ${name}=@FILE.npy)`);
  }
  for (const {from, to} of args.carry) {
    if (!model.outputNames.includes(from) || !model.inputNames.includes(to)) {
      fail(`--carry ${from}=${to}: expected an output (${model.outputNames}) and an input ` +
           `(${model.inputNames})`);
    }
  }
  const run = async () => {
    let out;
    try {
      out = await model.run(feeds);
    } catch (e) {
      fail(`running ${args.model}: ${e.message}`);
    }
    for (const {from, to} of args.carry) feeds[to] = out[from];
    return out;
  };
  const outputs = await run();
  const report = {
    model: args.model,
    threads: args.threads,
    opt_level: options.graphOptimizationLevel,
    outputs: model.outputNames.map((n) => ({name: n, shape: outputs[n].dims.map(Number)})),
  };
  if (args.repeat > 0) {
    const ms = [];
    for (let i = 0; i < args.repeat; ++i) {
      const start = process.hrtime.bigint();
      await run();
      ms.push(Number(process.hrtime.bigint() - start) / 1e6);
    }
    report.repeat = args.repeat;
    report.median_ms = median(ms);
    report.min_ms = Math.min(...ms);
  }
  if (traceDir !== null) {
    model.endProfiling();
    const traces = fs.readdirSync(traceDir).filter((f) => f.endsWith('.json'));
    if (traces.length !== 1) fail(`ONNX Runtime wrote ${traces.length} profiles to ${traceDir}`);
    let summary;
    try {
      summary = summarizeProfile(JSON.parse(fs.readFileSync(path.join(traceDir, traces[0]))));
    } catch (e) {
      fail(`reading ONNX Runtime's profile: ${e.message}`);
    }
    fs.rmSync(traceDir, {recursive: true, force: true});
    try {
      fs.writeFileSync(args.profile, JSON.stringify(summary, null, 1) + '\n');
    } catch (e) {
      fail(`--profile ${args.profile}: ${e.message}`);
    }
    report.profile = args.profile;
    report.profile_total_ms = summary.total_us / 1000;
  }
  if (args.outputDir !== null) {
    fs.mkdirSync(args.outputDir, {recursive: true});
    model.outputNames.forEach((n, i) => {
      const t = outputs[n];
      npy.write(path.join(args.outputDir, `output${i}.npy`), t.type, t.data, t.dims.map(Number));
    });
  }
  process.stdout.write(JSON.stringify(report) + '\n');
}

main().catch((e) => fail(e.stack || String(e)));
