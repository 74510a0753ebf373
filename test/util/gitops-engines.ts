/**
 * The GitOps engines' health evaluation, in the engines' own languages, for tests: Flux's CEL
 * health checks (`healthCheckExprs`) as fluxcd/pkg `runtime/cel` evaluates them, with
 * @bufbuild/cel; Argo CD's Lua health scripts as argo-cd `util/lua` runs them, with fengari.
 */
import { celEnv, celError, isCelError, parse, plan } from '@bufbuild/cel';

// fengari (a Lua 5.3 VM in JavaScript) ships no types: this is the little of it the tests use.
interface Fengari {
  lua: any;
  lauxlib: any;
  lualib: any;
  to_luastring(s: string): Uint8Array;
}
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { lua, lauxlib, lualib, to_luastring }: Fengari = require('fengari');

// ---------------------------------------------------------------------------------------------
// Flux

/** A `healthCheckExprs` entry. */
export interface CelHealthCheck {
  readonly apiVersion: string;
  readonly kind: string;
  readonly inProgress?: string;
  readonly failed?: string;
  readonly current: string;
}

/** kstatus's verdicts that a CEL health check gives. */
export type FluxStatus = 'InProgress' | 'Failed' | 'Current';

/** A JSON value as cel-go sees an unstructured object: maps, lists, int64 for whole numbers. */
function toCel(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(toCel);
  if (value !== null && typeof value === 'object') return new Map(Object.entries(value).map(([k, v]) => [k, toCel(v)]));
  if (typeof value === 'number' && Number.isInteger(value)) return BigInt(value);
  return value;
}

/** The top-level fields of a Kubernetes object: Flux binds each one that is there to a variable. */
const TOP_LEVEL = ['apiVersion', 'kind', 'metadata', 'spec', 'status'];

const env = celEnv();

/**
 * Evaluates one expression with the object's top-level fields as variables, as Flux does. A field
 * the object lacks is an undefined variable, on which cel-go fails (`no such attribute(s)`) even
 * inside `has()`, while `||` and `&&` absorb the failure when their other side decides: the
 * binding of an error value reproduces both (@bufbuild/cel alone would take `has()` of an
 * undefined variable as false, and hide the failure Flux shows).
 *
 * @throws the evaluation error, as Flux reports it
 */
export function evaluateCel(expression: string, object: { [field: string]: unknown }): boolean {
  const bindings = Object.fromEntries(TOP_LEVEL.map(field => [field,
    field in object ? toCel(object[field]) : celError(`no such attribute(s): ${field}`)]));
  const program = plan(env, parse(expression)) as unknown as (b: object) => unknown;
  const result = program(bindings);
  if (isCelError(result)) throw new Error(`failed to evaluate the CEL expression '${expression}': ${result.message}`);
  if (typeof result !== 'boolean') throw new Error(`failed to evaluate CEL expression as boolean: '${expression}'`);
  return result;
}

/**
 * An object's status by a Kustomization's health checks, as Flux's StatusEvaluator (RFC 0009) gives
 * it: in progress when `status.observedGeneration` is there and differs from `metadata.generation`;
 * else the first of `inProgress`, `failed`, `current` that is true; else in progress.
 *
 * @throws when no check is for the object's kind, or an expression fails
 */
export function fluxHealth(checks: readonly CelHealthCheck[], object: any): FluxStatus {
  const check = checks.find(c => c.apiVersion === object.apiVersion && c.kind === object.kind);
  if (!check) throw new Error(`no health check for ${object.apiVersion} ${object.kind}`);
  const observed = object.status?.observedGeneration;
  const generation = object.metadata?.generation;
  if (observed !== undefined && generation !== undefined && observed !== generation) return 'InProgress';
  const order: Array<[string | undefined, FluxStatus]> = [[check.inProgress, 'InProgress'], [check.failed, 'Failed'], [check.current, 'Current']];
  for (const [expression, status] of order) {
    if (expression && evaluateCel(expression, object)) return status;
  }
  return 'InProgress';
}

// ---------------------------------------------------------------------------------------------
// Argo CD

/** Pushes a JSON value onto the Lua stack: objects as tables, arrays as tables indexed from 1. */
function pushLua(L: unknown, value: unknown): void {
  if (value === null || value === undefined) {
    lua.lua_pushnil(L);
  } else if (typeof value === 'boolean') {
    lua.lua_pushboolean(L, value);
  } else if (typeof value === 'number') {
    if (Number.isInteger(value)) lua.lua_pushinteger(L, value);
    else lua.lua_pushnumber(L, value);
  } else if (typeof value === 'string') {
    lua.lua_pushstring(L, to_luastring(value));
  } else if (Array.isArray(value)) {
    lua.lua_createtable(L, value.length, 0);
    value.forEach((item, i) => {
      pushLua(L, item);
      lua.lua_rawseti(L, -2, i + 1);
    });
  } else if (typeof value === 'object') {
    const entries = Object.entries(value);
    lua.lua_createtable(L, 0, entries.length);
    for (const [key, item] of entries) {
      pushLua(L, item);
      lua.lua_setfield(L, -2, to_luastring(key));
    }
  } else {
    throw new Error(`cannot convert ${typeof value} to Lua`);
  }
}

/** A string field of the table on top of the Lua stack. */
function readField(L: unknown, field: string): string | undefined {
  lua.lua_getfield(L, -1, to_luastring(field));
  const value = lua.lua_isnil(L, -1) ? undefined : lua.lua_tojsstring(L, -1);
  lua.lua_pop(L, 1);
  return value;
}

/** An Argo CD health verdict. */
export interface ArgoHealth {
  readonly status?: string;
  readonly message?: string;
}

/**
 * Runs a health script as Argo CD does: only the `package`, base and `table` libraries opened (no
 * `string`, `os` or `io`: argo-cd's runLua opens these and a safe `os`), `obj` the live object, the
 * result a table with `status` and `message`.
 *
 * @throws on a Lua error, or when the script returns no table
 */
export function runHealthLua(script: string, obj: object): ArgoHealth {
  const L = lauxlib.luaL_newstate();
  for (const [name, open] of [[lualib.LUA_LOADLIBNAME, lualib.luaopen_package], ['_G', lualib.luaopen_base], [lualib.LUA_TABLIBNAME, lualib.luaopen_table]]) {
    lauxlib.luaL_requiref(L, to_luastring(name), open, 1);
    lua.lua_pop(L, 1);
  }
  pushLua(L, obj);
  lua.lua_setglobal(L, to_luastring('obj'));
  if (lauxlib.luaL_loadstring(L, to_luastring(script)) !== lua.LUA_OK || lua.lua_pcall(L, 0, 1, 0) !== lua.LUA_OK) {
    throw new Error(`Lua error: ${lua.lua_tojsstring(L, -1)}`);
  }
  if (lua.lua_type(L, -1) !== lua.LUA_TTABLE) throw new Error(`the script returned a ${lua.lua_typename(L, lua.lua_type(L, -1))}`);
  return { status: readField(L, 'status'), message: readField(L, 'message') };
}
