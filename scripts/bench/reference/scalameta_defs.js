// Scala definitions from scalameta (the npm package scalameta-parsers), for
// scripts/bench/outline_recall.py: an independent reference (not tree-sitter) for Scala outlines.
//
// Usage: NODE_PATH=DIR/node_modules node scalameta_defs.js FILE...
// Prints one JSON line per file: {"path", "errors" (0, or 1 when no dialect parses it), "dialect",
// "defs": [{"kind", "name", "line", "end"}]}; "line" is the line of the definition's name (as
// ctags gives it), "end" the line of its last character. Scala 2.13 is tried first, then Scala 3.
'use strict';
const fs = require('fs');
const { parseSource } = require('scalameta-parsers');

// scalameta tree type -> kind. Not listed: vals, vars, types, enum cases, secondary constructors
// (``def this``), given aliases (``given x: T = ...``, a value); an extension group has no name,
// its methods are listed.
const KINDS = {
  'Defn.Class': 'class',
  'Defn.Trait': 'trait',
  'Defn.Object': 'object',
  'Pkg.Object': 'object',
  'Defn.Enum': 'enum',
  'Defn.Given': 'object',
  'Defn.Def': 'method',
  'Decl.Def': 'method',
  'Defn.Macro': 'method',
};

function lineStarts(text) {
  const starts = [0];
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) === 10) starts.push(i + 1);
  return starts;
}

function lineOf(starts, offset) {
  let lo = 0, hi = starts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (starts[mid] <= offset) lo = mid; else hi = mid - 1;
  }
  return lo + 1;
}

function collect(node, starts, defs) {
  if (Array.isArray(node)) {
    for (const item of node) collect(item, starts, defs);
    return;
  }
  if (node === null || typeof node !== 'object') return;
  const kind = KINDS[node.type];
  if (kind && node.name && node.pos) {
    const name = node.name.value;
    defs.push({
      kind,
      name: name === '' ? '<anonymous>' : name,
      line: lineOf(starts, (name === '' ? node.pos : node.name.pos).start),
      end: lineOf(starts, Math.max(node.pos.start, node.pos.end - 1)),
    });
  }
  for (const key of Object.keys(node)) if (key !== 'pos') collect(node[key], starts, defs);
}

for (const path of process.argv.slice(2)) {
  const text = fs.readFileSync(path, 'utf8');
  let tree = null, dialect = null;
  for (const d of ['Scala213', 'Scala3']) {
    const parsed = parseSource(text, { dialect: d });
    if (!parsed.error) { tree = parsed; dialect = d; break; }
  }
  const defs = [];
  if (tree) collect(tree, lineStarts(text), defs);
  console.log(JSON.stringify({ path, errors: tree ? 0 : 1, dialect, defs }));
}
