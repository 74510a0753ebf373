// Jest's module loader cannot read ESM packages, and @kubernetes/client-node 1.x is one.
// Node 20 itself can require() it, so jest maps the package to this file, which loads the
// real package through Node's own loader: the tests run the library's code unchanged.
module.exports = process.getBuiltinModule('module').createRequire(__filename)('@kubernetes/client-node');
