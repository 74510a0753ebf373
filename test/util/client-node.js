// Jest's module loader cannot read ESM packages, and @kubernetes/client-node 1.x is one.
// Node 20 itself can require() it, so jest maps the package to this file, which loads the
// real package through Node's own loader: the tests run the library's code unchanged.
//
// Its exports are handed on as a plain object marked __esModule, not as the module namespace:
// the sources' `await import('@kubernetes/client-node')` compiles to TypeScript's __importStar,
// which returns such an object as it is, and otherwise copies the namespace's 842 exports into
// a new object with a getter each, at every call (once per request in src/cli/_rest.ts): a
// quarter of the CPU of the suites that talk to the fake API server. The same classes and
// functions either way.
const namespace = process.getBuiltinModule('module').createRequire(__filename)('@kubernetes/client-node');
module.exports = { ...namespace, __esModule: true };
