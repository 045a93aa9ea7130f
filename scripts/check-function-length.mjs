#!/usr/bin/env node
/**
 * Lists every function in src/**\/*.ts (declarations, methods, accessors, constructors, arrow
 * functions and function expressions) whose body spans more than MAX_LINES lines, as
 * `file:line name length`, and exits 1 if there is any. A long function is a list of steps
 * that deserve names: split it into named stages rather than raise the limit.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';

const MAX_LINES = 100;
const ROOT = join(import.meta.dirname, '..');
const SRC = join(ROOT, 'src');

function* typeScriptFiles(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* typeScriptFiles(path);
    else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) yield path;
  }
}

/** A readable name: the declared one, else what the function is assigned or passed to. */
function nameOf(node, source) {
  if (node.name) {
    const own = node.name.getText(source);
    const owner = node.parent && ts.isClassLike(node.parent) ? node.parent.name?.getText(source) : null;
    return owner ? `${owner}.${own}` : own;
  }
  if (ts.isConstructorDeclaration(node)) return `${node.parent.name?.getText(source) ?? 'class'}.constructor`;
  const parent = node.parent;
  if (
    ts.isVariableDeclaration(parent) ||
    ts.isPropertyAssignment(parent) ||
    ts.isPropertyDeclaration(parent)
  ) {
    return parent.name.getText(source);
  }
  if (ts.isCallExpression(parent)) return `<callback of ${parent.expression.getText(source).slice(0, 60)}>`;
  return '<anonymous>';
}

function isFunction(node) {
  return (
    ts.isFunctionDeclaration(node) ||
    ts.isMethodDeclaration(node) ||
    ts.isConstructorDeclaration(node) ||
    ts.isGetAccessorDeclaration(node) ||
    ts.isSetAccessorDeclaration(node) ||
    ts.isArrowFunction(node) ||
    ts.isFunctionExpression(node)
  );
}

function longFunctions(file) {
  const text = readFileSync(file, 'utf8');
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const found = [];
  const lineOf = (pos) => source.getLineAndCharacterOfPosition(pos).line + 1;
  const visit = (node) => {
    if (isFunction(node) && node.body) {
      const first = lineOf(node.body.getStart(source));
      const length = lineOf(node.body.getEnd()) - first + 1;
      if (length > MAX_LINES) {
        found.push({ line: lineOf(node.getStart(source)), name: nameOf(node, source), length });
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

let count = 0;
for (const file of typeScriptFiles(SRC)) {
  for (const f of longFunctions(file)) {
    count += 1;
    console.log(`${relative(ROOT, file)}:${f.line} ${f.name} ${f.length}`);
  }
}
if (count > 0) {
  console.error(`${count} function(s) over ${MAX_LINES} lines: split them into named steps.`);
  process.exit(1);
}
